package agtemporal_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestAGUIRunWorkflow: a TurnWorkflow with TurnInput.AGUI writes the
// turn's AG-UI events to the event log, numbered after the accepting
// process's first ones, and ends the run: RUN_FINISHED after a tool call
// and the answer; RUN_ERROR "timeout" when TurnInput.Timeout's durable
// timer ran out while a call waited for approval; RUN_ERROR "cancelled"
// when the workflow was cancelled (the waiting call answered, as the
// agent's loop answers an interrupted call). A call that waits for
// approval is shown by the event agcore.approval_required, as a run of
// the serving process shows it. Every end deletes the run's lease record.
func TestAGUIRunWorkflow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []llmtest.Step
		timeout time.Duration
		cancel  bool
		approve bool   // w1 approved a minute in
		types   string // the events' types, in order
		final   string // in the final event's data
	}{
		{name: "finished",
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("e1", "echo", `{"text":"one"}`)), llmtest.Text("echoed")},
			types: "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END TOOL_CALL_RESULT TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STEP_FINISHED RUN_FINISHED",
			final: `"runId":"r1"`},
		{name: "approved", approve: true,
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`)), llmtest.Text("written")},
			types: "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END CUSTOM TOOL_CALL_RESULT TEXT_MESSAGE_START TEXT_MESSAGE_CONTENT TEXT_MESSAGE_END STEP_FINISHED RUN_FINISHED",
			final: `"runId":"r1"`},
		{name: "timeout", timeout: time.Hour,
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`))},
			types: "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END CUSTOM TOOL_CALL_RESULT RUN_ERROR",
			final: `"code":"timeout"`},
		{name: "cancelled", cancel: true,
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`))},
			types: "TOOL_CALL_START TOOL_CALL_ARGS TOOL_CALL_END CUSTOM TOOL_CALL_RESULT RUN_ERROR",
			final: `"code":"cancelled"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.steps...)
			ctx := context.Background()
			l := serve.AGUILog{Key: "local/r1", Run: "agui.r1", ThreadID: "th", RunID: "r1", Agent: "agcore", Seq: 3}
			if _, err := h.store.CreateRecord(ctx, "agcore.agui.runs", session.Record{Key: l.Key, Value: []byte("agcore"), Expires: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if tc.cancel {
				h.env.RegisterDelayedCallback(h.env.CancelWorkflow, time.Minute)
			}
			if tc.approve {
				h.env.RegisterDelayedCallback(func() { decide(t, h, agtemporal.Decision{CallID: "w1", Approve: true}) }, time.Minute)
			}
			in := input("go")
			in.AGUI, in.Timeout = &l, tc.timeout
			h.env.ExecuteWorkflow(agtemporal.TurnWorkflowName, in)
			if !h.env.IsWorkflowCompleted() {
				t.Fatal("the workflow did not complete")
			}
			if err := h.env.GetWorkflowError(); (err == nil) != (tc.final == `"runId":"r1"`) {
				t.Fatalf("the workflow's error: %v", err)
			}
			evs, final, err := (&runlog.Log{Records: h.store}).Read(ctx, l.Run, -1)
			if err != nil || !final || len(evs) == 0 {
				t.Fatalf("the log: %v, final %v, %v", evs, final, err)
			}
			var types []string
			for i, ev := range evs {
				if ev.Seq != int64(i)+3 {
					t.Fatalf("event %d is numbered %d", i, ev.Seq)
				}
				types = append(types, ev.Type)
			}
			if got := strings.Join(types, " "); got != tc.types || !bytes.Contains(evs[len(evs)-1].Data, []byte(tc.final)) {
				t.Fatalf("events %s, final %s", got, evs[len(evs)-1].Data)
			}
			// A call that waits for a decision is shown as a run of the
			// serving process shows it (serve/agui.go), with the id that
			// POST /v1/approvals/{id} decides.
			for _, ev := range evs {
				if ev.Type == "CUSTOM" {
					if want := `{"name":"agcore.approval_required","type":"CUSTOM","value":{"arguments":{"text":"x"},"id":"r1/w1","tool":"write","toolCallId":"w1"}}`; string(ev.Data) != want {
						t.Fatalf("the approval event %s, want %s", ev.Data, want)
					}
				}
			}
			if _, err := h.store.GetRecord(ctx, "agcore.agui.runs", l.Key); err == nil {
				t.Fatal("the run's lease record is still there")
			}
		})
	}
}

// TestAGUIRunElicitationInterrupt: an MCP server's request for input
// that waits in an AG-UI run's workflow (ElicitUpdate) is shown by the
// interrupt event too, tool ElicitationTool, as a run of the serving
// process shows a request waiting in its Broker; answered, the run goes
// on.
func TestAGUIRunElicitationInterrupt(t *testing.T) {
	h := newHarness(t, llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`)), llmtest.Text("written"))
	ctx := context.Background()
	l := serve.AGUILog{Key: "local/r1", Run: "agui.r1", ThreadID: "th", RunID: "r1", Agent: "agcore", Seq: 3}
	if _, err := h.store.CreateRecord(ctx, "agcore.agui.runs", session.Record{Key: l.Key, Value: []byte("agcore"), Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var answer *agtemporal.Decision
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(agtemporal.ElicitUpdate, "el", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("the request was refused: %v", err) },
			OnComplete: func(v any, err error) {
				if d, ok := v.(agtemporal.Decision); ok && err == nil {
					answer = &d
				}
			},
		}, agtemporal.ElicitRequest{ID: "el-1", Input: `{"server":"s","message":"your name?"}`})
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() { decide(t, h, agtemporal.Decision{CallID: "el-1", Approve: true}) }, 2*time.Minute)
	h.env.RegisterDelayedCallback(func() { decide(t, h, agtemporal.Decision{CallID: "w1", Approve: true}) }, 3*time.Minute)
	in := input("go")
	in.AGUI = &l
	h.env.ExecuteWorkflow(agtemporal.TurnWorkflowName, in)
	if err := h.env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if answer == nil || !answer.Approve {
		t.Fatalf("the request's answer: %+v", answer)
	}
	evs, _, err := (&runlog.Log{Records: h.store}).Read(ctx, l.Run, -1)
	if err != nil {
		t.Fatal(err)
	}
	var custom []string
	for _, ev := range evs {
		if ev.Type == "CUSTOM" {
			custom = append(custom, string(ev.Data))
		}
	}
	want := []string{
		`{"name":"agcore.approval_required","type":"CUSTOM","value":{"arguments":{"text":"x"},"id":"r1/w1","tool":"write","toolCallId":"w1"}}`,
		`{"name":"agcore.approval_required","type":"CUSTOM","value":{"arguments":{"server":"s","message":"your name?"},"id":"r1/el-1","tool":"` + agtemporal.ElicitationTool + `","toolCallId":"el-1"}}`,
	}
	if strings.Join(custom, "\n") != strings.Join(want, "\n") || evs[len(evs)-1].Type != "RUN_FINISHED" {
		t.Fatalf("the interrupts:\n%s\nwant:\n%s\nlast %s", strings.Join(custom, "\n"), strings.Join(want, "\n"), evs[len(evs)-1].Type)
	}
}

// TestAGUIRunNeedsNoResponse: an input with both AGUI and Response, or
// AGUI and a Schema, is refused before it starts.
func TestAGUIRunNeedsNoResponse(t *testing.T) {
	l := &serve.AGUILog{Key: "local/r1", Run: "agui.r1", RunID: "r1"}
	for name, in := range map[string]agtemporal.TurnInput{
		"response": {TurnID: "t", Messages: input("x").Messages, AGUI: l, Response: &serve.ResponseLog{ResponseID: "resp_x"}},
		"schema":   {TurnID: "t", Messages: input("x").Messages, AGUI: l, Schema: []byte(`{"type":"object"}`)},
	} {
		if err := agtemporal.StartAGUI(context.Background(), nil, "", in); err == nil || !strings.Contains(err.Error(), "AG-UI run") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
