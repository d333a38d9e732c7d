package a2aserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
)

// A new context from a task. A2A links a message to earlier tasks with
// referenceTaskIds ("task refinements", life of a task); a message that
// starts a task in a context of its own (no contextId, or one with no
// session yet) while referencing a completed task of another context
// branches that task's conversation: the new context's session is a fork
// (session.Fork) of the referenced task's session up to and including
// its turn, so the new task continues from the task's answer, not from
// what its context said after it. A message in the task's own context, or
// in a context that already has a session, is a refinement: the
// reference changes nothing. The first reference is used.
//
// The fork point is exact: a task that completes records the number of
// its turn in its session (sessionTurnKey, in its MetadataKey metadata,
// kept with the task wherever the task store keeps it), found when the
// turn is stored (placeTurn). At the fork, that turn must still begin
// with the task's first message and end with its answer (else the session
// was replaced and the task is refused). A task stored before turns were
// recorded has no number: its turn is found by content, the latest turn
// that begins with the task's first message and ends with its answer,
// which picks the later of two identical turns.

// sessionTurnKey is the key, in the MetadataKey metadata of a completed
// task, of the number of the session turn the task ran (1 for the first).
const sessionTurnKey = "session_turn"

// errForkTask is the error of a message whose reference cannot be
// branched from (the task is unknown, not the principal's, not
// completed, or its turn is no longer in its session).
var errForkTask = errors.New("a2aserve: cannot start a new context from the referenced task")

// forkFrom makes the session of a new task's context (dst) a branch of
// the task its message references, when it is one (see above).
func (e *executor) forkFrom(ctx context.Context, rc *a2asrv.RequestContext, dst string) error {
	if rc.Message == nil || len(rc.Message.ReferenceTasks) == 0 || e.agent.Store == nil {
		return nil
	}
	ref := rc.Message.ReferenceTasks[0]
	principal, _ := host.PrincipalFrom(ctx)
	if owner, ok := e.tasks.owner(ctx, ref); !ok || owner != principal {
		return fmt.Errorf("%w: task %s not found", errForkTask, ref)
	}
	t, err := e.tasks.Get(ctx, ref)
	if err != nil {
		return fmt.Errorf("%w: task %s: %v", errForkTask, ref, err)
	}
	if t.ContextID == rc.ContextID {
		return nil // a refinement in the task's own context
	}
	sessions := host.Sessions(ctx, e.agent.Store)
	if _, err := sessions.LoadView(ctx, dst); err == nil {
		return nil // a context that has its history already
	} else if !errors.Is(err, session.ErrNotFound) {
		return err
	}
	if t.Status.State != a2a.TaskStateCompleted {
		return fmt.Errorf("%w: task %s is %s, not completed", errForkTask, ref, t.Status.State)
	}
	src := SessionID(host.SessionName(ctx, t.ContextID))
	sess, err := sessions.Load(ctx, src)
	if err != nil {
		return fmt.Errorf("%w: the session of task %s: %v", errForkTask, ref, err)
	}
	at, recorded := recordedTurn(t)
	switch {
	case !recorded:
		at = taskTurn(sess.Messages, t) // a task stored before turns were recorded
	case !isTaskTurn(sess.Messages, sess.Turns, at, t):
		at = 0
	}
	if at == 0 {
		return fmt.Errorf("%w: the turn of task %s is no longer in its session", errForkTask, ref)
	}
	if _, err := session.Fork(ctx, sessions, src, dst, at); err != nil {
		return fmt.Errorf("%w: %v", errForkTask, err)
	}
	e.log.Info("a2a: new context from a task", "task", ref, "context", rc.ContextID, "turns", at)
	return nil
}

// recordedTurn returns the number of the session turn task t ran, as
// recorded when it completed (sessionTurnKey); false for a task without
// one. The number reads back as an int from the tasks kept in memory and
// as a float64 from those kept as JSON.
func recordedTurn(t *a2a.Task) (int, bool) {
	meta, _ := t.Metadata[MetadataKey].(map[string]any)
	switch n := meta[sessionTurnKey].(type) {
	case int:
		return n, n > 0
	case int64:
		return int(n), n > 0
	case float64:
		return int(n), n >= 1 && n == float64(int(n))
	case json.Number:
		v, err := n.Int64()
		return int(v), err == nil && v > 0
	}
	return 0, false
}

// turnMeta returns the MetadataKey value of a finished turn, turn of its
// session (0 when unknown, and then not recorded).
func turnMeta(resp *agent.Response, turn int) map[string]any {
	m := responseMeta(resp)
	if turn > 0 {
		m[sessionTurnKey] = turn
	}
	return m
}

// turnCount returns the number of turns session sid holds in st (0 for
// none yet), -1 when it cannot be read (or there is no store).
func turnCount(ctx context.Context, st session.Store, sid string) int {
	if st == nil {
		return -1
	}
	sess, err := st.LoadView(ctx, sid)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return 0
	case err != nil:
		return -1
	}
	return sess.Turns
}

// placeTurn returns the number, in session sid, of the turn that input
// began and resp ended, just stored; before is the session's turn count
// (turnCount) read before the turn ran. The turn is one of the turns
// after before: the only one when nothing else was appended meanwhile
// (turns of one session run one at a time on a server with records, and
// usually do), else the first of them holding the same messages. 0 when
// it cannot be told (a store that cannot be read, a turn not stored).
func placeTurn(ctx context.Context, st session.Store, sid string, before int, input []llm.Message, resp *agent.Response) int {
	if st == nil || before < 0 || resp == nil {
		return 0
	}
	after := turnCount(ctx, st, sid)
	switch {
	case after == before+1:
		return after
	case after <= before:
		return 0 // not stored
	}
	sess, err := st.Load(ctx, sid)
	if err != nil {
		return 0
	}
	starts := session.TurnStarts(sess.Messages)
	if len(starts) != sess.Turns {
		return 0 // turns that do not each begin with a user message: not forkable but at the last
	}
	want := make([]llm.Message, 0, len(input)+len(resp.Messages))
	want = append(append(want, input...), resp.Messages...)
	for k := before + 1; k <= sess.Turns; k++ {
		lo, hi := starts[k-1], len(sess.Messages)
		if k == 1 {
			lo = 0
		}
		if k < len(starts) {
			hi = starts[k]
		}
		if sameMessages(sess.Messages[lo:hi], want) {
			return k
		}
	}
	return 0
}

// sameMessages reports whether a and b hold the same messages: roles,
// texts and tool call ids.
func sameMessages(a, b []llm.Message) bool {
	return slices.EqualFunc(a, b, func(x, y llm.Message) bool {
		return x.Role == y.Role && x.ToolCallID == y.ToolCallID && x.Text() == y.Text() && len(x.Content) == len(y.Content)
	})
}

// taskTurn returns the number of the turn of msgs that task t ran, found
// by content (for a task without a recorded turn): the latest turn that
// begins with t's first message and ends with t's answer; 0 when none
// does.
func taskTurn(msgs []llm.Message, t *a2a.Task) int {
	first, answer := taskTexts(t)
	starts := session.TurnStarts(msgs)
	for k := len(starts); k >= 1; k-- {
		if turnMatches(msgs, starts, k, first, answer) {
			return k
		}
	}
	return 0
}

// isTaskTurn reports whether turn k of a history of turns turns begins
// with task t's first message and ends with its answer. In a history
// whose turns do not each begin with a user message, only the last turn
// can be told (and forked at: session.Fork).
func isTaskTurn(msgs []llm.Message, turns, k int, t *a2a.Task) bool {
	starts := session.TurnStarts(msgs)
	if len(starts) != turns && k == turns {
		k = len(starts)
	}
	if k < 1 || k > len(starts) || len(starts) != turns && k != len(starts) {
		return false
	}
	first, answer := taskTexts(t)
	return turnMatches(msgs, starts, k, first, answer)
}

// taskTexts returns the text of task t's first user message and of its
// answer (its "answer" artifact).
func taskTexts(t *a2a.Task) (first, answer string) {
	for _, m := range t.History {
		if m != nil && m.Role == a2a.MessageRoleUser {
			if lm, err := toLLM(m); err == nil && len(lm) > 0 {
				first = lm[0].Text()
			}
			break
		}
	}
	for _, a := range t.Artifacts {
		if a != nil && a.Name == "answer" {
			for _, p := range a.Parts {
				if tp, ok := p.(a2a.TextPart); ok {
					answer += tp.Text
				}
			}
		}
	}
	return first, answer
}

// turnMatches reports whether turn k of msgs (its turns beginning at
// starts) begins with the text first and its last assistant message
// says answer.
func turnMatches(msgs []llm.Message, starts []int, k int, first, answer string) bool {
	lo, hi := starts[k-1], len(msgs)
	if k < len(starts) {
		hi = starts[k]
	}
	if msgs[lo].Text() != first {
		return false
	}
	for i := hi - 1; i > lo; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			return msgs[i].Text() == answer
		}
	}
	return false
}
