package agtemporal_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/session/memstore"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestRecordA2AHistory records testdata/history-v2-a2a.json: an A2A task
// of agcore serve --temporal (TurnInput.A2A) whose call waits for
// approval (the task input-required), then approved, and the answer: the
// task's changes written by the A2ATask activity, the last one final. It
// runs only with AGCORE_RECORD_HISTORIES=1 (and a dev server):
//
//	AGCORE_RECORD_HISTORIES=1 go test -run TestRecordA2AHistory .
func TestRecordA2AHistory(t *testing.T) {
	recording(t, "history-v2-a2a.json")
	_, cl := devServer(t)
	ctx := context.Background()
	ts, _, _ := tools(t)
	model := llmtest.New(
		llmtest.Reply(llm.Text{Text: "Writing."}, llmtest.Call("w1", "write", `{"text":"x"}`)),
		llmtest.Text("written"),
	)
	store := memstore.New()
	startRecorder(t, cl, "record-a2a", agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m", Tools: ts, Store: store})
	// The task as the serving process stored it when it accepted it.
	task := json.RawMessage(`{"kind":"task","id":"rec-a2a","contextId":"ctx-a2a","status":{"state":"working","timestamp":"2026-01-01T00:00:00Z"},` +
		`"history":[{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"write x"}],"taskId":"rec-a2a","contextId":"ctx-a2a"}]}`)
	l := a2aserve.TaskLog{Agent: "agcore", TaskID: "rec-a2a", Principal: "local", Task: task, SessionID: "rec-a2a", TurnsBefore: 0}
	in := agtemporal.TurnInput{SessionID: "rec-a2a", TurnID: "rec-a2a", Messages: []llm.Message{llm.UserText("write x")}, A2A: &l}
	if err := agtemporal.StartA2A(ctx, cl, "record-a2a", in); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		p, err := agtemporal.PendingA2A(ctx, cl, "agcore", "rec-a2a")
		if err != nil {
			t.Fatal(err)
		}
		if len(p) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the call never waited")
		}
	}
	rec, err := store.GetRecord(ctx, "agcore.a2a.tasks", "agcore/rec-a2a")
	for deadline := time.Now().Add(time.Minute); err != nil || !strings.Contains(string(rec.Value), `input-required`); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the task was not stored input-required: %s %v", rec.Value, err)
		}
		rec, err = store.GetRecord(ctx, "agcore.a2a.tasks", "agcore/rec-a2a")
	}
	if err := agtemporal.DecideA2A(ctx, cl, "agcore", "rec-a2a", agtemporal.Decision{CallID: "w1", Approve: true}); err != nil {
		t.Fatal(err)
	}
	id := agtemporal.A2AWorkflowID("agcore", "rec-a2a")
	if err := cl.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	events, _ := writeHistory(t, cl, id, "", "history-v2-a2a.json")
	rec, err = store.GetRecord(ctx, "agcore.a2a.tasks", "agcore/rec-a2a")
	if err != nil || !strings.Contains(string(rec.Value), `"state":"completed"`) || !strings.Contains(string(rec.Value), `"remote":true`) {
		t.Fatalf("the task's record: %s, %v", rec.Value, err)
	}
	t.Logf("an A2A task of one approved call: %d history events", events)
}
