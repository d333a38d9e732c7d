package serve_test

import (
	"context"
	"fmt"
	"iter"
	"net/http/httptest"
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
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// replica is one server process over a store shared with others: its own
// handler, agents and broker (sharing the store's records).
func replica(t *testing.T, store *memstore.Store, spec agentSpec) *env {
	t.Helper()
	e := &env{t: t, store: store, broker: &approval.Broker{Shared: host.Approvals(store), Poll: 5 * time.Millisecond}}
	cfg := agent.Config{Name: spec.name, Tools: spec.tools, Store: store, Approver: e.broker, Retry: middleware.RetryConfig{MaxAttempts: 1}}
	a, err := agent.New(spec.model, cfg)
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: spec.name, Agent: a, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	e.h, err = serve.New(serve.Options{Agents: set, Broker: e.broker})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.h)
	testwait.CloseOnCleanup(t, e.srv)
	return e
}

// TestResponsesAcrossReplicas: two servers over one store continue one
// conversation by previous_response_id alternately, and each answers GET
// /v1/responses/{id} for the other's responses (as a restarted process
// would: nothing of it is in the process).
func TestResponsesAcrossReplicas(t *testing.T) {
	store := memstore.New()
	a := replica(t, store, agentSpec{name: "echo", model: &model{}})
	b := replica(t, store, agentSpec{name: "echo", model: &model{}})
	prev := ""
	var ids []string
	for i := range 4 {
		e := []*env{a, b}[i%2]
		body := map[string]any{"model": "echo", "input": fmt.Sprint("turn ", i)}
		if prev != "" {
			body["previous_response_id"] = prev
		}
		resp := e.do("POST", "/v1/responses", body)
		got := decode(t, resp)
		if resp.StatusCode != 200 || outputText(t, got) != fmt.Sprint("echo: turn ", i) {
			t.Fatalf("turn %d: %d %v", i, resp.StatusCode, got)
		}
		prev = got["id"].(string)
		ids = append(ids, prev)
	}
	for i, id := range ids {
		for _, e := range []*env{a, b} {
			resp := e.do("GET", "/v1/responses/"+id, nil)
			got := decode(t, resp)
			if resp.StatusCode != 200 || got["id"] != id || outputText(t, got) != fmt.Sprint("echo: turn ", i) || got["usage"] == nil {
				t.Fatalf("GET %s: %d %v", id, resp.StatusCode, got)
			}
		}
	}
	if want := fmt.Sprintf("_%d", len(ids)); ids[3][len(ids[3])-2:] != want {
		t.Fatalf("ids %v: the last is not turn %s", ids, want)
	}
}

// TestResponseIDsUniqueAcrossReplicas: turns of one conversation sent at
// once to two servers over one store get distinct ids, each its turn's
// position, and the session holds each turn once.
func TestResponseIDsUniqueAcrossReplicas(t *testing.T) {
	store := memstore.New()
	slow := &model{fn: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
		}
		return llm.StreamOf(echo(req))
	}}
	a := replica(t, store, agentSpec{name: "echo", model: slow})
	b := replica(t, store, agentSpec{name: "echo", model: slow})
	const n = 6
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e := []*env{a, b}[i%2]
			resp := e.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": fmt.Sprint(i), "conversation": "shared"})
			got := decode(t, resp)
			if resp.StatusCode != 200 {
				t.Errorf("turn %d: %d %v", i, resp.StatusCode, got)
				return
			}
			ids <- got["id"].(string)
		})
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("two turns got the id %s", id)
		}
		seen[id] = true
	}
	for i := 1; i <= n; i++ {
		if !seen[fmt.Sprintf("resp_shared_%d", i)] {
			t.Fatalf("ids %v: no resp_shared_%d", seen, i)
		}
	}
	if s := a.session("shared"); s.Turns != n || len(s.Messages) != 2*n {
		t.Fatalf("session: %d turns, %d messages", s.Turns, len(s.Messages))
	}
}

// TestApprovalAcrossReplicas: a turn waiting on server A is listed by
// server B and decided there, once; A's turn then completes.
func TestApprovalAcrossReplicas(t *testing.T) {
	store := memstore.New()
	m := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "add", `{"a":2,"b":3}`)),
		llmtest.Text("done"),
	).Verify(t)
	spec := agentSpec{name: "calc", model: m, tools: []tool.Tool{addTool(tool.WithApproval())}}
	a := replica(t, store, spec)
	b := replica(t, store, agentSpec{name: "calc", model: &model{}, tools: spec.tools})
	done := make(chan map[string]any, 1)
	go func() {
		done <- decode(t, a.do("POST", "/v1/responses", map[string]any{"model": "calc", "input": "add"}))
	}()
	var pending []any
	for deadline := time.Now().Add(10 * time.Second); len(pending) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the call never appeared in the other server's /v1/approvals")
		}
		time.Sleep(5 * time.Millisecond)
		pending = decode(t, b.do("GET", "/v1/approvals", nil))["data"].([]any)
	}
	id := pending[0].(map[string]any)["id"].(string)
	if got := decode(t, b.do("POST", "/v1/approvals/"+id, map[string]any{"approved": true})); got["approved"] != true {
		t.Fatalf("decision: %v", got)
	}
	resp := b.do("POST", "/v1/approvals/"+id, map[string]any{"approved": false})
	if code, _ := errCode(t, resp); resp.StatusCode != 404 || code != "approval_not_found" {
		t.Fatalf("a second decision: %d %s", resp.StatusCode, code)
	}
	select {
	case got := <-done:
		if got["status"] != "completed" || outputText(t, got) != "done" {
			t.Fatalf("A's turn: %v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("A's turn never went on")
	}
	if p := decode(t, a.do("GET", "/v1/approvals", nil))["data"].([]any); len(p) != 0 {
		t.Fatalf("still pending: %v", p)
	}
}
