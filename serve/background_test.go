package serve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// paced answers "echo: ..." in pieces, one word a delta: the first two
// at once, the others once gate is closed (or never, until the turn is
// cancelled).
func paced(gate <-chan struct{}) *model {
	return &model{fn: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
		resp := echo(req)
		resp.Message = llm.AssistantText(resp.Message.Text() + " and some more words to stream")
		return func(yield func(llm.Event, error) bool) {
			for _, ev := range llm.Events(resp) {
				if ev.Type != llm.EventTextDelta {
					if !yield(ev, nil) {
						return
					}
					continue
				}
				words := strings.SplitAfter(ev.Delta, " ")
				for i, w := range words {
					if i >= 2 {
						select {
						case <-gate:
						case <-ctx.Done():
							yield(llm.Event{}, llm.Cancelled("fake", ctx.Err()))
							return
						}
					}
					if !yield(llm.Event{Type: llm.EventTextDelta, Index: ev.Index, Delta: w}, nil) {
						return
					}
				}
			}
		}
	}}
}

// sseEvents reads events from an open stream until fn says stop or the
// stream ends; it returns them decoded.
func sseEvents(t *testing.T, resp *http.Response, stop func(map[string]any) bool) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("event %s: %v", line, err)
		}
		out = append(out, m)
		if stop != nil && stop(m) {
			break
		}
	}
	return out
}

// waitStatus polls GET /v1/responses/{id} until its status is not
// in_progress, and returns it.
func waitStatus(t *testing.T, e *env, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		got := decode(t, e.do("GET", "/v1/responses/"+id, nil))
		if got["status"] != "in_progress" && got["status"] != "queued" {
			return got
		}
	}
	t.Fatalf("response %s still in progress", id)
	return nil
}

// TestBackgroundPoll: background: true answers at once with the response
// in progress; the turn goes on without the client and GET polls it to
// its end, on the process that ran it and on another over the same store.
func TestBackgroundPoll(t *testing.T) {
	store := memstore.New()
	gate := make(chan struct{})
	a := replica(t, store, agentSpec{name: "echo", model: paced(gate)})
	b := replica(t, store, agentSpec{name: "echo", model: paced(gate)})
	resp := a.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "hi", "background": true})
	got := decode(t, resp)
	if resp.StatusCode != 200 || got["status"] != "in_progress" || got["background"] != true {
		t.Fatalf("create: %d %v", resp.StatusCode, got)
	}
	id := got["id"].(string)
	if got := decode(t, b.do("GET", "/v1/responses/"+id, nil)); got["status"] != "in_progress" {
		t.Fatalf("GET on the other process while it runs: %v", got)
	}
	close(gate)
	for _, e := range []*env{a, b} {
		got := waitStatus(t, e, id)
		if got["status"] != "completed" || outputText(t, got) != "echo: hi and some more words to stream" {
			t.Fatalf("polled: %v", got)
		}
	}
	if s := a.session(strings.TrimSuffix(strings.TrimPrefix(id, "resp_"), "_1")); s.Turns != 1 {
		t.Fatalf("the session has %d turns", s.Turns)
	}
}

// TestBackgroundStreamResume: a streamed background turn goes on when
// its client leaves; GET ?stream=true&starting_after=N on another
// process resumes with event N+1, to the end; after the end, the whole
// stream is read again.
func TestBackgroundStreamResume(t *testing.T) {
	store := memstore.New()
	gate := make(chan struct{})
	a := replica(t, store, agentSpec{name: "echo", model: paced(gate)})
	b := replica(t, store, agentSpec{name: "echo", model: paced(gate)})
	resp := a.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "hi", "background": true, "stream": true})
	first := sseEvents(t, resp, func(m map[string]any) bool { return m["type"] == "response.output_text.delta" })
	resp.Body.Close() // the client leaves mid-turn
	id := first[0]["response"].(map[string]any)["id"].(string)
	last := int(first[len(first)-1]["sequence_number"].(float64))
	for i, ev := range first {
		if int(ev["sequence_number"].(float64)) != i {
			t.Fatalf("event %d has the sequence number %v", i, ev["sequence_number"])
		}
	}
	close(gate)
	resumed := b.do("GET", fmt.Sprintf("/v1/responses/%s?stream=true&starting_after=%d", id, last), nil)
	rest := sseEvents(t, resumed, nil)
	resumed.Body.Close()
	if len(rest) == 0 || int(rest[0]["sequence_number"].(float64)) != last+1 || rest[len(rest)-1]["type"] != "response.completed" {
		t.Fatalf("resumed after %d: %v", last, rest)
	}
	text := ""
	for i, ev := range append(first, rest...) {
		if int(ev["sequence_number"].(float64)) != i {
			t.Fatalf("event %d has the sequence number %v", i, ev["sequence_number"])
		}
		if ev["type"] == "response.output_text.delta" {
			text += ev["delta"].(string)
		}
	}
	if text != "echo: hi and some more words to stream" {
		t.Fatalf("the streamed text: %q", text)
	}
	// After the end, from anywhere.
	again := a.do("GET", "/v1/responses/"+id+"?stream=true&starting_after=0", nil)
	all := sseEvents(t, again, nil)
	again.Body.Close()
	if len(all) != len(first)+len(rest)-1 || all[len(all)-1]["type"] != "response.completed" {
		t.Fatalf("read again after the end: %d events, want %d", len(all), len(first)+len(rest)-1)
	}
}

// TestBackgroundCancel: POST /v1/responses/{id}/cancel on another process
// stops the turn where it runs: the response ends cancelled, nothing of
// the turn is stored, and the conversation goes on.
func TestBackgroundCancel(t *testing.T) {
	store := memstore.New()
	never := make(chan struct{})
	a := replica(t, store, agentSpec{name: "echo", model: paced(never)})
	b := replica(t, store, agentSpec{name: "echo", model: &model{}})
	got := decode(t, a.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "hang", "background": true, "conversation": "c1"}))
	id := got["id"].(string)
	resp := b.do("POST", "/v1/responses/"+id+"/cancel", nil)
	got = decode(t, resp)
	if resp.StatusCode != 200 || got["status"] != "cancelled" {
		t.Fatalf("cancel: %d %v", resp.StatusCode, got)
	}
	if got := waitStatus(t, a, id); got["status"] != "cancelled" {
		t.Fatalf("GET after cancel: %v", got)
	}
	if s, err := store.Load(t.Context(), "c1"); err == nil && s.Turns != 0 {
		t.Fatalf("the cancelled turn was stored: %d turns", s.Turns)
	}
	got = decode(t, b.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "next", "conversation": "c1"}))
	if got["id"] != id || outputText(t, got) != "echo: next" {
		t.Fatalf("the conversation after the cancel: %v", got)
	}
	// A foreground response cannot be cancelled.
	resp = b.do("POST", "/v1/responses/"+id+"/cancel", nil)
	if code, _ := errCode(t, resp); resp.StatusCode != 400 {
		t.Fatalf("cancelling a foreground response: %d %s", resp.StatusCode, code)
	}
}

// TestBackgroundLimit: past Options.MaxBackground a principal's next
// background turn is refused with 429 until one ends.
func TestBackgroundLimit(t *testing.T) {
	gate := make(chan struct{})
	e := newEnv(t, serve.Options{MaxBackground: 1}, agentSpec{name: "echo", model: paced(gate)})
	got := decode(t, e.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "one", "background": true}))
	resp := e.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "two", "background": true})
	if code, _ := errCode(t, resp); resp.StatusCode != 429 || code != "too_many_background_responses" {
		t.Fatalf("the second background turn: %d %s", resp.StatusCode, code)
	}
	close(gate)
	waitStatus(t, e, got["id"].(string))
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp := e.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "three", "background": true})
		got := decode(t, resp)
		if resp.StatusCode == 200 {
			waitStatus(t, e, got["id"].(string))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the first ended: %d %v", resp.StatusCode, got)
		}
	}
}

// TestBackgroundCancelAnswersCalls: a background turn cancelled while a
// tool call waits for approval ends cancelled with that call answered in
// its output, and stores nothing (the session stays well-formed).
func TestBackgroundCancelAnswersCalls(t *testing.T) {
	m := llmtest.New(llmtest.Reply(llmtest.Call("call_1", "add", `{"a":2,"b":3}`)))
	e := newEnv(t, serve.Options{}, agentSpec{name: "calc", model: m, tools: []tool.Tool{addTool(tool.WithApproval())}})
	got := decode(t, e.do("POST", "/v1/responses", map[string]any{"model": "calc", "input": "add", "background": true, "conversation": "calls"}))
	id := got["id"].(string)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the call never waited for approval")
		}
		if pending := decode(t, e.do("GET", "/v1/approvals", nil))["data"].([]any); len(pending) > 0 {
			break
		}
	}
	got = decode(t, e.do("POST", "/v1/responses/"+id+"/cancel", nil))
	if got["status"] != "cancelled" {
		t.Fatalf("cancel: %v", got)
	}
	calls, outputs := map[string]bool{}, map[string]string{}
	for _, it := range got["output"].([]any) {
		item := it.(map[string]any)
		switch item["type"] {
		case "function_call":
			calls[item["call_id"].(string)] = true
		case "function_call_output":
			outputs[item["call_id"].(string)] = item["output"].(string)
		}
	}
	if !calls["call_1"] || !strings.Contains(outputs["call_1"], "cancelled") || len(calls) != len(outputs) {
		t.Fatalf("the cancelled response's calls %v, outputs %v", calls, outputs)
	}
	if s, err := e.store.Load(t.Context(), "calls"); err == nil && (s.Turns != 0 || len(s.Messages) != 0) {
		t.Fatalf("the cancelled turn left %d turns, %d messages", s.Turns, len(s.Messages))
	}
}

// TestAGUIReconnect: an AG-UI run goes on when its client leaves; another
// process replays it from its first event (a POST to its run URL, as an
// AG-UI client reconnects) or after event N (GET ?after=N), to
// RUN_FINISHED.
func TestAGUIReconnect(t *testing.T) {
	store := memstore.New()
	gate := make(chan struct{})
	a := replica(t, store, agentSpec{name: "echo", model: paced(gate)})
	b := replica(t, store, agentSpec{name: "echo", model: paced(gate)})
	input := map[string]any{"threadId": "th1", "runId": "run-1", "state": map[string]any{"k": 1},
		"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "hi"}}, "tools": []any{}}
	resp := a.do("POST", "/agui/echo", input)
	first := sseEvents(t, resp, func(m map[string]any) bool { return m["type"] == "TEXT_MESSAGE_CONTENT" })
	resp.Body.Close() // the client leaves mid-run
	if first[0]["type"] != "RUN_STARTED" || first[1]["type"] != "STATE_SNAPSHOT" {
		t.Fatalf("the run began with %v", first)
	}
	close(gate)
	n := len(first) - 1
	rest := b.do("GET", fmt.Sprintf("/agui/echo/runs/run-1?after=%d", n), nil)
	evs := sseEvents(t, rest, nil)
	rest.Body.Close()
	text := ""
	for _, ev := range append(first, evs...) {
		if ev["type"] == "TEXT_MESSAGE_CONTENT" {
			text += ev["delta"].(string)
		}
	}
	if len(evs) == 0 || evs[len(evs)-1]["type"] != "RUN_FINISHED" || text != "echo: hi and some more words to stream" {
		t.Fatalf("reconnected after %d: %q, %v", n, text, evs)
	}
	all := b.do("POST", "/agui/echo/runs/run-1", map[string]any{})
	replay := sseEvents(t, all, nil)
	all.Body.Close()
	if len(replay) != len(first)+len(evs) || replay[0]["type"] != "RUN_STARTED" {
		t.Fatalf("the whole run again: %d events, want %d", len(replay), len(first)+len(evs))
	}
}

// TestAGUICancel: an AG-UI run whose client left is stopped through
// another process (POST /agui/{agent}/runs/{run}/cancel): it ends
// RUN_ERROR "cancelled", the answer says so, and a reconnecting client
// reads the same end; a run that is not running is a 404.
func TestAGUICancel(t *testing.T) {
	store := memstore.New()
	gate := make(chan struct{}) // never opened: the run waits mid-answer
	defer close(gate)
	a := replica(t, store, agentSpec{name: "echo", model: paced(gate)})
	b := replica(t, store, agentSpec{name: "echo", model: paced(gate)})
	input := map[string]any{"threadId": "th1", "runId": "run-c", "state": map[string]any{},
		"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "hi"}}, "tools": []any{}}
	resp := a.do("POST", "/agui/echo", input)
	sseEvents(t, resp, func(m map[string]any) bool { return m["type"] == "TEXT_MESSAGE_CONTENT" })
	resp.Body.Close() // the client leaves; the run goes on

	got := decode(t, b.do("POST", "/agui/echo/runs/run-c/cancel", nil))
	if got["status"] != "cancelled" || got["runId"] != "run-c" {
		t.Fatalf("cancel answered %v", got)
	}
	rest := b.do("GET", "/agui/echo/runs/run-c?after=0", nil)
	evs := sseEvents(t, rest, nil)
	rest.Body.Close()
	last := evs[len(evs)-1]
	if last["type"] != "RUN_ERROR" || last["code"] != "cancelled" {
		t.Fatalf("the run ended with %v", last)
	}
	for _, run := range []string{"run-c", "no-such-run"} { // ended, unknown
		r := b.do("POST", "/agui/echo/runs/"+run+"/cancel", nil)
		r.Body.Close()
		if r.StatusCode != 404 {
			t.Fatalf("cancelling %s: %d, want 404", run, r.StatusCode)
		}
	}
}
