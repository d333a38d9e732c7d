package agtemporal_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestReplayCommittedHistories replays the workflow histories committed in
// testdata: version 1's (the frozen TurnWorkflowV1), and version 2's
// (TurnWorkflow, recorded from a dev server by TestRecordHistories). A
// change to the workflows that would break a running turn fails here.
func TestReplayCommittedHistories(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "history-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 16 {
		t.Fatalf("found %d committed histories, want 16 (4 of version 1, 12 of version 2)", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(agtemporal.TurnWorkflowV1, workflow.RegisterOptions{Name: agtemporal.TurnWorkflowV1Name})
			r.RegisterWorkflowWithOptions(agtemporal.TurnWorkflow, workflow.RegisterOptions{Name: agtemporal.TurnWorkflowName})
			r.RegisterWorkflowWithOptions(agtemporal.SessionWorkflow, workflow.RegisterOptions{Name: agtemporal.SessionWorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(quietLogger(), f); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRecordHistories records the histories TestReplayCommittedHistories
// replays. It runs only with AGCORE_RECORD_HISTORIES=1 (and a dev server):
//
//	AGCORE_RECORD_HISTORIES=1 go test -run TestRecordHistories .
func TestRecordHistories(t *testing.T) {
	recording(t, "history-*.json")
	_, cl := devServer(t)
	ctx := context.Background()
	ts, _, _ := tools(t)
	model := llmtest.New(
		// tool-loop
		llmtest.Reply(llmtest.Call("c1", "echo", `{"text":"one"}`), llmtest.Call("c2", "echo", `{"text":"two"}`), llmtest.Call("c3", "echo", `{"text":"three"}`)),
		llmtest.Text("three echoes"),
		// approval
		llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`), llmtest.Call("w2", "write", `{"text":"y"}`)),
		llmtest.Text("one written, one denied"),
		// retry
		llmtest.Fail(&llm.Error{Kind: llm.KindRateLimited, StatusCode: 429, Provider: "fake", RetryAfter: 1500 * time.Millisecond}),
		llmtest.Text("after a rate limit"),
		// session
		llmtest.Text("first turn of the session"),
		// agents: a handoff, then the answer of the agent handed to
		llmtest.Reply(llmtest.Call("h1", "transfer_to_billing", `{}`)),
		llmtest.Text("billing answers"),
	)
	startRecorder(t, cl, "record", agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m", Tools: ts, Store: memstore.New()})
	turn := func(id string, msg string) client.WorkflowRun {
		run, err := agtemporal.StartTurn(ctx, cl, "record", agtemporal.TurnInput{SessionID: "rec", TurnID: id, Messages: []llm.Message{llm.UserText(msg)}})
		if err != nil {
			t.Fatal(err)
		}
		return run
	}
	save := func(name string, run client.WorkflowRun) {
		writeHistory(t, cl, run.GetID(), run.GetRunID(), "history-v2-"+name+".json")
	}
	_ = os.MkdirAll("testdata", 0o755)

	run := turn("tool-loop", "echo three times")
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	save("tool-loop", run)

	run = turn("approval", "write two")
	for {
		p, err := agtemporal.Pending(ctx, cl, run.GetID())
		if err != nil {
			t.Fatal(err)
		}
		if len(p) == 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := agtemporal.Decide(ctx, cl, run.GetID(), agtemporal.Decision{CallID: "w1", Approve: true}); err != nil {
		t.Fatal(err)
	}
	if err := agtemporal.Decide(ctx, cl, run.GetID(), agtemporal.Decision{CallID: "w2", Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	save("approval", run)

	run = turn("retry", "hi")
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	save("retry", run)

	srun, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: agtemporal.SessionWorkflowID("rec-session"), TaskQueue: "record"},
		agtemporal.SessionWorkflowName, agtemporal.SessionInput{Turn: agtemporal.TurnInput{SessionID: "rec-session"}, TurnsPerRun: 1})
	if err != nil {
		t.Fatal(err)
	}
	h, err := cl.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: srun.GetID(), UpdateName: agtemporal.TurnUpdate,
		Args: []any{agtemporal.TurnRequest{TurnID: "s-1", Messages: []llm.Message{llm.UserText("hello")}}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err != nil {
		t.Fatal(err)
	}
	var res agtemporal.TurnResult
	if err := h.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	// The first run ends by continuing as new.
	for {
		d, err := cl.DescribeWorkflowExecution(ctx, srun.GetID(), srun.GetRunID())
		if err != nil {
			t.Fatal(err)
		}
		if d.WorkflowExecutionInfo.CloseTime != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	save("session-continue-as-new", srun)
	_ = cl.TerminateWorkflow(ctx, srun.GetID(), "", "recorded")

	// Agents as data: a guarded triage agent with a token budget hands
	// the turn over to billing.
	run, err = agtemporal.StartTurn(ctx, cl, "record", agtemporal.TurnInput{SessionID: "rec", TurnID: "agents",
		Messages: []llm.Message{llm.UserText("my bill?")}, Agents: []agent.Spec{
			{Name: "triage", Tools: []string{}, Handoffs: []string{"billing"}, Budget: budget.Limits{Tokens: 100000},
				Guardrails: []agent.GuardrailSpec{{Name: "no-passwords", Stage: "input", Pattern: "(?i)password"}}},
			{Name: "billing", Tools: []string{"echo"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	save("agents", run)
}

// TestRecordResponseHistory records testdata/history-v2-response-flush.json:
// a background response of agcore serve --temporal (TurnInput.Response), a
// tool call then the answer, its events flushed by the workflow, whose
// pause between writes ends with the turn (version 1 of
// "agcore.response-flush"; testdata/history-v2-response.json was recorded
// before it and stays). It runs only with AGCORE_RECORD_HISTORIES=1 (and a
// dev server):
//
//	AGCORE_RECORD_HISTORIES=1 go test -run TestRecordResponseHistory .
func TestRecordResponseHistory(t *testing.T) {
	recording(t, "history-v2-response-flush.json")
	_, cl := devServer(t)
	ctx := context.Background()
	ts, _, _ := tools(t)
	model := llmtest.New(
		llmtest.Reply(llm.Text{Text: "Echoing."}, llmtest.Call("c1", "echo", `{"text":"one"}`)),
		llmtest.Text("echoed"),
	)
	store := memstore.New()
	startRecorder(t, cl, "record-response", agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m", Tools: ts, Store: store})
	// The record the serving process wrote when it accepted the response.
	obj := []byte(`{"id":"resp_rec-resp_1","object":"response","created_at":1,"status":"in_progress","model":"agcore","output":[],"background":true}`)
	if _, err := store.CreateRecord(ctx, "agcore.responses", session.Record{Key: "resp_rec-resp_1", Expires: time.Now().Add(time.Hour),
		Value: []byte(`{"status":"in_progress","background":true,"lease":9999999999999,"run":"resp_rec-resp_1.r1","response":` + string(obj) + `}`)}); err != nil {
		t.Fatal(err)
	}
	in := agtemporal.TurnInput{SessionID: "rec-resp", TurnID: "rec-resp_1", Messages: []llm.Message{llm.UserText("echo one")},
		Response: &serve.ResponseLog{ResponseID: "resp_rec-resp_1", Run: "resp_rec-resp_1.r1", Response: obj, Seq: 2}}
	if err := agtemporal.StartResponse(ctx, cl, "record-response", in); err != nil {
		t.Fatal(err)
	}
	id := agtemporal.ResponseWorkflowID("resp_rec-resp_1")
	if err := cl.GetWorkflow(ctx, id, "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	events, _ := writeHistory(t, cl, id, "", "history-v2-response-flush.json")
	rec, err := store.GetRecord(ctx, "agcore.responses", "resp_rec-resp_1")
	if err != nil || !strings.Contains(string(rec.Value), `"status":"completed"`) {
		t.Fatalf("the response's record: %s, %v", rec.Value, err)
	}
	t.Logf("a background response of one tool call: %d history events", events)
}

// TestRecordToolsNowHistory records testdata/history-v2-tools-now.json: a
// turn whose context provider's tools change while it runs (the shelf of
// the contract suite: "late" appears once "unlock" has run), asked for
// them again before each model call after the first (version 1 of
// "agcore.tools-now"), and the model calls the new tool in the same turn.
// It runs only with AGCORE_RECORD_HISTORIES=1 (and a dev server):
//
//	AGCORE_RECORD_HISTORIES=1 go test -run TestRecordToolsNowHistory .
func TestRecordToolsNowHistory(t *testing.T) {
	recording(t, "history-v2-tools-now.json")
	_, cl := devServer(t)
	ctx := context.Background()
	model := llmtest.New(llmtest.Reply(llmtest.Call("u1", "unlock", `{"text":"x"}`)),
		llmtest.Reply(llmtest.Call("l1", "late", `{"text":"now"}`)), llmtest.Text("done"))
	sh, ts := newShelf(func(string) {})
	startRecorder(t, cl, "record-tools-now", agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m",
		Tools: ts, Store: memstore.New(), Providers: []agent.ContextProvider{sh}})
	run, err := agtemporal.StartTurn(ctx, cl, "record-tools-now", agtemporal.TurnInput{SessionID: "rec", TurnID: "tools-now",
		Messages: []llm.Message{llm.UserText("unlock, then use late")}, Agents: []agent.Spec{{Name: "main", Tools: []string{"unlock"}}}})
	if err != nil {
		t.Fatal(err)
	}
	var res agtemporal.TurnResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	if res.Text != "done" || len(res.Transcript) != 5 || res.Transcript[3].Text() != "late: now" {
		t.Fatalf("the turn: %+v", res)
	}
	writeHistory(t, cl, run.GetID(), run.GetRunID(), "history-v2-tools-now.json")
}

// writeHistory writes the history of workflow id (run, "" for the latest)
// to testdata/file, as the replay tests read it, and returns its number of
// events and the JSON written.
func writeHistory(t *testing.T, cl client.Client, id, run, file string) (int, []byte) {
	t.Helper()
	ctx := context.Background()
	var events []*historypb.HistoryEvent
	it := cl.GetWorkflowHistory(ctx, id, run, false, 0)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, ev)
	}
	b, err := protojson.MarshalOptions{Indent: " "}.Marshal(&historypb.History{Events: events})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", file), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return len(events), b
}

// recording skips the test unless AGCORE_RECORD_HISTORIES=1: it records
// testdata/what (and needs a dev server).
func recording(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("AGCORE_RECORD_HISTORIES") != "1" {
		t.Skip("set AGCORE_RECORD_HISTORIES=1 to record testdata/" + what)
	}
}

// startRecorder starts a worker of opts on queue for a recording test; it
// stops with the test.
func startRecorder(t *testing.T, cl client.Client, queue string, opts agtemporal.Options) {
	t.Helper()
	w := agtemporal.NewWorker(cl, queue, opts, worker.Options{Identity: "agcore-record"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
}
