package agtemporal_test

import (
	"context"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestRecordWebHistory records testdata/history-v2-web.json: a chat turn
// of agcore serve --temporal's web page (TurnInput.Web), a tool call, then
// a call that waits for approval (the page's approval event written by the
// workflow), approved, then the answer; its events flushed by the
// workflow and its end written by the WebEnd activity. It runs only with
// AGCORE_RECORD_HISTORIES=1 (and a dev server):
//
//	AGCORE_RECORD_HISTORIES=1 go test -run TestRecordWebHistory .
func TestRecordWebHistory(t *testing.T) {
	recording(t, "history-v2-web.json")
	_, cl := devServer(t)
	ctx := context.Background()
	ts, _, _ := tools(t)
	model := llmtest.New(
		llmtest.Reply(llm.Text{Text: "Echoing."}, llmtest.Call("c1", "echo", `{"text":"one"}`)),
		llmtest.Reply(llm.Text{Text: "Writing."}, llmtest.Call("w1", "write", `{"text":"x"}`)),
		llmtest.Text("written"),
	)
	store := memstore.New()
	startRecorder(t, cl, "record-web", agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m", Tools: ts, Store: store})
	// The run record the serving process wrote when it accepted the turn.
	l := web.ChatLog{Key: "local/rec-web", Session: "rec-web", Run: "rec-web", Seq: 2}
	if _, err := store.PutRecord(ctx, "agcore.web.runs", session.Record{Key: l.Key, Value: []byte(`{"run":"rec-web","agent":"agcore","started":1,"remote":true}`), Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	in := agtemporal.TurnInput{SessionID: "rec-web", TurnID: "rec-web", Messages: []llm.Message{llm.UserText("echo one, write x")}, Web: &l}
	if err := agtemporal.StartWeb(ctx, cl, "record-web", in); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		p, err := agtemporal.PendingWeb(ctx, cl, l.ID())
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
	if err := agtemporal.DecideWeb(ctx, cl, l.ID(), agtemporal.Decision{CallID: "w1", Approve: true}); err != nil {
		t.Fatal(err)
	}
	id := agtemporal.WebWorkflowID(l.ID())
	if err := cl.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	events, _ := writeHistory(t, cl, id, "", "history-v2-web.json")
	logged, final, err := (&runlog.Log{Records: store}).Read(ctx, l.EventLog(), -1)
	if err != nil || !final || logged[0].Seq != 2 || logged[len(logged)-1].Type != "finish" {
		t.Fatalf("the turn's log: %v, final %v, %v", logged, final, err)
	}
	approvals := 0
	for _, ev := range logged {
		if ev.Type == "approval" {
			approvals++
		}
	}
	if approvals != 1 {
		t.Fatalf("%d approval events in %v", approvals, logged)
	}
	if _, err := store.GetRecord(ctx, "agcore.web.runs", l.Key); err == nil {
		t.Fatal("the turn's run record is still there")
	}
	t.Logf("a web chat turn of a tool call and an approved call: %d history events, %d page events", events, len(logged))
}
