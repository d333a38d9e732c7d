package serve_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// aguiApprover runs AG-UI runs as a durable runner's worker does, with
// the calls that need approval waiting in the runner (as in a workflow's
// state) and shown by AGUIEvents.ApprovalRequired: a serve.RemoteRunner
// with serve.RemoteAGUIApprovals.
type aguiApprover struct {
	serve.InProcess
	t      *testing.T
	store  *memstore.Store
	script func() llm.Model

	mu      sync.Mutex
	waiting []*aguiWait
	asked   []string // the runs PendingAGUI was asked about
	wg      sync.WaitGroup
}

type aguiWait struct {
	key string
	a   serve.RemoteApproval
	ch  chan tool.Decision
}

// runApprover is the tool.Approver of one run: each call waits in r,
// shown first by the run's interrupt event.
type runApprover struct {
	r    *aguiApprover
	key  string
	show func(call tool.Call)
}

func (a runApprover) Approve(ctx context.Context, call tool.Call) (tool.Decision, error) {
	w := &aguiWait{key: a.key, a: serve.RemoteApproval{CallID: call.ID, Tool: call.Name, Input: call.Input, Since: time.Now()}, ch: make(chan tool.Decision, 1)}
	a.show(call)
	a.r.mu.Lock()
	a.r.waiting = append(a.r.waiting, w)
	a.r.mu.Unlock()
	select {
	case d := <-w.ch:
		return d, nil
	case <-ctx.Done():
		return tool.Decision{}, ctx.Err()
	}
}

func (r *aguiApprover) StartRemote(_ context.Context, t serve.RemoteTurn) error {
	if t.AGUI == nil {
		return fmt.Errorf("not an AG-UI run")
	}
	var mu sync.Mutex // the events: the turn's updates and its approver's
	n := 0
	ev := serve.NewAGUIEvents(*t.AGUI, func(p string) string { n++; return fmt.Sprintf("%s%s_%d", p, t.TurnID, n) })
	log := &runlog.Log{Records: r.store}
	write := func() {
		if err := log.AppendBatch(context.Background(), t.AGUI.Run, ev.Take(), false); err != nil {
			r.t.Error(err)
		}
	}
	show := func(call tool.Call) {
		mu.Lock()
		defer mu.Unlock()
		ev.ApprovalRequired(call.ID, call.Name, call.Input)
		write()
	}
	a, err := agent.New(r.script(), agent.Config{Name: t.Agent, Tools: []tool.Tool{addTool(tool.WithApproval())}, Store: session.Scoped(r.store, t.Owner),
		Retry: middleware.RetryConfig{MaxAttempts: 1}, NewID: func() string { return t.TurnID }, Approver: runApprover{r, t.AGUI.Key, show}})
	if err != nil {
		return err
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		resp, runErr := a.RunStream(context.Background(), t.Input, &agent.RunOptions{SessionID: t.SessionID}).Each(func(u agent.Update) bool {
			mu.Lock()
			defer mu.Unlock()
			if ev.Update(u) == nil {
				write()
			}
			return true
		})
		mu.Lock()
		last, _ := ev.End(resp, runErr, false)
		mu.Unlock()
		if err := serve.FinishAGUI(context.Background(), r.store, *t.AGUI, last); err != nil {
			r.t.Error(err)
		}
	}()
	return nil
}

func (r *aguiApprover) CancelRemote(context.Context, string) error { return nil }

func (r *aguiApprover) PendingAGUI(_ context.Context, key string) ([]serve.RemoteApproval, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, key)
	var out []serve.RemoteApproval
	for _, w := range r.waiting {
		if w.key == key {
			out = append(out, w.a)
		}
	}
	return out, nil
}

func (r *aguiApprover) DecideAGUI(_ context.Context, key, call string, d tool.Decision) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, w := range r.waiting {
		if w.key == key && w.a.CallID == call {
			r.waiting = slices.Delete(r.waiting, i, i+1)
			w.ch <- d
			return nil
		}
	}
	return approval.ErrUnknown
}

// aguiApproverReplica is a server with alice's and bob's tokens whose
// AG-UI runs r runs.
func aguiApproverReplica(t *testing.T, r *aguiApprover, tokens map[string]string) *env {
	t.Helper()
	e := &env{t: t, store: r.store, broker: &approval.Broker{Shared: host.Approvals(r.store), Poll: 5 * time.Millisecond}}
	a, err := agent.New(r.script(), agent.Config{Name: "calc", Store: r.store, Approver: e.broker, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "calc", Agent: a, Store: r.store})
	if err != nil {
		t.Fatal(err)
	}
	if e.h, err = serve.New(serve.Options{Agents: set, Broker: e.broker, Runner: r, Tokens: tokens}); err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.h)
	testwait.CloseOnCleanup(t, e.srv)
	return e
}

// TestRemoteAGUIApprovals: a call a remote AG-UI run waits on is shown on
// the run's stream as a run of the serving process shows it (the same
// events, the CUSTOM agcore.approval_required interrupt with the same
// id), listed by GET /v1/approvals on any server for the principal that
// started the run only (the runner not even asked about another's runs),
// and decided there by POST /v1/approvals/{id}; the run then ends with
// the call's result.
func TestRemoteAGUIApprovals(t *testing.T) {
	tokens := map[string]string{"alice": "a", "bob": "b"}
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "denied"}[approve], func(t *testing.T) {
			script := func() llm.Model {
				return llmtest.New(llmtest.Reply(llm.Text{Text: "Let me add."}, llmtest.Call("call_1", "add", `{"a":2,"b":3}`)), llmtest.Text("done"))
			}
			r := &aguiApprover{t: t, store: memstore.New(), script: script}
			a, b := aguiApproverReplica(t, r, tokens), aguiApproverReplica(t, r, tokens)
			untilInterrupt := func(ev map[string]any) bool { return ev["type"] == "CUSTOM" }

			resp := a.do("POST", "/agui/calc", aguiInput("run-1", "add"), "Authorization: Bearer a")
			evs := sseEvents(t, resp, untilInterrupt)
			resp.Body.Close()

			// A run of the serving process, of the same script: the same
			// events up to the interrupt, the same interrupt.
			local := newEnv(t, serve.Options{Tokens: tokens}, agentSpec{name: "calc", model: script(), tools: []tool.Tool{addTool(tool.WithApproval())}})
			lresp := local.do("POST", "/agui/calc", aguiInput("run-1", "add"), "Authorization: Bearer a")
			levs := sseEvents(t, lresp, untilInterrupt)
			if got, want := fmt.Sprint(eventTypes(evs)), fmt.Sprint(eventTypes(levs)); got != want || !strings.HasSuffix(got, "TOOL_CALL_END CUSTOM]") {
				t.Fatalf("remote events until the interrupt:\n%s\nin process:\n%s", got, want)
			}
			if got, want := fmt.Sprint(evs[len(evs)-1]), fmt.Sprint(levs[len(levs)-1]); got != want {
				t.Fatalf("remote interrupt %s, in process %s", got, want)
			}
			value := evs[len(evs)-1]["value"].(map[string]any)
			if evs[len(evs)-1]["name"] != "agcore.approval_required" || value["id"] != "run-1/call_1" || value["toolCallId"] != "call_1" || value["tool"] != "add" {
				t.Fatalf("the interrupt %v", evs[len(evs)-1])
			}
			decode(t, local.do("POST", "/v1/approvals/run-1/call_1", map[string]any{"approved": true}, "Authorization: Bearer a"))
			sseEvents(t, lresp, nil)
			lresp.Body.Close()

			var pending []any
			for deadline := time.Now().Add(10 * time.Second); len(pending) == 0; time.Sleep(2 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the remote call never appeared in /v1/approvals")
				}
				pending = decode(t, b.do("GET", "/v1/approvals", nil, "Authorization: Bearer a"))["data"].([]any)
			}
			p := pending[0].(map[string]any)
			if len(pending) != 1 || p["id"] != "run-1/call_1" || p["object"] != "approval" || p["tool"] != "add" || p["call_id"] != "call_1" ||
				p["arguments"] != `{"a":2,"b":3}` || p["agent"] != "calc" || p["run"] != "run-1" || p["created"] == float64(0) {
				t.Fatalf("pending %v", pending)
			}
			r.mu.Lock()
			r.asked = nil
			r.mu.Unlock()
			if got := decode(t, b.do("GET", "/v1/approvals", nil, "Authorization: Bearer b"))["data"].([]any); len(got) != 0 {
				t.Fatalf("bob sees alice's approvals: %v", got)
			}
			r.mu.Lock()
			asked := r.asked
			r.mu.Unlock()
			if len(asked) != 0 {
				t.Fatalf("bob's list asked the runner about %v", asked)
			}
			for _, bad := range []struct{ token, id string }{{"b", "run-1/call_1"}, {"a", "run-1/call_9"}, {"a", "nonsense"}, {"a", "other/call_1"}, {"a", "/call_1"}} {
				resp := b.do("POST", "/v1/approvals/"+bad.id, map[string]any{"approved": true}, "Authorization: Bearer "+bad.token)
				if code, _ := errCode(t, resp); resp.StatusCode != 404 || code != "approval_not_found" {
					t.Fatalf("%s deciding %s: %d %s", bad.token, bad.id, resp.StatusCode, code)
				}
			}
			got := decode(t, b.do("POST", "/v1/approvals/run-1/call_1", map[string]any{"approved": approve, "reason": "not today"}, "Authorization: Bearer a"))
			if got["approved"] != approve || got["id"] != "run-1/call_1" || got["object"] != "approval.decision" {
				t.Fatalf("decision answer %v", got)
			}
			rs := b.do("GET", fmt.Sprintf("/agui/calc/runs/run-1?after=%d", len(evs)-1), nil, "Authorization: Bearer a")
			rest := sseEvents(t, rs, nil)
			rs.Body.Close()
			var result string
			for _, ev := range rest {
				if ev["type"] == "TOOL_CALL_RESULT" {
					result, _ = ev["content"].(string)
				}
			}
			if len(rest) == 0 || rest[len(rest)-1]["type"] != "RUN_FINISHED" || approve && result != "5" || !approve && !strings.Contains(result, "not today") {
				t.Fatalf("the run after the decision (result %q): %v", result, eventTypes(rest))
			}
			resp = b.do("POST", "/v1/approvals/run-1/call_1", map[string]any{"approved": true}, "Authorization: Bearer a")
			if resp.StatusCode != 404 {
				t.Fatalf("a second decision: %d", resp.StatusCode)
			}
			resp.Body.Close()
			r.wg.Wait()
		})
	}
}
