package agtemporal_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestRecordAGUIHistory records testdata/history-v2-agui.json: an AG-UI
// run of agcore serve --temporal (TurnInput.AGUI), a tool call then the
// answer, its events flushed by the workflow and its end written by the
// AGUIEnd activity. It runs only with AGCORE_RECORD_HISTORIES=1 (and a
// dev server):
//
//	AGCORE_RECORD_HISTORIES=1 go test -run TestRecordAGUIHistory .
func TestRecordAGUIHistory(t *testing.T) {
	recording(t, "history-v2-agui.json")
	_, cl := devServer(t)
	ctx := context.Background()
	ts, _, _ := tools(t)
	model := llmtest.New(
		llmtest.Reply(llm.Text{Text: "Echoing."}, llmtest.Call("c1", "echo", `{"text":"one"}`)),
		llmtest.Text("echoed"),
	)
	store := memstore.New()
	startRecorder(t, cl, "record-agui", agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m", Tools: ts, Store: store})
	// The lease record the serving process wrote when it accepted the run.
	if _, err := store.CreateRecord(ctx, "agcore.agui.runs", session.Record{Key: "local/rec-agui", Value: []byte("agcore"), Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	l := serve.AGUILog{Key: "local/rec-agui", Run: "agui.rec-agui", ThreadID: "th", RunID: "rec-agui", Agent: "agcore", Seq: 3}
	in := agtemporal.TurnInput{SessionID: "rec-agui", TurnID: "rec-agui", Messages: []llm.Message{llm.UserText("echo one")}, AGUI: &l}
	if err := agtemporal.StartAGUI(ctx, cl, "record-agui", in); err != nil {
		t.Fatal(err)
	}
	id := agtemporal.AGUIWorkflowID(l.Key)
	if err := cl.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	events, _ := writeHistory(t, cl, id, "", "history-v2-agui.json")
	logged, final, err := (&runlog.Log{Records: store}).Read(ctx, l.Run, -1)
	if err != nil || !final || logged[0].Seq != 3 || logged[len(logged)-1].Type != "RUN_FINISHED" {
		t.Fatalf("the run's log: %v, final %v, %v", logged, final, err)
	}
	if _, err := store.GetRecord(ctx, "agcore.agui.runs", l.Key); err == nil {
		t.Fatal("the run's lease record is still there")
	}
	t.Logf("an AG-UI run of one tool call: %d history events, %d AG-UI events", events, len(logged))
}

// TestRecordAGUIApprovalHistory records
// testdata/history-v2-agui-approval.json: an AG-UI run whose call waits
// for approval (workflow.GetVersion agcore.agui-approval-event at 1: the
// interrupt event agcore.approval_required written by the workflow), then
// approved, and the answer. It runs only with AGCORE_RECORD_HISTORIES=1
// (and a dev server):
//
//	AGCORE_RECORD_HISTORIES=1 go test -run TestRecordAGUIApprovalHistory .
func TestRecordAGUIApprovalHistory(t *testing.T) {
	recording(t, "history-v2-agui-approval.json")
	_, cl := devServer(t)
	ctx := context.Background()
	ts, _, _ := tools(t)
	model := llmtest.New(
		llmtest.Reply(llm.Text{Text: "Writing."}, llmtest.Call("w1", "write", `{"text":"x"}`)),
		llmtest.Text("written"),
	)
	store := memstore.New()
	startRecorder(t, cl, "record-agui-approval", agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m", Tools: ts, Store: store})
	if _, err := store.CreateRecord(ctx, "agcore.agui.runs", session.Record{Key: "local/rec-agui-approval", Value: []byte("agcore"), Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	l := serve.AGUILog{Key: "local/rec-agui-approval", Run: "agui.rec-agui-approval", ThreadID: "th", RunID: "rec-agui-approval", Agent: "agcore", Seq: 3}
	in := agtemporal.TurnInput{SessionID: "rec-agui-approval", TurnID: "rec-agui-approval", Messages: []llm.Message{llm.UserText("write x")}, AGUI: &l}
	if err := agtemporal.StartAGUI(ctx, cl, "record-agui-approval", in); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		p, err := agtemporal.PendingAGUI(ctx, cl, l.Key)
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
	if err := agtemporal.DecideAGUI(ctx, cl, l.Key, agtemporal.Decision{CallID: "w1", Approve: true}); err != nil {
		t.Fatal(err)
	}
	id := agtemporal.AGUIWorkflowID(l.Key)
	if err := cl.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	events, b := writeHistory(t, cl, id, "", "history-v2-agui-approval.json")
	logged, final, err := (&runlog.Log{Records: store}).Read(ctx, l.Run, -1)
	if err != nil || !final || logged[len(logged)-1].Type != "RUN_FINISHED" {
		t.Fatalf("the run's log: %v, final %v, %v", logged, final, err)
	}
	custom := 0
	for _, ev := range logged {
		if ev.Type == "CUSTOM" {
			custom++
		}
	}
	// The marker's change id is a JSON payload, base64 in the history.
	marker := []byte(base64.StdEncoding.EncodeToString([]byte(`"agcore.agui-approval-event"`)))
	if custom != 1 || !bytes.Contains(b, marker) {
		t.Fatalf("%d interrupt events; the version marker recorded: %v", custom, bytes.Contains(b, marker))
	}
	t.Logf("an AG-UI run of one approved call: %d history events, %d AG-UI events", events, len(logged))
}
