package a2aserve

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

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
	at := taskTurn(sess.Messages, t)
	if at == 0 {
		return fmt.Errorf("%w: the turn of task %s is no longer in its session", errForkTask, ref)
	}
	if _, err := session.Fork(ctx, sessions, src, dst, at); err != nil {
		return fmt.Errorf("%w: %v", errForkTask, err)
	}
	e.log.Info("a2a: new context from a task", "task", ref, "context", rc.ContextID, "turns", at)
	return nil
}

// taskTurn returns the number of the turn of msgs that task t ran: the
// latest turn that begins with t's first message and ends with t's
// answer (its "answer" artifact); 0 when none does.
func taskTurn(msgs []llm.Message, t *a2a.Task) int {
	var first string
	for _, m := range t.History {
		if m != nil && m.Role == a2a.MessageRoleUser {
			if lm, err := toLLM(m); err == nil && len(lm) > 0 {
				first = lm[0].Text()
			}
			break
		}
	}
	var answer string
	for _, a := range t.Artifacts {
		if a != nil && a.Name == "answer" {
			for _, p := range a.Parts {
				if tp, ok := p.(a2a.TextPart); ok {
					answer += tp.Text
				}
			}
		}
	}
	starts := session.TurnStarts(msgs)
	for k := len(starts); k >= 1; k-- {
		lo, hi := starts[k-1], len(msgs)
		if k < len(starts) {
			hi = starts[k]
		}
		if msgs[lo].Text() != first {
			continue
		}
		for i := hi - 1; i > lo; i-- {
			if msgs[i].Role == llm.RoleAssistant {
				if msgs[i].Text() == answer {
					return k
				}
				break
			}
		}
	}
	return 0
}
