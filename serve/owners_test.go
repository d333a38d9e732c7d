package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"net/http/httptest"
	"net/url"
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
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// historyModel answers with every user text of its request (so a request
// that carried another principal's history shows it), calls the add tool
// when asked to "park", and records whether any request mixed alice's and
// bob's texts.
type historyModel struct {
	mu    sync.Mutex
	mixed bool
}

func (m *historyModel) Info() llm.ModelInfo { return llm.ModelInfo{Name: "history-model"} }

func (m *historyModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m *historyModel) Stream(_ context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	var texts []string
	for _, msg := range req.Messages {
		if msg.Role == llm.RoleUser {
			texts = append(texts, msg.Text())
		}
	}
	all := strings.Join(texts, "|")
	m.mu.Lock()
	if strings.Contains(all, "ALICESECRET") && strings.Contains(all, "BOBTEXT") {
		m.mixed = true
	}
	m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	if last.Role == llm.RoleUser && strings.HasSuffix(last.Text(), "park") {
		return llm.StreamOf(&llm.Response{Model: "history-model", Message: llm.Message{Role: llm.RoleAssistant,
			Content: []llm.Block{llmtest.Call("call_park", "add", `{"a":1,"b":2}`)}}, FinishReason: llm.FinishToolUse})
	}
	return llm.StreamOf(&llm.Response{Model: "history-model", Message: llm.AssistantText("history: " + all), FinishReason: llm.FinishStop,
		Usage: llm.Usage{InputTokens: 10, OutputTokens: 3}})
}

// ownersEnv is a server with two tokens, alice's and bob's, and the A2A and
// web handlers mounted, over one memory store.
type ownersEnv struct {
	*env
	model *historyModel
	sent  string // the last request's path and body
}

func newOwnersEnv(t *testing.T) *ownersEnv {
	t.Helper()
	e := &env{t: t, store: memstore.New(), broker: &approval.Broker{}}
	m := &historyModel{}
	a, err := agent.New(m, agent.Config{Name: "echo", Tools: []tool.Tool{addTool(tool.WithApproval())}, Store: e.store,
		Approver: e.broker, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "echo", Agent: a, Store: e.store, Model: "history-model"})
	if err != nil {
		t.Fatal(err)
	}
	a2a, err := a2aserve.New(set, e.broker, a2aserve.Options{BearerAuth: true, CancelWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	wh, err := web.New(set, e.broker, web.Options{Heartbeat: -1})
	if err != nil {
		t.Fatal(err)
	}
	e.h, err = serve.New(serve.Options{Agents: set, Broker: e.broker, A2A: a2a, Web: wh,
		Tokens: map[string]string{"alice": "token-a", "bob": "token-b"}})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = testwait.CloseOnCleanup(t, httptest.NewServer(e.h))
	return &ownersEnv{env: e, model: m}
}

// call sends a request as the principal of token and returns the status
// and the body.
func (e *ownersEnv) call(token, method, path string, body any) (int, string) {
	e.t.Helper()
	b, _ := json.Marshal(body)
	e.sent = path + " " + string(b)
	resp := e.do(method, path, body, "Authorization: Bearer "+token, web.CSRFHeader+": 1")
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, string(out)
}

// rpc sends an A2A JSON-RPC call to the echo agent.
func (e *ownersEnv) rpc(token, method string, params any) (int, string) {
	return e.call(token, "POST", "/a2a/echo", map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

func a2aMessage(text, contextID, taskID string) map[string]any {
	msg := map[string]any{"kind": "message", "messageId": session.NewID(), "role": "user",
		"parts": []any{map[string]any{"kind": "text", "text": text}}}
	if contextID != "" {
		msg["contextId"] = contextID
	}
	if taskID != "" {
		msg["taskId"] = taskID
	}
	return map[string]any{"message": msg}
}

// alice is what alice made before bob's requests: the ids and texts that
// must never reach bob.
type alice struct {
	response   string // the latest response of a Responses session
	first      string // an earlier response of that session
	webSession string // a session made through the web page
	task       string // an A2A task of hers (context "ctx-a")
	approval   string // a call of hers waiting for approval
	sessions   map[string]int
}

func (a *alice) markers() []string {
	out := []string{"ALICESECRET", a.response, a.first, a.webSession, a.task, a.approval, "alice.notes", "alice.ctx-a"}
	if sid, ok := strings.CutPrefix(a.response, "resp_"); ok {
		out = append(out, sid[:strings.LastIndexByte(sid, '_')])
	}
	return out
}

// setUpAlice makes alice's sessions through every entry point, and one
// turn of hers parked on an approval (released by the cleanup).
func setUpAlice(t *testing.T, e *ownersEnv) *alice {
	a := &alice{}
	st, body := e.call("token-a", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "ALICESECRET one"})
	if st != 200 {
		t.Fatalf("alice's first response: %d %s", st, body)
	}
	a.first = jsonOf(t, body)["id"].(string)
	st, body = e.call("token-a", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "ALICESECRET two", "previous_response_id": a.first})
	if st != 200 {
		t.Fatalf("alice's second response: %d %s", st, body)
	}
	a.response = jsonOf(t, body)["id"].(string)
	if st, body = e.call("token-a", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "ALICESECRET notes", "conversation": "notes"}); st != 200 {
		t.Fatalf("alice's conversation: %d %s", st, body)
	}
	st, body = e.call("token-a", "POST", "/api/chat", map[string]any{"message": "ALICESECRET web"})
	if st != 200 || !strings.Contains(body, "event: finish") {
		t.Fatalf("alice's web chat: %d %s", st, body)
	}
	for line := range strings.SplitSeq(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"type":"session"`) {
			a.webSession = jsonOf(t, d)["session"].(string)
		}
	}
	st, body = e.rpc("token-a", "message/send", a2aMessage("ALICESECRET a2a", "ctx-a", ""))
	res, _ := jsonOf(t, body)["result"].(map[string]any)
	if st != 200 || res == nil || res["kind"] != "task" {
		t.Fatalf("alice's A2A task: %d %s", st, body)
	}
	a.task = res["id"].(string)

	parked := make(chan struct{})
	go func() {
		defer close(parked)
		e.call("token-a", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "ALICESECRET park"})
	}()
	for deadline := time.Now().Add(10 * time.Second); a.approval == ""; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("alice's call never waited for approval")
		}
		if p := e.broker.Pending(nil); len(p) == 1 {
			a.approval = p[0].ID
		}
	}
	t.Cleanup(func() {
		_ = e.broker.Decide(a.approval, tool.Decision{Approved: false, Reason: "the test ends"})
		testwait.Recv(t, parked, "alice's parked turn to end")
	})
	// Two Responses sessions, the web's and the A2A one (the parked turn
	// is not stored yet).
	if a.sessions = e.snapshot("alice"); len(a.sessions) != 4 {
		t.Fatalf("alice has sessions %v", a.sessions)
	}
	return a
}

// snapshot returns owner's sessions in the store, with their message
// counts.
func (e *ownersEnv) snapshot(owner string) map[string]int {
	page, err := e.store.List(context.Background(), session.ListOptions{Limit: 1000, Owner: owner})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int{}
	for _, i := range page.Sessions {
		out[i.ID] = i.Messages
	}
	return out
}

// TestOwnersEveryRoute: with two tokens, bob, through every route of the
// server (serve's, the A2A handler's once per JSON-RPC method, the web
// page's), never lists, reads, continues, forks or deletes a session of
// alice's, nor decides or sees a call of hers, and no answer carries
// anything of hers: ids, texts, titles, counts. A route of the server
// without a row fails the test.
func TestOwnersEveryRoute(t *testing.T) {
	e := newOwnersEnv(t)
	a := setUpAlice(t, e)
	esc := url.PathEscape

	type row struct {
		route  string // the pattern, as Handler.Routes lists it
		name   string
		do     func() (int, string)
		status int
		check  func(t *testing.T, body string) // more checks of the answer; nil for none
	}
	rpcError := func(t *testing.T, body string) {
		if !strings.Contains(body, `"error"`) || strings.Contains(body, `"result"`) {
			t.Fatalf("want a JSON-RPC error: %s", body)
		}
	}
	noHistory := func(t *testing.T, body string) {
		if !strings.Contains(body, "history: BOBTEXT") {
			t.Fatalf("the answer is not bob's alone: %s", body)
		}
	}
	rows := []row{
		{route: "GET /healthz", do: func() (int, string) { return e.call("token-b", "GET", "/healthz", nil) }, status: 200},
		{route: "GET /readyz", do: func() (int, string) { return e.call("token-b", "GET", "/readyz", nil) }, status: 200},
		{route: "GET /v1/models", do: func() (int, string) { return e.call("token-b", "GET", "/v1/models", nil) }, status: 200},
		{route: "GET /v1/models/{model}", do: func() (int, string) { return e.call("token-b", "GET", "/v1/models/echo", nil) }, status: 200},
		{route: "POST /v1/chat/completions", name: "stateless", status: 200, check: noHistory, do: func() (int, string) {
			return e.call("token-b", "POST", "/v1/chat/completions", map[string]any{"model": "echo", "messages": []any{user("BOBTEXT")}})
		}},
		{route: "POST /v1/responses", name: "continue her latest response", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "BOBTEXT", "previous_response_id": a.response})
		}},
		{route: "POST /v1/responses", name: "fork from her earlier response", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "BOBTEXT", "previous_response_id": a.first})
		}},
		{route: "POST /v1/responses", name: "read her response without storing", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "BOBTEXT", "previous_response_id": a.response, "store": false})
		}},
		{route: "POST /v1/responses", name: "her conversation name is his own", status: 200, check: noHistory, do: func() (int, string) {
			return e.call("token-b", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "BOBTEXT", "conversation": "notes"})
		}},
		{route: "POST /v1/responses", name: "her session id as a conversation", status: 200, check: noHistory, do: func() (int, string) {
			return e.call("token-b", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "BOBTEXT", "conversation": a.webSession})
		}},
		{route: "GET /v1/responses/{id}", status: 404, do: func() (int, string) { return e.call("token-b", "GET", "/v1/responses/"+a.response, nil) }},
		{route: "GET /v1/responses/{id}", name: "streamed again", status: 404, do: func() (int, string) {
			return e.call("token-b", "GET", "/v1/responses/"+a.response+"?stream=true&starting_after=0", nil)
		}},
		{route: "POST /agui/{agent}", name: "her web session as a thread", status: 200, check: noHistory, do: func() (int, string) {
			return e.call("token-b", "POST", "/agui/echo", map[string]any{"threadId": a.webSession, "runId": "r1",
				"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "BOBTEXT"}}})
		}},
		{route: "GET /agui/{agent}/runs/{run}", name: "a run that is not his", status: 404, do: func() (int, string) {
			return e.call("token-b", "GET", "/agui/echo/runs/alices-run", nil)
		}},
		{route: "POST /agui/{agent}/runs/{run}", name: "a run that is not his", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/agui/echo/runs/alices-run", map[string]any{})
		}},
		{route: "POST /agui/{agent}/runs/{run}/cancel", name: "a run that is not his", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/agui/echo/runs/alices-run/cancel", nil)
		}},
		{route: "POST /v1/responses/{id}/cancel", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/v1/responses/"+a.response+"/cancel", nil)
		}},
		{route: "GET /v1/approvals", status: 200, check: func(t *testing.T, body string) {
			if body = strings.TrimSpace(body); body != `{"object":"list","data":[]}` {
				t.Fatalf("bob's approvals: %s", body)
			}
		}, do: func() (int, string) { return e.call("token-b", "GET", "/v1/approvals", nil) }},
		{route: "POST /v1/approvals/{id...}", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/v1/approvals/"+a.approval, map[string]any{"approved": true})
		}},
		{route: "/v1/", status: 404, do: func() (int, string) { return e.call("token-b", "GET", "/v1/conversations/alice.notes", nil) }},
		{route: "/a2a/", status: 404, do: func() (int, string) { return e.call("token-b", "GET", "/a2a/echo/tasks/"+a.task, nil) }},
		{route: "/.well-known/agent-card.json", status: 200, do: func() (int, string) { return e.call("", "GET", "/.well-known/agent-card.json", nil) }},
		{route: "/", status: 200, do: func() (int, string) { return e.call("", "GET", "/", nil) }},

		// A2A, once per JSON-RPC method.
		{route: "GET /.well-known/agent-card.json", status: 200, do: func() (int, string) { return e.call("", "GET", "/.well-known/agent-card.json", nil) }},
		{route: "GET /a2a/{agent}/.well-known/agent-card.json", status: 200, do: func() (int, string) {
			return e.call("", "GET", "/a2a/echo/.well-known/agent-card.json", nil)
		}},
		{route: "POST /a2a/{agent} message/send", name: "her context id starts a session of his", status: 200, do: func() (int, string) {
			return e.rpc("token-b", "message/send", a2aMessage("BOBTEXT", "ctx-a", ""))
		}, check: func(t *testing.T, body string) {
			noHistory(t, body)
			if !strings.Contains(body, `"state":"completed"`) || !strings.Contains(body, `"session_id":"bob.ctx-a"`) {
				t.Fatalf("bob's task in ctx-a: %s", body)
			}
		}},
		{route: "POST /a2a/{agent} message/send", name: "continue her task", status: 200, check: rpcError, do: func() (int, string) {
			return e.rpc("token-b", "message/send", a2aMessage("BOBTEXT approve", "ctx-a", a.task))
		}},
		{route: "POST /a2a/{agent} message/stream", name: "her context id, streamed", status: 200, check: func(t *testing.T, body string) {
			noHistory(t, body)
			if !strings.Contains(body, `"session_id":"bob.ctx-a"`) {
				t.Fatalf("bob's streamed task in ctx-a: %s", body)
			}
		}, do: func() (int, string) { return e.rpc("token-b", "message/stream", a2aMessage("BOBTEXT", "ctx-a", "")) }},
		{route: "POST /a2a/{agent} tasks/get", status: 200, check: rpcError, do: func() (int, string) {
			return e.rpc("token-b", "tasks/get", map[string]any{"id": a.task})
		}},
		{route: "POST /a2a/{agent} tasks/cancel", status: 200, check: rpcError, do: func() (int, string) {
			return e.rpc("token-b", "tasks/cancel", map[string]any{"id": a.task})
		}},
		{route: "POST /a2a/{agent} tasks/resubscribe", status: 200, check: rpcError, do: func() (int, string) {
			return e.rpc("token-b", "tasks/resubscribe", map[string]any{"id": a.task})
		}},
		{route: "POST /a2a/{agent} tasks/pushNotificationConfig/get", status: 200, check: rpcError, do: func() (int, string) {
			return e.rpc("token-b", "tasks/pushNotificationConfig/get", map[string]any{"id": a.task})
		}},
		{route: "POST /a2a/{agent} tasks/pushNotificationConfig/set", status: 200, check: rpcError, do: func() (int, string) {
			return e.rpc("token-b", "tasks/pushNotificationConfig/set", map[string]any{"taskId": a.task, "pushNotificationConfig": map[string]any{"url": "http://127.0.0.1:1/"}})
		}},
		{route: "POST /a2a/{agent} tasks/pushNotificationConfig/list", status: 200, check: rpcError, do: func() (int, string) {
			return e.rpc("token-b", "tasks/pushNotificationConfig/list", map[string]any{"id": a.task})
		}},
		{route: "POST /a2a/{agent} tasks/pushNotificationConfig/delete", status: 200, check: rpcError, do: func() (int, string) {
			return e.rpc("token-b", "tasks/pushNotificationConfig/delete", map[string]any{"id": a.task, "pushNotificationConfigId": "x"})
		}},
		{route: "POST /a2a/{agent} agent/getAuthenticatedExtendedCard", status: 200, check: rpcError, do: func() (int, string) {
			return e.rpc("token-b", "agent/getAuthenticatedExtendedCard", nil)
		}},

		// The web page and its API.
		{route: "/", name: "web", status: 200, do: func() (int, string) { return e.call("", "GET", "/js/app.js", nil) }},
		{route: "GET /api/agents", status: 200, do: func() (int, string) { return e.call("token-b", "GET", "/api/agents", nil) }},
		{route: "GET /api/sessions", name: "only his", status: 200, check: func(t *testing.T, body string) {
			var got struct {
				Sessions []struct{ ID string } `json:"sessions"`
			}
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatal(err)
			}
			bobs := e.snapshot("bob")
			if len(got.Sessions) != len(bobs) {
				t.Fatalf("bob lists %d sessions, has %d: %s", len(got.Sessions), len(bobs), body)
			}
			for _, s := range got.Sessions {
				if _, ok := bobs[s.ID]; !ok {
					t.Fatalf("bob lists %s: %s", s.ID, body)
				}
			}
		}, do: func() (int, string) { return e.call("token-b", "GET", "/api/sessions", nil) }},
		{route: "GET /api/sessions/{id}", name: "her web session", status: 404, do: func() (int, string) {
			return e.call("token-b", "GET", "/api/sessions/"+esc(a.webSession), nil)
		}},
		{route: "GET /api/sessions/{id}", name: "her named conversation", status: 404, do: func() (int, string) {
			return e.call("token-b", "GET", "/api/sessions/alice.notes", nil)
		}},
		{route: "DELETE /api/sessions/{id}", status: 404, do: func() (int, string) {
			return e.call("token-b", "DELETE", "/api/sessions/"+esc(a.webSession), nil)
		}},
		{route: "DELETE /api/sessions/{id}", name: "her A2A session", status: 404, do: func() (int, string) {
			return e.call("token-b", "DELETE", "/api/sessions/alice.ctx-a", nil)
		}},
		{route: "POST /api/sessions/{id}/fork", name: "fork her web session", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/api/sessions/"+esc(a.webSession)+"/fork", map[string]any{"turns": 1})
		}},
		{route: "POST /api/chat", name: "continue her web session", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/api/chat", map[string]any{"message": "BOBTEXT", "session": a.webSession})
		}},
		{route: "POST /api/chat", name: "a session that does not exist answers the same", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/api/chat", map[string]any{"message": "BOBTEXT", "session": "no-such-session"})
		}},
		{route: "POST /api/chat", name: "a new chat of his", status: 200, check: noHistory, do: func() (int, string) {
			return e.call("token-b", "POST", "/api/chat", map[string]any{"message": "BOBTEXT"})
		}},
		{route: "GET /api/runs", status: 200, check: func(t *testing.T, body string) {
			if strings.TrimSpace(body) != `{"runs":[]}` {
				t.Fatalf("bob's running turns: %s", body)
			}
		}, do: func() (int, string) { return e.call("token-b", "GET", "/api/runs", nil) }},
		{route: "GET /api/sessions/{id}/run", name: "her web session", status: 404, do: func() (int, string) {
			return e.call("token-b", "GET", "/api/sessions/"+esc(a.webSession)+"/run", nil)
		}},
		{route: "POST /api/sessions/{id}/cancel", name: "her web session", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/api/sessions/"+esc(a.webSession)+"/cancel", map[string]any{})
		}},
		{route: "GET /api/approvals", status: 200, check: func(t *testing.T, body string) {
			if strings.TrimSpace(body) != `{"approvals":[]}` {
				t.Fatalf("bob's approvals: %s", body)
			}
		}, do: func() (int, string) { return e.call("token-b", "GET", "/api/approvals", nil) }},
		{route: "POST /api/approvals/{id...}", status: 404, do: func() (int, string) {
			return e.call("token-b", "POST", "/api/approvals/"+a.approval, map[string]any{"approved": true})
		}},
		{route: "/api/", status: 404, do: func() (int, string) {
			return e.call("token-b", "GET", "/api/sessions/"+esc(a.webSession)+"/messages", nil)
		}},
	}

	// Every route has a row, and every row a route.
	routes := e.h.Routes()
	for _, r := range routes {
		if !slices.ContainsFunc(rows, func(w row) bool { return w.route == r }) {
			t.Errorf("route %q has no row: add one to this table", r)
		}
	}
	for _, w := range rows {
		if !slices.Contains(routes, w.route) {
			t.Errorf("row for %q, which is no route of the server", w.route)
		}
	}

	for _, w := range rows {
		t.Run(w.route+" "+w.name, func(t *testing.T) {
			status, body := w.do()
			if status != w.status {
				t.Fatalf("status %d, want %d: %s", status, w.status, body)
			}
			for _, m := range a.markers() {
				// An id bob sent himself may come back in an error, and
				// a name he gave his own conversation in its id.
				if m != "" && strings.Contains(strings.ReplaceAll(body, "bob."+m, ""), m) && !strings.Contains(e.sent, m) {
					t.Fatalf("the answer holds %q of alice's: %s", m, body)
				}
			}
			if strings.Contains(body, "ALICESECRET") {
				t.Fatalf("the answer holds alice's text: %s", body)
			}
			if w.check != nil {
				w.check(t, body)
			}
		})
	}

	if after := e.snapshot("alice"); !mapsEqual(after, a.sessions) {
		t.Errorf("alice's sessions changed: %v, were %v", after, a.sessions)
	}
	if e.model.mixed {
		t.Error("a model request held both alice's and bob's texts")
	}
	if p := e.broker.Pending(nil); len(p) != 1 || p[0].ID != a.approval {
		t.Errorf("pending calls %v, want alice's alone", p)
	}

	// The rows are not vacuous: alice reaches all of hers.
	st, body := e.call("token-a", "GET", "/api/sessions", nil)
	for id := range a.sessions {
		if st != 200 || !strings.Contains(body, `"id":"`+id+`"`) {
			t.Errorf("alice's listing lacks %s: %d %s", id, st, body)
		}
	}
	if st, body := e.call("token-a", "GET", "/v1/responses/"+a.response, nil); st != 200 {
		t.Errorf("alice reads her response: %d %s", st, body)
	}
	if st, body := e.call("token-a", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "ALICESECRET three", "previous_response_id": a.response}); st != 200 ||
		!strings.Contains(body, "history: ALICESECRET one|ALICESECRET two|ALICESECRET three") {
		t.Errorf("alice continues her response: %d %s", st, body)
	}
	if st, body := e.call("token-a", "DELETE", "/api/sessions/"+esc(a.webSession), nil); st != 200 {
		t.Errorf("alice deletes her web session: %d %s", st, body)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestOwnersOlderResponseIDs: a conversation an older server stored in
// alice's namespace, with no owner (resp_alice.notes_1), is still hers:
// continued by its response id and by its name, never by bob.
func TestOwnersOlderResponseIDs(t *testing.T) {
	e := newOwnersEnv(t)
	err := e.store.Append(context.Background(), "alice.notes", session.Turn{ID: "older",
		Messages: []llm.Message{llm.UserText("ALICESECRET older"), llm.AssistantText("noted")}})
	if err != nil {
		t.Fatal(err)
	}
	st, body := e.call("token-b", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "BOBTEXT", "previous_response_id": "resp_alice.notes_1"})
	if st != 404 || strings.Contains(body, "ALICESECRET") {
		t.Fatalf("bob continues alice's older conversation: %d %s", st, body)
	}
	st, body = e.call("token-a", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "ALICESECRET again", "previous_response_id": "resp_alice.notes_1"})
	if st != 200 || jsonOf(t, body)["id"] != "resp_alice.notes_2" || !strings.Contains(body, "history: ALICESECRET older|ALICESECRET again") {
		t.Fatalf("alice continues her older conversation: %d %s", st, body)
	}
	st, body = e.call("token-a", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "ALICESECRET more", "conversation": "notes"})
	if st != 200 || jsonOf(t, body)["id"] != "resp_alice.notes_3" {
		t.Fatalf("alice continues it by name: %d %s", st, body)
	}
	if st, body = e.call("token-a", "GET", "/v1/responses/resp_alice.notes_3", nil); st != 200 {
		t.Fatalf("alice reads her response: %d %s", st, body)
	}
}
