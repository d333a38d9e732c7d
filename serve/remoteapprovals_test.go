package serve_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"reflect"
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
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// remoteCalls keeps the calls the turns of an approving runner wait on,
// as a durable runner's workflows do: in the runner, not in any serving
// process's Broker.
type remoteCalls struct {
	mu      sync.Mutex
	current string // the response of the turn running (one at a time)
	waiting []*remoteCall
	asked   []string // the responses PendingRemote was asked about
	// check makes DecideRemote refuse a decision whose content does not
	// fit (mcp.CheckDecision), as a durable turn's decision validator
	// does; decided are the decisions it took.
	check   bool
	decided []tool.Decision
}

type remoteCall struct {
	resp string
	a    serve.RemoteApproval
	ch   chan tool.Decision
}

func (c *remoteCalls) Approve(ctx context.Context, call tool.Call) (tool.Decision, error) {
	c.mu.Lock()
	w := &remoteCall{resp: c.current, a: serve.RemoteApproval{CallID: call.ID, Tool: call.Name, Input: call.Input, Since: time.Now()},
		ch: make(chan tool.Decision, 1)}
	c.waiting = append(c.waiting, w)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.waiting = slices.DeleteFunc(c.waiting, func(x *remoteCall) bool { return x == w })
	}()
	select {
	case d := <-w.ch:
		return d, nil
	case <-ctx.Done():
		return tool.Decision{}, ctx.Err()
	}
}

func (c *remoteCalls) PendingRemote(_ context.Context, id string) ([]serve.RemoteApproval, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, id)
	var out []serve.RemoteApproval
	for _, w := range c.waiting {
		if w.resp == id {
			out = append(out, w.a)
		}
	}
	return out, nil
}

func (c *remoteCalls) DecideRemote(_ context.Context, id, call string, d tool.Decision) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, w := range c.waiting {
		if w.resp == id && w.a.CallID == call {
			if c.check {
				if err := mcp.CheckDecision(w.a.Tool, w.a.Input, d); err != nil {
					return err // still waiting
				}
			}
			c.decided = append(c.decided, d)
			c.waiting = slices.Delete(c.waiting, i, i+1)
			w.ch <- d
			return nil
		}
	}
	return approval.ErrUnknown
}

// approvingRunner is elsewhere with the approvals of its turns
// (serve.RemoteApprovals).
type approvingRunner struct {
	*elsewhere
	*remoteCalls
}

func (r approvingRunner) StartRemote(ctx context.Context, t serve.RemoteTurn) error {
	r.remoteCalls.mu.Lock()
	r.remoteCalls.current = t.Log.ResponseID
	r.remoteCalls.mu.Unlock()
	return r.elsewhere.StartRemote(ctx, t)
}

// approvingReplica is a server with alice's and bob's tokens whose
// background turns r runs; its own Broker is shared through the store, as
// agcore serve's.
func approvingReplica(t *testing.T, r approvingRunner, tokens map[string]string) *env {
	t.Helper()
	e := &env{t: t, store: r.store, broker: &approval.Broker{Shared: host.Approvals(r.store), Poll: 5 * time.Millisecond}}
	a, err := agent.New(r.model, agent.Config{Name: "calc", Store: r.store, Approver: e.broker, Retry: middleware.RetryConfig{MaxAttempts: 1}})
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

// untilCall reads a stream's events to its function_call item's end.
func untilCall(ev map[string]any) bool {
	item, _ := ev["item"].(map[string]any)
	return ev["type"] == "response.output_item.done" && item["type"] == "function_call"
}

func eventTypes(evs []map[string]any) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i], _ = ev["type"].(string)
	}
	return out
}

// TestRemoteApprovals: the calls a RemoteRunner's turns wait on are
// listed by GET /v1/approvals on any server, in the shape of an
// in-process turn's (id RUN/CALL_ID), for the principal that started the
// turn only, and decided by POST /v1/approvals/{id} there; the stream
// shows the waiting call as an in-process turn's does.
func TestRemoteApprovals(t *testing.T) {
	tokens := map[string]string{"alice": "a", "bob": "b"}
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "denied"}[approve], func(t *testing.T) {
			script := func() *llmtest.Model {
				return llmtest.New(llmtest.Reply(llm.Text{Text: "Let me add."}, llmtest.Call("call_1", "add", `{"a":2,"b":3}`)), llmtest.Text("done"))
			}
			store := memstore.New()
			calls := &remoteCalls{}
			r := approvingRunner{&elsewhere{t: t, store: store, model: script(), tools: []tool.Tool{addTool(tool.WithApproval())}, approver: calls}, calls}
			a, b := approvingReplica(t, r, tokens), approvingReplica(t, r, tokens)

			resp := a.do("POST", "/v1/responses", map[string]any{"model": "calc", "input": "add", "background": true, "stream": true}, "Authorization: Bearer a")
			evs := sseEvents(t, resp, untilCall)
			resp.Body.Close()
			id := evs[0]["response"].(map[string]any)["id"].(string)
			run := strings.TrimPrefix(id, "resp_")

			// An in-process turn of the same script shows the same events
			// up to the waiting call.
			local := newEnv(t, serve.Options{Tokens: tokens}, agentSpec{name: "calc", model: script(), tools: []tool.Tool{addTool(tool.WithApproval())}})
			lresp := local.do("POST", "/v1/responses", map[string]any{"model": "calc", "input": "add", "background": true, "stream": true}, "Authorization: Bearer a")
			levs := sseEvents(t, lresp, untilCall)
			lresp.Body.Close()
			if got, want := strings.Join(eventTypes(evs), ","), strings.Join(eventTypes(levs), ","); got != want {
				t.Fatalf("remote events until the call:\n%s\nin process:\n%s", got, want)
			}
			var lp []any
			for deadline := time.Now().Add(10 * time.Second); len(lp) == 0; time.Sleep(2 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the in-process call never appeared in /v1/approvals")
				}
				lp = decode(t, local.do("GET", "/v1/approvals", nil, "Authorization: Bearer a"))["data"].([]any)
			}
			lid := lp[0].(map[string]any)["id"].(string)
			defer func() { // the in-process turn ends too
				decode(t, local.do("POST", "/v1/approvals/"+lid, map[string]any{"approved": true}, "Authorization: Bearer a"))
				lid := levs[0]["response"].(map[string]any)["id"].(string)
				rs := local.do("GET", "/v1/responses/"+lid+"?stream=true", nil, "Authorization: Bearer a")
				sseEvents(t, rs, nil)
				rs.Body.Close()
			}()

			var pending []any
			for deadline := time.Now().Add(10 * time.Second); len(pending) == 0; time.Sleep(2 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the remote call never appeared in /v1/approvals")
				}
				pending = decode(t, b.do("GET", "/v1/approvals", nil, "Authorization: Bearer a"))["data"].([]any)
			}
			p := pending[0].(map[string]any)
			if len(pending) != 1 || p["id"] != run+"/call_1" || p["object"] != "approval" || p["tool"] != "add" || p["call_id"] != "call_1" ||
				p["arguments"] != `{"a":2,"b":3}` || p["agent"] != "calc" || p["run"] != run || p["created"] == float64(0) {
				t.Fatalf("pending %v", pending)
			}
			// The shape of an in-process turn's: the same fields.
			if len(lp) != 1 || len(lp[0].(map[string]any)) != len(p) {
				t.Fatalf("in process %v, remote %v", lp, p)
			}
			calls.mu.Lock()
			calls.asked = nil
			calls.mu.Unlock()
			if got := decode(t, b.do("GET", "/v1/approvals", nil, "Authorization: Bearer b"))["data"].([]any); len(got) != 0 {
				t.Fatalf("bob sees alice's approvals: %v", got)
			}
			calls.mu.Lock()
			asked := calls.asked
			calls.mu.Unlock()
			if len(asked) != 0 {
				t.Fatalf("bob's list asked the runner about %v", asked)
			}
			for _, bad := range []struct{ token, id string }{{"b", run + "/call_1"}, {"a", run + "/call_9"}, {"a", "nonsense"}, {"a", "other_1/call_1"}} {
				resp := b.do("POST", "/v1/approvals/"+bad.id, map[string]any{"approved": true}, "Authorization: Bearer "+bad.token)
				if code, _ := errCode(t, resp); resp.StatusCode != 404 || code != "approval_not_found" {
					t.Fatalf("%s deciding %s: %d %s", bad.token, bad.id, resp.StatusCode, code)
				}
			}
			got := decode(t, b.do("POST", "/v1/approvals/"+run+"/call_1", map[string]any{"approved": approve, "reason": "not today"}, "Authorization: Bearer a"))
			if got["approved"] != approve || got["id"] != run+"/call_1" || got["object"] != "approval.decision" {
				t.Fatalf("decision answer %v", got)
			}
			rs := b.do("GET", "/v1/responses/"+id+"?stream=true", nil, "Authorization: Bearer a")
			all := sseEvents(t, rs, nil)
			rs.Body.Close()
			final := all[len(all)-1]["response"].(map[string]any)
			if all[len(all)-1]["type"] != "response.completed" || outputText(t, final) != "Let me add.done" {
				t.Fatalf("final %v", all[len(all)-1])
			}
			var result string
			for _, it := range final["output"].([]any) {
				if item := it.(map[string]any); item["type"] == "function_call_output" {
					result = item["output"].(string)
				}
			}
			if approve && result != "5" || !approve && !strings.Contains(result, "not today") {
				t.Fatalf("tool result %q", result)
			}
			resp = b.do("POST", "/v1/approvals/"+run+"/call_1", map[string]any{"approved": true}, "Authorization: Bearer a")
			if resp.StatusCode != 404 {
				t.Fatalf("a second decision: %d", resp.StatusCode)
			}
			resp.Body.Close()
			r.wg.Wait()
		})
	}
}

// silentCalls is a runner's approvals that never answer a listing.
type silentCalls struct{ *remoteCalls }

func (silentCalls) PendingRemote(ctx context.Context, _ string) ([]serve.RemoteApproval, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

type silentRunner struct {
	*elsewhere
	silentCalls
}

func (r silentRunner) StartRemote(ctx context.Context, t serve.RemoteTurn) error {
	r.remoteCalls.mu.Lock()
	r.remoteCalls.current = t.Log.ResponseID
	r.remoteCalls.mu.Unlock()
	return r.elsewhere.StartRemote(ctx, t)
}

// TestRemoteApprovalsOfASilentRunner: GET /v1/approvals does not wait
// past its bound for a runner that does not answer (a durable runner with
// no worker up): its turns' calls are left out, the in-process ones are
// listed.
func TestRemoteApprovalsOfASilentRunner(t *testing.T) {
	defer serve.SetRemotePendingTimeout(100 * time.Millisecond)()
	store := memstore.New()
	calls := &remoteCalls{}
	model := llmtest.New(llmtest.Reply(llmtest.Call("call_1", "add", `{"a":2,"b":3}`)), llmtest.Text("done"))
	r := silentRunner{&elsewhere{t: t, store: store, model: model, tools: []tool.Tool{addTool(tool.WithApproval())}, approver: calls}, silentCalls{calls}}
	e := &env{t: t, store: store, broker: &approval.Broker{Shared: host.Approvals(store), Poll: 5 * time.Millisecond}}
	a, err := agent.New(model, agent.Config{Name: "calc", Store: store, Approver: e.broker, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "calc", Agent: a, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if e.h, err = serve.New(serve.Options{Agents: set, Broker: e.broker, Runner: r}); err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.h)
	testwait.CloseOnCleanup(t, e.srv)

	resp := e.do("POST", "/v1/responses", map[string]any{"model": "calc", "input": "add", "background": true, "stream": true})
	evs := sseEvents(t, resp, untilCall)
	resp.Body.Close()
	id := evs[0]["response"].(map[string]any)["id"].(string)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		calls.mu.Lock()
		n := len(calls.waiting)
		calls.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the remote call never waited")
		}
	}
	start := time.Now()
	got := decode(t, e.do("GET", "/v1/approvals", nil))
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("GET /v1/approvals took %s", took)
	}
	if data := got["data"].([]any); len(data) != 0 {
		t.Fatalf("listed %v", data)
	}
	// Decided all the same (the runner's decision path answers).
	d := decode(t, e.do("POST", "/v1/approvals/"+strings.TrimPrefix(id, "resp_")+"/call_1", map[string]any{"approved": true}))
	if d["approved"] != true {
		t.Fatalf("decision %v", d)
	}
	rs := e.do("GET", "/v1/responses/"+id+"?stream=true", nil)
	all := sseEvents(t, rs, nil)
	rs.Body.Close()
	if all[len(all)-1]["type"] != "response.completed" {
		t.Fatalf("the turn ended with %v", all[len(all)-1]["type"])
	}
	r.wg.Wait()
}

// elicitIn is the arguments of an MCP server's request for input
// (mcp.ElicitationCall).
type elicitIn struct {
	Server          string         `json:"server"`
	Message         string         `json:"message"`
	RequestedSchema map[string]any `json:"requested_schema"`
}

// TestRemoteApprovalsOfAForm: a remote turn's MCP request for input
// (tool mcp_elicitation) is listed with its requested schema, as an
// in-process one is; POST /v1/approvals/{id} carries the decision's
// content to the runner, and the runner's refusal of content that does
// not fit the form (mcp.ErrFormContent) is a 400 invalid_content, the
// call still waiting; ordinary calls' decisions carry none.
func TestRemoteApprovalsOfAForm(t *testing.T) {
	const schema = `{"type":"object","properties":{"name":{"type":"string"},"seats":{"type":"integer","default":1}},"required":["name"]}`
	form := tool.MustFunc(mcp.ElicitationTool, "An MCP server's request for input.",
		func(context.Context, elicitIn) (string, error) { return "answered", nil }, tool.WithApproval())
	store := memstore.New()
	calls := &remoteCalls{check: true}
	model := llmtest.New(llmtest.Reply(llmtest.Call("call_1", mcp.ElicitationTool, `{"server":"travel","message":"Who travels?","requested_schema":`+schema+`}`)), llmtest.Text("done"))
	r := approvingRunner{&elsewhere{t: t, store: store, model: model, tools: []tool.Tool{form}, approver: calls}, calls}
	tokens := map[string]string{"alice": "a"}
	a, b := approvingReplica(t, r, tokens), approvingReplica(t, r, tokens)

	resp := a.do("POST", "/v1/responses", map[string]any{"model": "calc", "input": "book", "background": true, "stream": true}, "Authorization: Bearer a")
	evs := sseEvents(t, resp, untilCall)
	resp.Body.Close()
	id := evs[0]["response"].(map[string]any)["id"].(string)
	run := strings.TrimPrefix(id, "resp_")

	var pending []any
	for deadline := time.Now().Add(10 * time.Second); len(pending) == 0; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the remote request for input never appeared in /v1/approvals")
		}
		pending = decode(t, b.do("GET", "/v1/approvals", nil, "Authorization: Bearer a"))["data"].([]any)
	}
	p := pending[0].(map[string]any)
	got, _ := json.Marshal(p["schema"])
	if p["tool"] != mcp.ElicitationTool || p["id"] != run+"/call_1" || !jsonEqual(string(got), schema) {
		t.Fatalf("pending %v, want the requested schema %s", p, schema)
	}
	for name, body := range map[string]map[string]any{
		"missing required": {"approved": true, "content": map[string]any{"seats": 2}},
		"wrong type":       {"approved": true, "content": map[string]any{"name": 7}},
		"with a denial":    {"approved": false, "content": map[string]any{"name": "Ada"}},
	} {
		resp := b.do("POST", "/v1/approvals/"+run+"/call_1", body, "Authorization: Bearer a")
		if code, _ := errCode(t, resp); resp.StatusCode != 400 || code != "invalid_content" {
			t.Fatalf("%s: %d %s, want 400 invalid_content", name, resp.StatusCode, code)
		}
	}
	dec := decode(t, b.do("POST", "/v1/approvals/"+run+"/call_1", map[string]any{"approved": true, "content": map[string]any{"name": "Ada"}}, "Authorization: Bearer a"))
	if dec["approved"] != true || dec["object"] != "approval.decision" {
		t.Fatalf("decision answer %v", dec)
	}
	rs := b.do("GET", "/v1/responses/"+id+"?stream=true", nil, "Authorization: Bearer a")
	all := sseEvents(t, rs, nil)
	rs.Body.Close()
	if all[len(all)-1]["type"] != "response.completed" {
		t.Fatalf("final %v", all[len(all)-1])
	}
	r.wg.Wait()
	calls.mu.Lock()
	defer calls.mu.Unlock()
	if len(calls.decided) != 1 || !calls.decided[0].Approved || !jsonEqual(calls.decided[0].Content, `{"name":"Ada"}`) {
		t.Fatalf("the runner took %+v, want one approval with content {\"name\":\"Ada\"}", calls.decided)
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
