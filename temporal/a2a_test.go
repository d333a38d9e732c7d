package agtemporal_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/a2aserve"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestA2ATaskWorkflow: a TurnWorkflow with TurnInput.A2A writes the A2A
// task's progress into its record, kept remote, and its end: completed
// with the answer after a tool call; completed after a call that waited
// input-required was approved; canceled when the workflow was cancelled
// while a call waited.
func TestA2ATaskWorkflow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []llmtest.Step
		cancel  bool
		approve bool // w1 approved a minute in
		state   a2a.TaskState
		answer  string
	}{
		{name: "completed", steps: []llmtest.Step{llmtest.Reply(llmtest.Call("e1", "echo", `{"text":"one"}`)), llmtest.Text("echoed")},
			state: a2a.TaskStateCompleted, answer: "echoed"},
		{name: "approved", approve: true, steps: []llmtest.Step{llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`)), llmtest.Text("written")},
			state: a2a.TaskStateCompleted, answer: "written"},
		{name: "cancelled", cancel: true, steps: []llmtest.Step{llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`))},
			state: a2a.TaskStateCanceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.steps...)
			task := json.RawMessage(`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}`)
			l := a2aserve.TaskLog{Agent: "agcore", TaskID: "t1", Principal: "local", Task: task, TurnsBefore: -1}
			waited := false
			if tc.cancel {
				h.env.RegisterDelayedCallback(h.env.CancelWorkflow, time.Minute)
			}
			if tc.approve {
				h.env.RegisterDelayedCallback(func() {
					rec, err := h.store.GetRecord(context.Background(), "agcore.a2a.tasks", "agcore/t1")
					var tr struct{ Task a2a.Task }
					waited = err == nil && json.Unmarshal(rec.Value, &tr) == nil && tr.Task.Status.State == a2a.TaskStateInputRequired
					decide(t, h, agtemporal.Decision{CallID: "w1", Approve: true})
				}, time.Minute)
			}
			in := input("go")
			in.A2A = &l
			h.env.ExecuteWorkflow(agtemporal.TurnWorkflowName, in)
			if !h.env.IsWorkflowCompleted() {
				t.Fatal("the workflow did not complete")
			}
			if err := h.env.GetWorkflowError(); (err == nil) != (tc.state == a2a.TaskStateCompleted) {
				t.Fatalf("the workflow's error: %v", err)
			}
			rec, err := h.store.GetRecord(context.Background(), "agcore.a2a.tasks", "agcore/t1")
			if err != nil {
				t.Fatal(err)
			}
			var tr struct {
				Task   a2a.Task
				Remote bool
			}
			if err := json.Unmarshal(rec.Value, &tr); err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, a := range tr.Task.Artifacts {
				for _, p := range a.Parts {
					if tp, ok := p.(a2a.TextPart); ok {
						got += tp.Text
					}
				}
			}
			if !tr.Remote || tr.Task.Status.State != tc.state || got != tc.answer && tc.answer != "" {
				t.Fatalf("the stored task: %s", rec.Value)
			}
			if tc.approve && !waited {
				t.Error("the task was not stored input-required while its call waited")
			}
		})
	}
}
