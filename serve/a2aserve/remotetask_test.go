package a2aserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

// startedTask is a task as the accepting process stores it: working.
func startedTask(id string) json.RawMessage {
	return json.RawMessage(`{"kind":"task","id":"` + id + `","contextId":"ctx-1","status":{"state":"working","timestamp":"2026-01-01T00:00:00Z"},` +
		`"history":[{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}],"taskId":"` + id + `","contextId":"ctx-1"}]}`)
}

// fixedClock is a clock that moves one second at each reading.
func fixedClock() func() time.Time {
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return func() time.Time { t = t.Add(time.Second); return t }
}

// counter makes ids prefix + n.
func counter() func(string) string {
	n := 0
	return func(prefix string) string { n++; return fmt.Sprintf("%s%d", prefix, n) }
}

func decodeTask(t *testing.T, b []byte) *a2a.Task {
	t.Helper()
	var task a2a.Task
	if err := json.Unmarshal(b, &task); err != nil {
		t.Fatal(err)
	}
	return &task
}

func statusText(task *a2a.Task) string {
	if task.Status.Message == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range task.Status.Message.Parts {
		if tp, ok := p.(a2a.TextPart); ok {
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

// TestTaskEvents: a remote task's updates become the task's progress as
// a task of the serving process shows it, and its end its final state.
func TestTaskEvents(t *testing.T) {
	answered := &agent.Response{RunID: "r1", Model: "m", Message: llm.AssistantText("The answer."), FinishReason: llm.FinishStop}
	call := agent.Update{Kind: agent.UpdateToolCall, ToolCall: llm.ToolUse{ID: "c1", Name: "delete_file", Input: json.RawMessage(`{"path":"x"}`)}}
	result := agent.Update{Kind: agent.UpdateToolResult, ToolResult: &llm.Message{Role: llm.RoleTool, ToolCallID: "c1"}}
	text := func(s string) agent.Update { return agent.Update{Kind: agent.UpdateText, Text: s} }
	for _, tc := range []struct {
		name string
		// steps: an update, or "wait" (the call c1 waits for a decision)
		steps     []any
		resp      *agent.Response
		err       error
		cancelled bool
		// states are the states of the tasks Take returned after each step
		// ("" when it returned none); want is the final state, its status
		// text (a prefix) and answer.
		states           []a2a.TaskState
		want             a2a.TaskState
		wantText, answer string
	}{
		{name: "answer", steps: []any{text("The "), text("answer.")}, resp: answered,
			states: []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateWorking}, want: a2a.TaskStateCompleted, answer: "The answer."},
		{name: "tool call", steps: []any{text("Deleting. "), call, result, text("The answer.")}, resp: answered,
			states: []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateWorking, "", a2a.TaskStateWorking}, want: a2a.TaskStateCompleted, answer: "The answer."},
		{name: "approval", steps: []any{call, "wait", result, text("The answer.")}, resp: answered,
			states: []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateInputRequired, a2a.TaskStateWorking, a2a.TaskStateWorking}, want: a2a.TaskStateCompleted, answer: "The answer."},
		{name: "failed", steps: []any{text("Half")}, err: errors.New("boom"),
			states: []a2a.TaskState{a2a.TaskStateWorking}, want: a2a.TaskStateFailed, wantText: "The turn failed: boom", answer: "Half"},
		{name: "cancelled while waiting", steps: []any{call, "wait"}, err: context.Canceled, cancelled: true,
			states: []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateInputRequired}, want: a2a.TaskStateCanceled, wantText: "Canceled."},
		{name: "no response", err: nil, want: a2a.TaskStateFailed, wantText: "The turn failed: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func() (finals [][]byte) {
				ev, err := a2aserve.NewTaskEvents(a2aserve.TaskLog{Agent: "helper", TaskID: "t1", Task: startedTask("t1")}, fixedClock(), counter())
				if err != nil {
					t.Fatal(err)
				}
				if _, ok := ev.Take(); ok {
					t.Fatal("Take before any update returned the task")
				}
				var states []a2a.TaskState
				for _, s := range tc.steps {
					if s == "wait" {
						ev.Waiting("c1", "delete_file", json.RawMessage(`{"path":"x"}`))
					} else {
						ev.Update(s.(agent.Update))
					}
					b, ok := ev.Take()
					if !ok {
						states = append(states, "")
						continue
					}
					task := decodeTask(t, b)
					states = append(states, task.Status.State)
					if task.Status.State == a2a.TaskStateInputRequired && !strings.Contains(statusText(task), "[approval id c1]") {
						t.Errorf("the input-required status: %q", statusText(task))
					}
					finals = append(finals, b)
				}
				if !slices.Equal(states, tc.states) {
					t.Errorf("the states taken: %v, want %v", states, tc.states)
				}
				final, failed := ev.End(tc.resp, tc.err, tc.cancelled)
				if (failed != nil) != (tc.want == a2a.TaskStateFailed) {
					t.Errorf("End's error: %v", failed)
				}
				task := decodeTask(t, final)
				if task.Status.State != tc.want || !strings.HasPrefix(statusText(task), tc.wantText) || answer(task) != tc.answer {
					t.Errorf("the final task: %s %q %q", task.Status.State, statusText(task), answer(task))
				}
				if tc.want == a2a.TaskStateCompleted {
					meta, _ := task.Metadata[a2aserve.MetadataKey].(map[string]any)
					if meta["run_id"] != "r1" || meta["model"] != "m" || task.Artifacts[0].Metadata == nil {
						t.Errorf("the completed task's metadata: %v", task.Metadata)
					}
				}
				if len(task.History) == 0 || task.History[0].ID != "m1" {
					t.Errorf("the task's history lost its first message: %+v", task.History)
				}
				return append(finals, final)
			}
			// Given the same updates, clock and ids: the same tasks.
			if first, again := run(), run(); !slices.EqualFunc(first, again, func(a, b []byte) bool { return string(a) == string(b) }) {
				t.Error("the same updates made different tasks")
			}
		})
	}
}

// pushed is a webhook recording the states it is sent.
type pushed struct {
	mu     sync.Mutex
	states []string
}

func (p *pushed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var task a2a.Task
	_ = json.NewDecoder(r.Body).Decode(&task)
	p.mu.Lock()
	p.states = append(p.states, r.Header.Get("X-A2A-Notification-Token")+" "+string(task.Status.State))
	p.mu.Unlock()
}

func (p *pushed) got() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.states)
}

// TestTaskWriterStore: the writes of a remote task store its last change
// marked remote and notify its webhooks of each change of state, once;
// the final one places the task's turn in its session.
func TestTaskWriterStore(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	hook := &pushed{}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	cfg, _ := json.Marshal(a2a.PushConfig{ID: "c1", URL: srv.URL + "/hook", Token: "tok"})
	if _, err := store.PutRecord(ctx, "agcore.a2a.push", session.Record{Key: "helper/t1/c1", Value: cfg, Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	l := a2aserve.TaskLog{Agent: "helper", TaskID: "t1", Principal: "alice", Task: startedTask("t1"), SessionID: "s1", TurnsBefore: 0,
		PushAllowHosts: []string{"127.0.0.1"}}
	var w a2aserve.TaskWriter
	if err := w.Store(ctx, store, store, l, []json.RawMessage{l.Task}, false); err != nil { // as the accepting process stored it
		t.Fatal(err)
	}
	ev, err := a2aserve.NewTaskEvents(l, fixedClock(), counter())
	if err != nil {
		t.Fatal(err)
	}
	var batch []json.RawMessage
	take := func() {
		if b, ok := ev.Take(); ok {
			batch = append(batch, b)
		}
	}
	ev.Update(agent.Update{Kind: agent.UpdateText, Text: "Deleting."})
	take()
	ev.Waiting("c9", "delete_file", json.RawMessage(`{}`))
	take()
	ev.Update(agent.Update{Kind: agent.UpdateToolResult, ToolResult: &llm.Message{Role: llm.RoleTool, ToolCallID: "c9"}})
	take()
	for range 2 { // written again (a retry): nothing sent twice
		if err := w.Store(ctx, store, store, l, batch, false); err != nil {
			t.Fatal(err)
		}
	}
	// The turn is stored in its session, then the task ends.
	if err := store.Append(ctx, "s1", session.Turn{ID: "r1", Messages: []llm.Message{llm.UserText("hi"), llm.AssistantText("Done.")}}); err != nil {
		t.Fatal(err)
	}
	final, _ := ev.End(&agent.Response{RunID: "r1", Message: llm.AssistantText("Done.")}, nil, false)
	if err := w.Store(ctx, store, store, l, []json.RawMessage{final}, true); err != nil {
		t.Fatal(err)
	}
	rec, err := store.GetRecord(ctx, "agcore.a2a.tasks", "helper/t1")
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Owner  string
		Task   a2a.Task
		Remote bool
	}
	if err := json.Unmarshal(rec.Value, &tr); err != nil {
		t.Fatal(err)
	}
	meta, _ := tr.Task.Metadata[a2aserve.MetadataKey].(map[string]any)
	if tr.Owner != "alice" || !tr.Remote || tr.Task.Status.State != a2a.TaskStateCompleted || answer(&tr.Task) != "Done." || meta["session_turn"] != float64(1) {
		t.Fatalf("the stored task: %s", rec.Value)
	}
	want := []string{"tok working", "tok input-required", "tok working", "tok completed"}
	for deadline := time.Now().Add(10 * time.Second); !slices.Equal(hook.got(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the webhook got %q, want %q", hook.got(), want)
		}
	}
}
