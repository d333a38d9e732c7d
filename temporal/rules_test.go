package agtemporal_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"

	agtemporal "github.com/agcore/agcore/temporal"
)

// echoForever scripts n answers, each calling echo.
func echoForever(n int) []llmtest.Step {
	s := make([]llmtest.Step, n)
	for i := range s {
		s[i] = llmtest.Reply(llm.Text{Text: fmt.Sprint("step ", i+1)}, llmtest.Call(fmt.Sprint("c", i+1), "echo", fmt.Sprintf(`{"text":"%d"}`, i+1)))
	}
	return s
}

// TestStepLimitEndsTheTurnAsInProcess runs a model that never stops
// calling tools through the in-process tool loop (middleware) and through
// the workflow, with a limit and with the default one: both make the same
// number of model calls, answer the last calls without running them with
// the same results, end with FinishMaxSteps, and the workflow stores the
// turn.
func TestStepLimitEndsTheTurnAsInProcess(t *testing.T) {
	if middleware.DefaultMaxSteps != middleware.DefaultMaxSteps {
		t.Fatalf("default step limits differ: workflow %d, middleware %d", middleware.DefaultMaxSteps, middleware.DefaultMaxSteps)
	}
	for _, maxSteps := range []int{3, 0} {
		t.Run(fmt.Sprint("max-steps=", maxSteps), func(t *testing.T) {
			limit := middleware.StepLimit(maxSteps)
			ts, _, _ := tools(t)
			inproc := llmtest.New(echoForever(limit)...).Verify(t)
			loop := middleware.FunctionInvocation(middleware.ToolLoop{Tools: ts, MaxSteps: maxSteps})(inproc)
			want, err := loop.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("go")}, Tools: defs(ts)})
			if err != nil {
				t.Fatal(err)
			}

			h := newHarness(t, echoForever(limit)...)
			in := input("go")
			in.MaxSteps = maxSteps
			got, err := h.run(t, in)
			if err != nil {
				t.Fatalf("the workflow failed at its step limit: %v", err)
			}
			if got.FinishReason != llm.FinishMaxSteps || want.FinishReason != llm.FinishMaxSteps {
				t.Fatalf("finish: workflow %q, in process %q", got.FinishReason, want.FinishReason)
			}
			if got.Steps != limit || inproc.Calls() != limit || h.model.Calls() != limit {
				t.Fatalf("model calls: workflow %d (%d steps), in process %d, want %d", h.model.Calls(), got.Steps, inproc.Calls(), limit)
			}
			if len(got.Transcript) != len(want.Transcript) {
				t.Fatalf("transcripts: workflow %d messages, in process %d", len(got.Transcript), len(want.Transcript))
			}
			for i := range want.Transcript {
				w, g := want.Transcript[i], got.Transcript[i]
				if w.Role != g.Role || w.Text() != g.Text() || w.IsError != g.IsError || w.ToolCallID != g.ToolCallID {
					t.Fatalf("message %d: workflow %s %q (error %v), in process %s %q (error %v)", i, g.Role, g.Text(), g.IsError, w.Role, w.Text(), w.IsError)
				}
			}
			last := got.Transcript[len(got.Transcript)-1]
			if !last.IsError || last.ToolCallID != fmt.Sprint("c", limit) {
				t.Fatalf("the last call is not answered as not run: %+v", last)
			}
			if !got.Stored {
				t.Fatal("the turn ended at its step limit was not stored")
			}
			sess, err := h.store.Load(context.Background(), "s1")
			if err != nil || sess.Turns != 1 {
				t.Fatalf("session: %v, %+v", err, sess)
			}
		})
	}
}

func defs(ts []tool.Tool) []llm.ToolDefinition {
	out := make([]llm.ToolDefinition, len(ts))
	for i, t := range ts {
		out[i] = tool.Definition(t)
	}
	return out
}

// TestASecondDecisionForACallIsRejected decides the first of two pending
// calls twice, approving then denying, while the second is still
// pending: the update's validator must reject the second decision, so the
// first call runs as approved.
func TestASecondDecisionForACallIsRejected(t *testing.T) {
	h := newHarness(t,
		llmtest.Reply(llmtest.Call("w1", "write", `{"text":"one"}`), llmtest.Call("w2", "write", `{"text":"two"}`)),
		llmtest.Text("finished"))
	outcome := map[string]error{}
	send := func(id string, d agtemporal.Decision) {
		h.env.UpdateWorkflow(agtemporal.DecideUpdate, id, &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { outcome[id] = err }, OnComplete: func(any, error) {},
		}, d)
	}
	h.env.RegisterDelayedCallback(func() {
		send("first", agtemporal.Decision{CallID: "w1", Approve: true})
		send("again", agtemporal.Decision{CallID: "w1", Reason: "changed my mind"})
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		if p := pending(t, h); len(p) != 1 || p[0].CallID != "w2" {
			t.Errorf("pending after deciding w1: %+v", p)
		}
		send("second", agtemporal.Decision{CallID: "w2", Approve: true})
	}, 2*time.Minute)
	in := input("write both")
	in.ApprovalTimeout = time.Hour
	res, err := h.run(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := outcome["again"]; err == nil || !containsErr(err, "already decided") {
		t.Fatalf("a second decision for w1 was not rejected (%v)", err)
	}
	if outcome["first"] != nil || outcome["second"] != nil {
		t.Fatalf("a first decision was rejected: %v, %v", outcome["first"], outcome["second"])
	}
	if m := res.Transcript[1]; m.IsError || runs(h.ran, "write:one") != 1 {
		t.Fatalf("w1, approved first, did not run: %+v", m)
	}
	if m := res.Transcript[2]; m.IsError || runs(h.ran, "write:two") != 1 {
		t.Fatalf("w2: %+v", m)
	}
}

func containsErr(err error, s string) bool {
	return err != nil && strings.Contains(err.Error(), s)
}

// TestContentOnAnOrdinaryCallIsRejected: the update's validator refuses a
// decision whose content answers no form (content goes only with an MCP
// server's request for input); the call goes on waiting and a plain
// approval then runs it.
func TestContentOnAnOrdinaryCallIsRejected(t *testing.T) {
	h := newHarness(t,
		llmtest.Reply(llmtest.Call("w1", "write", `{"text":"one"}`)),
		llmtest.Text("finished"))
	outcome := map[string]error{}
	send := func(id string, d agtemporal.Decision) {
		h.env.UpdateWorkflow(agtemporal.DecideUpdate, id, &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { outcome[id] = err }, OnComplete: func(any, error) {},
		}, d)
	}
	h.env.RegisterDelayedCallback(func() {
		send("content", agtemporal.Decision{CallID: "w1", Approve: true, Content: `{"x":1}`})
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		if p := pending(t, h); len(p) != 1 || p[0].CallID != "w1" {
			t.Errorf("pending after the refused decision: %+v", p)
		}
		send("plain", agtemporal.Decision{CallID: "w1", Approve: true})
	}, 2*time.Minute)
	in := input("write")
	in.ApprovalTimeout = time.Hour
	res, err := h.run(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := outcome["content"]; !containsErr(err, "takes none") {
		t.Fatalf("content on an ordinary call was not rejected (%v)", err)
	}
	if outcome["plain"] != nil {
		t.Fatalf("the plain approval was rejected: %v", outcome["plain"])
	}
	if m := res.Transcript[1]; m.IsError || runs(h.ran, "write:one") != 1 {
		t.Fatalf("w1 did not run: %+v", m)
	}
}
