package agtemporal_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"

	agtemporal "github.com/agcore/agcore/temporal"
)

// threeCalls is a stateless fake model: it calls echo until the request
// holds three tool results, then answers. Every turn is three tool calls
// in three steps and a final answer: four model calls.
func threeCalls() llm.Model {
	var step llmtest.Step
	step = llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		results := 0
		for _, m := range req.Messages {
			if m.Role == llm.RoleTool {
				results++
			}
		}
		if results < 3 {
			id := fmt.Sprintf("call_%d", results+1)
			return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llmtest.Call(id, "echo", `{"text":"x"}`)}},
				FinishReason: llm.FinishToolUse, Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}, nil
		}
		return &llm.Response{Message: llm.AssistantText("Three echoes done."), FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 100, OutputTokens: 5}}, nil
	})
	steps := make([]llmtest.Step, 1<<16)
	for i := range steps {
		steps[i] = step
	}
	return llmtest.New(steps...)
}

func benchTools() []tool.Tool {
	return []tool.Tool{tool.MustFunc("echo", "Echo the text.", func(_ context.Context, in echoIn) (string, error) { return "echo: " + in.Text, nil })}
}

// BenchmarkTurnThreeTools compares one turn of three tool calls run by the
// in-process agent (agent.New) with the same turn run as a workflow on a
// Temporal dev server (an in-process worker): ns/op is each turn's
// latency, and the Temporal run reports its history per turn.
//
//	eval "$(../.ci/temporal-setup.sh)"; go test -run '^$' -bench TurnThreeTools -benchtime 20x .
func BenchmarkTurnThreeTools(b *testing.B) {
	ctx := context.Background()
	b.Run("in-process", func(b *testing.B) {
		a, err := agent.New(threeCalls(), agent.Config{Tools: benchTools(), Store: memstore.New(), Retry: middleware.RetryConfig{MaxAttempts: 1}})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			resp, err := a.Run(ctx, []llm.Message{llm.UserText("echo three times")}, &agent.RunOptions{SessionID: fmt.Sprintf("s%d", i)})
			if err != nil || resp.Message.Text() != "Three echoes done." {
				b.Fatalf("%v %+v", err, resp)
			}
		}
	})
	_, cl := devServer(b)
	w := agtemporal.NewWorker(cl, "bench", agtemporal.Options{Models: map[string]llm.Model{"m": threeCalls()}, DefaultModel: "m",
		Tools: benchTools(), Store: memstore.New()}, worker.Options{})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	b.Run("temporal", func(b *testing.B) {
		// Turn ids unique to this run: -count reruns only this function,
		// on the same server, where a repeated id would attach to the
		// finished turn.
		prefix := time.Now().Format("150405.000000")
		var last string
		for i := 0; i < b.N; i++ {
			in := agtemporal.TurnInput{SessionID: fmt.Sprintf("s%s-%d-%d", prefix, b.N, i), TurnID: fmt.Sprintf("b%s-%d-%d", prefix, b.N, i), Messages: []llm.Message{llm.UserText("echo three times")}}
			run, err := agtemporal.StartTurn(ctx, cl, "bench", in)
			if err != nil {
				b.Fatal(err)
			}
			var res agtemporal.TurnResult
			if err := run.Get(ctx, &res); err != nil || res.Text != "Three echoes done." {
				b.Fatalf("%v %+v", err, res)
			}
			last = run.GetID()
		}
		b.StopTimer()
		var h historypb.History
		it := cl.GetWorkflowHistory(ctx, last, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			h.Events = append(h.Events, ev)
		}
		// The server's share: from a task scheduled to a worker starting it.
		var wait time.Duration
		tasks := 0
		sched := map[int64]time.Time{}
		for _, ev := range h.Events {
			switch ev.EventType {
			case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enums.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
				sched[ev.EventId] = ev.EventTime.AsTime()
			case enums.EVENT_TYPE_ACTIVITY_TASK_STARTED:
				wait += ev.EventTime.AsTime().Sub(sched[ev.GetActivityTaskStartedEventAttributes().ScheduledEventId])
				tasks++
			case enums.EVENT_TYPE_WORKFLOW_TASK_STARTED:
				wait += ev.EventTime.AsTime().Sub(sched[ev.GetWorkflowTaskStartedEventAttributes().ScheduledEventId])
				tasks++
			}
		}
		b.ReportMetric(float64(wait.Milliseconds())/float64(tasks), "dispatch-ms/task")
		b.ReportMetric(float64(len(h.Events)), "events/turn")
		b.ReportMetric(float64(proto.Size(&h)), "history-bytes/turn")
	})
}

// BenchmarkWorkflowCPUPerStep measures the workflow's own CPU per model
// step: a recorded history of the three-tool turn (four model calls) is
// replayed, which runs the workflow's code (the agent's loop, with the
// activities' results read from history) and nothing else, against the
// in-process agent running the same turn with an instant model and tool
// (its loop's CPU: the floor). ns/step is each side's time per model call;
// run both in one go so that they meet the same load.
//
//	eval "$(../.ci/temporal-setup.sh)"; go test -run '^$' -bench WorkflowCPUPerStep -count 6 .
func BenchmarkWorkflowCPUPerStep(b *testing.B) {
	ctx := context.Background()
	const steps = 4
	b.Run("in-process", func(b *testing.B) {
		a, err := agent.New(threeCalls(), agent.Config{Tools: benchTools(), Store: memstore.New(), Retry: middleware.RetryConfig{MaxAttempts: 1}})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := a.Run(ctx, []llm.Message{llm.UserText("echo three times")}, &agent.RunOptions{SessionID: fmt.Sprintf("s%d", i)}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
	})
	_, cl := devServer(b)
	w := agtemporal.NewWorker(cl, "bench-cpu", agtemporal.Options{Models: map[string]llm.Model{"m": threeCalls()}, DefaultModel: "m",
		Tools: benchTools(), Store: memstore.New()}, worker.Options{})
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	id := time.Now().Format("150405.000000")
	history := func(name string) *historypb.History {
		in := agtemporal.TurnInput{SessionID: "cpu" + name + id, TurnID: "t" + id, Messages: []llm.Message{llm.UserText("echo three times")}}
		run, err := cl.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: agtemporal.TurnWorkflowID(in.SessionID, in.TurnID), TaskQueue: "bench-cpu"}, name, in)
		if err != nil {
			b.Fatal(err)
		}
		var res agtemporal.TurnResult
		if err := run.Get(ctx, &res); err != nil || res.Steps != steps {
			b.Fatalf("%v %+v", err, res)
		}
		var h historypb.History
		it := cl.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			h.Events = append(h.Events, ev)
		}
		return &h
	}
	v2, v1 := history(agtemporal.TurnWorkflowName), history(agtemporal.TurnWorkflowV1Name)
	w.Stop()
	replay := func(name string, fn any, h *historypb.History) func(b *testing.B) {
		return func(b *testing.B) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := r.ReplayWorkflowHistory(quietLogger(), h); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*steps), "ns/step")
		}
	}
	// The agent's own loop in the workflow (version 2), and the frozen
	// loop of version 1 (its own hundred lines): what is left between
	// them is the agent's, the rest is the SDK's replay.
	b.Run("workflow", replay(agtemporal.TurnWorkflowName, agtemporal.TurnWorkflow, v2))
	b.Run("workflow-v1", replay(agtemporal.TurnWorkflowV1Name, agtemporal.TurnWorkflowV1, v1))
}
