package serve_test

import (
	"context"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/tool"
)

func outputText(t *testing.T, resp map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, it := range resp["output"].([]any) {
		item := it.(map[string]any)
		if item["type"] != "message" {
			continue
		}
		for _, c := range item["content"].([]any) {
			b.WriteString(c.(map[string]any)["text"].(string))
		}
	}
	return b.String()
}

func TestResponsesConversation(t *testing.T) {
	e := newEnv(t, serve.Options{})
	post := func(body map[string]any) (int, map[string]any) {
		body["model"] = "echo"
		resp := e.do("POST", "/v1/responses", body)
		return resp.StatusCode, decode(t, resp)
	}
	status, first := post(map[string]any{"input": "one", "instructions": "Be brief."})
	if status != 200 || first["object"] != "response" || first["status"] != "completed" || outputText(t, first) != "echo: one" {
		t.Fatalf("%d %v", status, first)
	}
	if u := first["usage"].(map[string]any); u["input_tokens"] != 10.0 || u["output_tokens"] != 3.0 || u["total_tokens"] != 13.0 {
		t.Errorf("usage %v", u)
	}
	if first["instructions"] != "Be brief." || first["store"] != true {
		t.Errorf("echoed fields %v", first)
	}
	id1 := first["id"].(string)
	status, second := post(map[string]any{"input": []any{map[string]any{"role": "user", "content": "two"}}, "previous_response_id": id1})
	if status != 200 || outputText(t, second) != "echo: two" || second["previous_response_id"] != id1 {
		t.Fatalf("%d %v", status, second)
	}
	id2 := second["id"].(string)
	sid := strings.TrimSuffix(strings.TrimPrefix(id2, "resp_"), "_2")
	if s := e.session(sid); s.Turns != 2 || len(s.Messages) != 4 || s.Messages[2].Text() != "two" {
		t.Fatalf("session %s: %d turns, %d messages", sid, s.Turns, len(s.Messages))
	}

	// Continuing an older response branches the conversation there: a new
	// session with the turns up to it, the original unchanged.
	status, branched := post(map[string]any{"input": "x", "previous_response_id": id1})
	bid, _ := branched["id"].(string)
	if status != 200 || !strings.HasSuffix(bid, "_2") || strings.Contains(bid, sid) || branched["previous_response_id"] != id1 || outputText(t, branched) != "echo: x" {
		t.Fatalf("older: %d %v", status, branched)
	}
	if b := e.session(strings.TrimSuffix(strings.TrimPrefix(bid, "resp_"), "_2")); b.Turns != 2 || b.Messages[0].Text() != "one" || b.Messages[2].Text() != "x" {
		t.Fatalf("the branch: %d turns, %v", b.Turns, b.Messages)
	}
	if s := e.session(sid); s.Turns != 2 || s.Messages[2].Text() != "two" {
		t.Fatalf("the original after the branch: %d turns", s.Turns)
	}
	for _, bad := range []string{"resp_nothing", "resp_" + sid + "_9", "chatcmpl-1"} {
		resp := e.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "x", "previous_response_id": bad})
		if code, _ := errCode(t, resp); resp.StatusCode != 404 || code != "previous_response_not_found" {
			t.Fatalf("%s: %d %s", bad, resp.StatusCode, code)
		}
	}

	// store: false continues with the history but keeps nothing.
	status, third := post(map[string]any{"input": "three", "previous_response_id": id2, "store": false})
	if status != 200 || third["store"] != false || outputText(t, third) != "echo: three" {
		t.Fatalf("%d %v", status, third)
	}
	if s := e.session(sid); s.Turns != 2 {
		t.Fatalf("store:false stored a turn: %d turns", s.Turns)
	}
	if _, err := e.store.Load(context.Background(), strings.TrimPrefix(third["id"].(string), "resp_")); err == nil {
		t.Error("store:false made a session")
	}
	// The latest is still id2.
	status, _ = post(map[string]any{"input": "four", "previous_response_id": id2})
	if status != 200 {
		t.Fatalf("continuing after store:false: %d", status)
	}

	// GET returns a recent response.
	got := decode(t, e.do("GET", "/v1/responses/"+id1, nil))
	if got["id"] != id1 || outputText(t, got) != "echo: one" {
		t.Errorf("GET %v", got)
	}
}

func TestResponsesNamedConversation(t *testing.T) {
	e := newEnv(t, serve.Options{Tokens: map[string]string{"alice": "a", "bob": "b"}})
	for i, who := range []string{"a", "a", "b"} {
		resp := e.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "hi", "conversation": "notes"}, "Authorization: Bearer "+who)
		got := decode(t, resp)
		if resp.StatusCode != 200 || got["conversation"].(map[string]any)["id"] != "notes" {
			t.Fatalf("%d: %d %v", i, resp.StatusCode, got)
		}
	}
	// Each principal's conversation is its own session.
	if a, b := e.session("alice.notes"), e.session("bob.notes"); a.Turns != 2 || b.Turns != 1 {
		t.Fatalf("alice %d turns, bob %d", a.Turns, b.Turns)
	}
	// Bob can neither continue nor read Alice's responses.
	resp := e.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "x", "previous_response_id": "resp_alice.notes_2"}, "Authorization: Bearer b")
	if resp.StatusCode != 404 {
		t.Fatalf("bob continued alice's conversation: %d", resp.StatusCode)
	}
	resp.Body.Close()
	resp = e.do("GET", "/v1/responses/resp_alice.notes_2", nil, "Authorization: Bearer b")
	if resp.StatusCode != 404 {
		t.Fatalf("bob read alice's response: %d", resp.StatusCode)
	}
	resp.Body.Close()
}

func TestResponsesStream(t *testing.T) {
	e := newEnv(t, serve.Options{}, agentSpec{name: "calc", model: toolScript(t), tools: []tool.Tool{addTool()}})
	evs := readEvents(t, e.do("POST", "/v1/responses", map[string]any{"model": "calc", "input": "2+3?", "stream": true}))
	var types []string
	var text strings.Builder
	for i, ev := range evs {
		m := jsonOf(t, ev.data)
		if m["type"] != ev.name || m["sequence_number"] != float64(i) {
			t.Fatalf("event %d: name %q, data %s", i, ev.name, ev.data)
		}
		types = append(types, ev.name)
		if ev.name == "response.output_text.delta" {
			text.WriteString(m["delta"].(string))
		}
	}
	want := []string{
		"response.created", "response.in_progress",
		"response.output_item.added", "response.reasoning_summary_part.added", "response.reasoning_summary_text.delta",
		"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.output_item.added", "response.function_call_arguments.done", "response.output_item.done",
		"response.output_item.added", "response.output_item.done",
		"response.output_item.added", "response.content_part.added", "response.output_text.delta",
		"response.output_text.done", "response.content_part.done", "response.output_item.done",
		"response.completed",
	}
	// Deltas may come in several pieces: compare with repeats folded.
	var folded []string
	for _, ty := range types {
		if n := len(folded); n > 0 && folded[n-1] == ty && strings.HasSuffix(ty, ".delta") {
			continue
		}
		folded = append(folded, ty)
	}
	if strings.Join(folded, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s", strings.Join(folded, "\n"))
	}
	if text.String() != "Let me add.The sum is 5." {
		t.Errorf("text %q", text.String())
	}
	final := jsonOf(t, evs[len(evs)-1].data)["response"].(map[string]any)
	out := final["output"].([]any)
	kinds := ""
	for _, it := range out {
		item := it.(map[string]any)
		kinds += item["type"].(string) + " "
		if item["type"] == "function_call" && (item["status"] != "completed" || item["call_id"] != "call_1" || item["arguments"] != `{"a":2,"b":3}`) {
			t.Errorf("call item %v", item)
		}
		if item["type"] == "function_call_output" && (item["call_id"] != "call_1" || item["output"] != "5") {
			t.Errorf("output item %v", item)
		}
	}
	if kinds != "reasoning message function_call function_call_output message " || final["status"] != "completed" || final["usage"].(map[string]any)["total_tokens"] != 59.0 {
		t.Errorf("final %s %v", kinds, final)
	}
}

func TestResponsesInputItems(t *testing.T) {
	var seen *llm.Request
	m := &model{fn: nil}
	e := newEnv(t, serve.Options{}, agentSpec{name: "echo", model: recording(m, &seen)})
	resp := e.do("POST", "/v1/responses", map[string]any{"model": "echo", "store": false, "input": []any{
		map[string]any{"type": "message", "role": "developer", "content": "Answer in French."},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "input_text", "text": "weather?"}}},
		map[string]any{"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": `{"city":"Paris"}`},
		map[string]any{"type": "function_call_output", "call_id": "c1", "output": "sunny"},
		map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}},
	}})
	if resp.StatusCode != 200 {
		t.Fatalf("%d %v", resp.StatusCode, decode(t, resp))
	}
	resp.Body.Close()
	msgs := seen.Messages
	if msgs[0].Role != llm.RoleSystem || msgs[0].Text() != "Answer in French." || len(msgs) != 4 ||
		msgs[2].ToolUses()[0].Name != "get_weather" || msgs[3].Role != llm.RoleTool || msgs[3].Text() != "sunny" {
		t.Fatalf("messages %+v", msgs)
	}
}

// recording wraps m and keeps the last request in *seen.
func recording(m *model, seen **llm.Request) *model {
	return &model{fn: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
		*seen = req
		return m.Stream(ctx, req)
	}}
}

func TestDrain(t *testing.T) {
	t.Run("in-flight turn finishes", func(t *testing.T) {
		release, called := make(chan struct{}), make(chan struct{}, 1)
		slow := &model{fn: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
			called <- struct{}{}
			select { // not forever: a failed test closes the connection
			case <-release:
			case <-ctx.Done():
			}
			return llm.StreamOf(echo(req))
		}}
		e := newEnv(t, serve.Options{}, agentSpec{name: "slow", model: slow})
		done := make(chan int, 1)
		go func() {
			resp := e.do("POST", "/v1/responses", map[string]any{"model": "slow", "input": "hi", "conversation": "kept"})
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		testwait.Recv(t, called, "the model call")
		drained := make(chan error, 1)
		go func() { drained <- e.h.Drain(context.Background()) }()
		waitReady(t, e, 503)
		resp := e.do("POST", "/v1/responses", map[string]any{"model": "slow", "input": "late"})
		if code, _ := errCode(t, resp); resp.StatusCode != 503 || code != "shutting_down" {
			t.Fatalf("a new turn while draining: %d %s", resp.StatusCode, code)
		}
		close(release)
		if s := testwait.Recv(t, done, "the in-flight turn's answer"); s != 200 {
			t.Fatalf("the in-flight turn: %d", s)
		}
		if err := testwait.Recv(t, drained, "Drain to return"); err != nil {
			t.Fatal(err)
		}
		if e.session("kept").Turns != 1 {
			t.Fatal("the finished turn was not stored")
		}
	})
	t.Run("deadline cancels", func(t *testing.T) {
		started, ended := make(chan struct{}, 1), make(chan error, 1)
		e := newEnv(t, serve.Options{}, agentSpec{name: "slow", model: gated(started, ended)})
		done := make(chan map[string]any, 1)
		go func() {
			resp := e.do("POST", "/v1/responses", map[string]any{"model": "slow", "input": "hi", "conversation": "lost"})
			done <- decode(t, resp)
		}()
		testwait.Recv(t, started, "the model call to start")
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		drained := make(chan error, 1)
		go func() { drained <- e.h.Drain(ctx) }()
		if err := testwait.Recv(t, drained, "Drain to return"); err != context.DeadlineExceeded {
			t.Fatalf("Drain = %v", err)
		}
		if got := testwait.Recv(t, done, "the cancelled turn's answer"); got["error"].(map[string]any)["code"] != "shutting_down" {
			t.Fatalf("the cancelled turn answered %v", got)
		}
		testwait.Recv(t, ended, "the model call to end")
		if _, err := e.store.Load(context.Background(), "lost"); err == nil {
			t.Fatal("the cancelled turn was stored")
		}
	})
}

func waitReady(t *testing.T, e *env, status int) {
	t.Helper()
	for range 1000 {
		resp := e.do("GET", "/readyz", nil)
		resp.Body.Close()
		if resp.StatusCode == status {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("readyz never answered %d", status)
}

// TestResponsesSameConversationConcurrently: turns of one conversation
// run one at a time, each numbered after the one before.
func TestResponsesSameConversationConcurrently(t *testing.T) {
	e := newEnv(t, serve.Options{})
	const n = 8
	ids := make(chan string, n)
	for range n {
		go func() {
			resp := e.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "hi", "conversation": "shared"})
			ids <- decode(t, resp)["id"].(string)
		}()
	}
	seen := map[string]bool{}
	for range n {
		seen[testwait.Recv(t, ids, "a turn's id")] = true
	}
	for i := 1; i <= n; i++ {
		if !seen[fmt.Sprintf("resp_shared_%d", i)] {
			t.Fatalf("ids %v lack turn %d", seen, i)
		}
	}
	if s := e.session("shared"); s.Turns != n {
		t.Fatalf("%d turns stored", s.Turns)
	}
}

// TestDrainCoversMountedHandlers: the A2A and web handlers' turns are
// refused while draining, and cancelled at its deadline.
func TestDrainCoversMountedHandlers(t *testing.T) {
	entered := make(chan struct{}, 1)
	blocking := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-r.Context().Done()
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	e := newEnv(t, serve.Options{A2A: blocking, Web: blocking})
	done := make(chan int, 1)
	go func() {
		resp := e.do("POST", "/api/chat", map[string]any{})
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	testwait.Recv(t, entered, "the web turn to start")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	refused := make(chan int, 1)
	go func() {
		waitReady(t, e, 503)
		resp := e.do("POST", "/a2a/echo", map[string]any{})
		resp.Body.Close()
		refused <- resp.StatusCode
	}()
	drained := make(chan error, 1)
	go func() { drained <- e.h.Drain(ctx) }()
	if err := testwait.Recv(t, drained, "Drain to return"); err != context.DeadlineExceeded {
		t.Fatalf("Drain = %v", err)
	}
	if s := testwait.Recv(t, refused, "the A2A request's answer"); s != 503 {
		t.Errorf("an A2A request while draining: %d", s)
	}
	if s := testwait.Recv(t, done, "the web turn's answer"); s != 503 {
		t.Fatalf("the web turn ended with %d", s)
	}
}
