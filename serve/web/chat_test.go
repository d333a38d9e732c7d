package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

func weather() tool.Tool {
	return tool.MustFunc("get_weather", "The weather in a city.", func(_ context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + in.City, nil
	})
}

func deleteFile(ran *bool) tool.Tool {
	return tool.MustFunc("delete_file", "Delete a file.", func(_ context.Context, in struct {
		Path string `json:"path"`
	}) (string, error) {
		*ran = true
		return "deleted " + in.Path, nil
	}, tool.WithApproval())
}

func TestChatToolLoop(t *testing.T) {
	model := llmtest.New(
		llmtest.Reply(llm.Thinking{Text: "The user wants the weather."}, llm.Text{Text: "Let me look."},
			llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)).WithUsage(llm.Usage{InputTokens: 100, OutputTokens: 20}),
		llmtest.Text("It is sunny in Paris.").WithUsage(llm.Usage{InputTokens: 150, OutputTokens: 10}),
	).Verify(t).WithInfo(llm.ModelInfo{Provider: "llmtest", Name: "scripted", Price: &llm.Price{Input: 1, Output: 2}})
	f := newFixture(t, model, weather())
	evs := collect(t, events(t, f.do(t, context.Background(), "POST", "/api/chat", "", map[string]string{"agent": "helper", "message": "Weather in Paris?"})))

	if got, want := kinds(evs), "session thinking text tool_call usage tool_result text usage finish"; got != want {
		t.Fatalf("events %q\nwant   %q", got, want)
	}
	var text, thinking strings.Builder
	var textEvents int
	for _, ev := range evs {
		switch ev.Type {
		case "text":
			text.WriteString(ev.Text)
			textEvents++
		case "thinking":
			thinking.WriteString(ev.Text)
		case "tool_call":
			if ev.ID != "call_1" || ev.Name != "get_weather" || string(ev.Input) != `{"city":"Paris"}` {
				t.Errorf("tool_call %+v", ev)
			}
		case "tool_result":
			if ev.ToolCallID != "call_1" || ev.Text != "sunny in Paris" || ev.IsError {
				t.Errorf("tool_result %+v", ev)
			}
		}
	}
	if text.String() != "Let me look.It is sunny in Paris." || textEvents < 3 {
		t.Errorf("text %q in %d events", text.String(), textEvents)
	}
	if thinking.String() != "The user wants the weather." {
		t.Errorf("thinking %q", thinking.String())
	}
	sid := evs[0].Session
	if session.ValidateID(sid) != nil {
		t.Fatalf("session id %q", sid)
	}
	fin := evs[len(evs)-1]
	wantCost := (250*1.0 + 30*2.0) / 1e6
	if fin.Usage == nil || fin.Usage.InputTokens != 250 || fin.Usage.OutputTokens != 30 || fin.CostUSD == nil || !near(*fin.CostUSD, wantCost) ||
		fin.FinishReason != "stop" || fin.SessionTurns != 1 || fin.Session != sid {
		t.Fatalf("finish %+v (cost %v)", fin, fin.CostUSD)
	}

	// The turn is stored, and its transcript reads back in the same shapes.
	s := decode(t, f.do(t, context.Background(), "GET", "/api/sessions/"+sid+"?agent=helper", "", nil), 200)
	var types []string
	for _, it := range s["items"].([]any) {
		types = append(types, it.(map[string]any)["type"].(string))
	}
	if got := strings.Join(types, " "); got != "user thinking text tool_call tool_result text" {
		t.Fatalf("stored items %q", got)
	}
	if s["turns"].(float64) != 1 || s["tokens"].(float64) != 280 {
		t.Fatalf("stored session %v", s)
	}

	// The next turn continues the session.
	model.Add(llmtest.Text("Still sunny."))
	evs = collect(t, events(t, f.do(t, context.Background(), "POST", "/api/chat", "", map[string]string{"session": sid, "message": "And now?"})))
	if fin := evs[len(evs)-1]; fin.Type != "finish" || fin.SessionTurns != 2 {
		t.Fatalf("second turn %+v", evs)
	}
	reqs := model.Requests()
	if n := len(reqs[len(reqs)-1].Messages); n < 5 {
		t.Fatalf("the second turn sent %d messages: no history", n)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

func TestChatModelError(t *testing.T) {
	model := llmtest.New(llmtest.Fail(errors.New("the model is down"))).Verify(t)
	f := newFixture(t, model)
	evs := collect(t, events(t, f.do(t, context.Background(), "POST", "/api/chat", "", map[string]string{"message": "hi"})))
	if got := kinds(evs); got != "session error" || !strings.Contains(evs[1].Message, "the model is down") {
		t.Fatalf("events %+v", evs)
	}
	if _, err := f.store.Load(context.Background(), evs[0].Session); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("a failed turn was stored: %v", err)
	}
}

// A turn the principal's quota stopped after its first model call: the
// finish event (the turn is stored) shows what is left of the quota, then
// the error names the limit.
func TestChatStoppedByQuota(t *testing.T) {
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)).WithUsage(llm.Usage{InputTokens: 100, OutputTokens: 20}),
		llmtest.Text("never sent"),
	).WithInfo(llm.ModelInfo{Provider: "llmtest", Name: "scripted", MaxOutputTokens: 100})
	f := newFixture(t, model, weather())
	f.quota = &budget.StoreQuota{Records: f.store, Principal: "alice", Total: budget.Limits{Tokens: 300}}
	evs := collect(t, events(t, f.do(t, context.Background(), "POST", "/api/chat", "", map[string]string{"agent": "helper", "message": "Weather in Paris?"})))
	if got, want := kinds(evs), "session tool_call usage tool_result finish error"; got != want {
		t.Fatalf("events %q\nwant   %q", got, want)
	}
	fin, last := evs[4], evs[5]
	left, _ := fin.Budget["principal"].(map[string]any)
	if fin.FinishReason != "budget" || left["tokens"] != 180.0 || !strings.Contains(last.Message, "principal token limit of 300 tokens") {
		t.Errorf("finish %+v, error %q", fin, last.Message)
	}
	if s, err := f.store.Load(context.Background(), evs[0].Session); err != nil || len(s.Messages) != 3 {
		t.Errorf("stored %d messages, want the prompt, the call and its result", len(s.Messages))
	}
}

func TestApproval(t *testing.T) {
	tests := []struct {
		name     string
		approve  bool
		result   string
		toolRuns bool
	}{
		{"approved", true, "deleted x", true},
		{"denied", false, "denied", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran bool
			model := llmtest.New(
				llmtest.Reply(llmtest.Call("call_1", "delete_file", `{"path":"x"}`)),
				llmtest.Text("done"),
			).Verify(t)
			f := newFixture(t, model, deleteFile(&ran))
			ch := events(t, f.do(t, context.Background(), "POST", "/api/chat", "alice", map[string]string{"message": "delete x"}))
			ap := until(t, ch, "approval")
			if ap.ToolCallID != "call_1" || ap.Name != "delete_file" || string(ap.Input) != `{"path":"x"}` || !strings.HasSuffix(ap.ID, "/call_1") {
				t.Fatalf("approval event %+v", ap)
			}

			// Listed for alice only.
			list := decode(t, f.do(t, context.Background(), "GET", "/api/approvals", "alice", nil), 200)
			if a := list["approvals"].([]any); len(a) != 1 || a[0].(map[string]any)["id"] != ap.ID {
				t.Fatalf("alice's approvals %v", list)
			}
			list = decode(t, f.do(t, context.Background(), "GET", "/api/approvals", "bob", nil), 200)
			if a := list["approvals"].([]any); len(a) != 0 {
				t.Fatalf("bob sees %v", list)
			}
			path := "/api/approvals/" + ap.ID
			// Another principal's call is answered as one that does not exist.
			decode(t, f.do(t, context.Background(), "POST", path, "bob", map[string]any{"approved": true}), 404)
			decode(t, f.do(t, context.Background(), "POST", path, "", map[string]any{"approved": true}), 404)
			decode(t, f.do(t, context.Background(), "POST", path+"x", "alice", map[string]any{"approved": true}), 404)
			decode(t, f.do(t, context.Background(), "POST", path, "alice", map[string]any{"reason": "no decision"}), 400)
			decode(t, f.do(t, context.Background(), "POST", path, "alice", map[string]any{"approved": tt.approve, "reason": "denied by alice"}), 200)
			decode(t, f.do(t, context.Background(), "POST", path, "alice", map[string]any{"approved": tt.approve}), 404) // decided already

			res := until(t, ch, "tool_result")
			if !strings.Contains(res.Text, tt.result) {
				t.Fatalf("tool result %+v, want %q", res, tt.result)
			}
			fin := until(t, ch, "finish")
			if fin.FinishReason != "stop" {
				t.Fatalf("finish %+v", fin)
			}
			if ran != tt.toolRuns {
				t.Fatalf("the tool ran = %v", ran)
			}
		})
	}
}

// TestDisconnectGoesOn closes the client while the model is streaming
// (and while a call waits for approval): the turn goes on without it; it
// is listed (GET /api/runs), a page reattaches to it from its first event
// (GET /api/sessions/{id}/run), and POST /api/sessions/{id}/cancel stops
// it: the handler returns, nothing is stored, no call waits, no tool ran,
// and the reattached stream ends with the error.
func TestDisconnectGoesOn(t *testing.T) {
	tests := []struct {
		name  string
		steps []llmtest.Step
		wait  string // the event after which the client goes away
	}{
		{"while the model streams", []llmtest.Step{llmtest.Hang()}, "session"},
		{"while a call waits for approval", []llmtest.Step{llmtest.Reply(llmtest.Call("call_1", "delete_file", `{"path":"x"}`))}, "approval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ran bool
			model := llmtest.New(tt.steps...).Verify(t)
			f := newFixture(t, model, deleteFile(&ran))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ch := events(t, f.do(t, ctx, "POST", "/api/chat", "alice", map[string]string{"message": "delete x"}))
			sid := until(t, ch, "session").Session
			if tt.wait != "session" {
				until(t, ch, tt.wait)
			}
			for deadline := time.Now().Add(10 * time.Second); model.Calls() == 0; {
				if time.Now().After(deadline) {
					t.Fatal("the model was never called")
				}
				time.Sleep(time.Millisecond)
			}
			cancel() // the page goes away

			var listed struct {
				Runs []struct{ Session, Agent, Run string }
			}
			resp := f.do(t, context.Background(), "GET", "/api/runs?agent=helper", "alice", nil)
			if err := json.NewDecoder(resp.Body).Decode(&listed); err != nil || len(listed.Runs) != 1 || listed.Runs[0].Session != sid {
				t.Fatalf("running turns: %+v %v", listed, err)
			}
			resp.Body.Close()
			if resp := f.do(t, context.Background(), "GET", "/api/runs?agent=helper", "bob", nil); resp.StatusCode != 200 {
				t.Fatalf("bob's runs: %d", resp.StatusCode)
			} else {
				var his struct{ Runs []any }
				_ = json.NewDecoder(resp.Body).Decode(&his)
				resp.Body.Close()
				if len(his.Runs) != 0 {
					t.Fatalf("bob sees alice's running turn: %+v", his)
				}
			}
			again := events(t, f.do(t, context.Background(), "GET", "/api/sessions/"+sid+"/run?agent=helper", "alice", nil))
			if first := until(t, again, "user"); first.Text != "delete x" {
				t.Fatalf("the reattached stream begins with %+v", first)
			}
			until(t, again, "session")
			if resp := f.do(t, context.Background(), "POST", "/api/sessions/"+sid+"/cancel?agent=helper", "bob", map[string]any{}); resp.StatusCode != 404 {
				t.Fatalf("bob stops alice's turn: %d", resp.StatusCode)
			}
			if resp := f.do(t, context.Background(), "POST", "/api/sessions/"+sid+"/cancel?agent=helper", "alice", map[string]any{}); resp.StatusCode != 200 {
				t.Fatalf("stopping the turn: %d", resp.StatusCode)
			}
			if last := until(t, again, "error"); !strings.Contains(last.Message, "stopped") {
				t.Fatalf("the reattached stream ended with %+v", last)
			}
			select {
			case <-f.done:
			case <-time.After(10 * time.Second):
				t.Fatal("the handler did not return after the turn was stopped")
			}
			if _, err := f.store.Load(context.Background(), sid); !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("a stopped turn was stored: %v", err)
			}
			if p := f.broker.Pending(nil); len(p) != 0 {
				t.Fatalf("still pending: %+v", p)
			}
			if ran {
				t.Fatal("the tool ran")
			}
		})
	}
}

// TestHeartbeat: a stream waiting for an approval sends SSE comments.
func TestHeartbeat(t *testing.T) {
	var ran bool
	model := llmtest.New(llmtest.Reply(llmtest.Call("call_1", "delete_file", `{"path":"x"}`))).Verify(t)
	f := newFixtureOpts(t, web.Options{Heartbeat: 5 * time.Millisecond}, model, deleteFile(&ran))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := f.do(t, ctx, "POST", "/api/chat", "", map[string]string{"message": "delete x"})
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var sawApproval bool
	sid := ""
	for sc.Scan() {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, "data: "); ok && sid == "" {
			var ev struct{ Session string }
			_ = json.Unmarshal([]byte(s), &ev)
			sid = ev.Session
		}
		if strings.HasPrefix(line, "event: approval") {
			sawApproval = true
		}
		if sawApproval && line == ": ping" {
			// The turn outlives its page: stop it.
			f.do(t, context.Background(), "POST", "/api/sessions/"+sid+"/cancel", "", map[string]any{}).Body.Close()
			return
		}
	}
	t.Fatalf("no heartbeat after the approval event (%v)", sc.Err())
}

// unwrapOnly is a middleware's ResponseWriter that flushes only through
// Unwrap, as a logging or metrics wrapper in package serve might.
type unwrapOnly struct{ w http.ResponseWriter }

func (u unwrapOnly) Header() http.Header         { return u.w.Header() }
func (u unwrapOnly) Write(b []byte) (int, error) { return u.w.Write(b) }
func (u unwrapOnly) WriteHeader(code int)        { u.w.WriteHeader(code) }
func (u unwrapOnly) Unwrap() http.ResponseWriter { return u.w }

// TestStreamsThroughWrappedWriter: events reach the client while the turn
// is still running (here: waiting for an approval) behind such a wrapper.
func TestStreamsThroughWrappedWriter(t *testing.T) {
	var ran bool
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "delete_file", `{"path":"x"}`)),
		llmtest.Text("done"),
	).Verify(t)
	broker := &approval.Broker{}
	a, err := agent.New(model, agent.Config{Tools: []tool.Tool{deleteFile(&ran)}, Approver: broker})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "a", Agent: a})
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(set, broker, web.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(unwrapOnly{w}, r)
	}))
	defer testwait.Close(t, srv)
	// Without flushing, not even the headers would arrive: the deadline
	// fails the test instead of hanging it, and ends the turn before
	// srv.Close waits for it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/api/chat", strings.NewReader(`{"message":"delete x"}`))
	req.Header.Set(web.CSRFHeader, "1")
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	ch := events(t, resp)
	ap := until(t, ch, "approval") // times out if nothing is flushed
	if err := broker.Decide(ap.ID, tool.Decision{Approved: true}); err != nil {
		t.Fatal(err)
	}
	if fin := until(t, ch, "finish"); fin.FinishReason != "stop" || !ran {
		t.Fatalf("finish %+v, ran %v", fin, ran)
	}
}
