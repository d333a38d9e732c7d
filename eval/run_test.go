package eval_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/eval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/tool"
)

type invoiceArgs struct {
	ID     string `json:"id"`
	Fields string `json:"fields,omitempty"`
}

// TestMultiAgentTrajectory: the expected trajectory of a turn names a
// handoff (triage's transfer call), the call of a sub-agent by the agent
// handed to, and the sub-agent's own tool call, each with its agent; a
// call by the wrong agent fails it.
func TestMultiAgentTrajectory(t *testing.T) {
	build := func() *agent.Agent {
		lookup := tool.MustFunc("find_invoice", "finds an invoice", func(_ context.Context, a invoiceArgs) (string, error) {
			return "invoice " + a.ID + ": 12 EUR, paid", nil
		})
		ledgerModel := llmtest.New(
			llmtest.Reply(llmtest.Call("l1", "find_invoice", `{"id":"INV-7","fields":"all"}`)),
			llmtest.Text("INV-7 is paid."),
		)
		ledger, err := agent.New(ledgerModel, agent.Config{Name: "ledger", Tools: []tool.Tool{lookup}})
		if err != nil {
			t.Fatal(err)
		}
		billingModel := llmtest.New(
			llmtest.Reply(llmtest.Call("b1", "ledger", `{"input":"status of INV-7"}`)),
			llmtest.Text("Invoice INV-7 is paid: nothing is owed."),
		)
		billing, err := agent.New(billingModel, agent.Config{Name: "billing", Tools: []tool.Tool{agent.AsTool(ledger, nil)}})
		if err != nil {
			t.Fatal(err)
		}
		triageModel := llmtest.New(llmtest.Reply(llmtest.Call("t1", "transfer_to_billing", `{}`)))
		triage, err := agent.New(triageModel, agent.Config{Name: "triage", Handoffs: []*agent.Agent{billing}})
		if err != nil {
			t.Fatal(err)
		}
		return triage
	}
	expect := eval.Expect{
		Trajectory: &eval.Trajectory{Calls: []eval.Call{
			{Name: "transfer_to_billing", Agent: "triage"},
			{Name: "ledger", Agent: "billing", Args: json.RawMessage(`{"input":"status of INV-7"}`)},
			{Name: "find_invoice", Agent: "ledger", Args: json.RawMessage(`{"id":"INV-7"}`), Rule: eval.ArgsKeys},
		}},
		Agent:        "billing",
		Answer:       &eval.Answer{Contains: []string{"paid"}},
		NoToolErrors: true,
		Limits:       &eval.Limits{Steps: 5},
	}
	set := &eval.Set{ID: "multi", Cases: []eval.Case{{ID: "refund-status", Turns: []eval.Turn{{Input: "Is INV-7 paid?", Expect: expect}}}}}
	rep, err := eval.Run(t.Context(), build(), set, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if !c.Pass {
		t.Fatalf("case failed: %+v", c.Scores)
	}
	got := c.Runs[0].Turns[0]
	var marks []string
	for _, call := range got.Calls {
		marks = append(marks, call.Agent+":"+call.Name)
	}
	if strings.Join(marks, ",") != "triage:transfer_to_billing,billing:ledger,ledger:find_invoice" {
		t.Errorf("calls %v", marks)
	}
	if got.Calls[2].Parent != "b1" {
		t.Errorf("the sub-agent's call has parent %q, want b1", got.Calls[2].Parent)
	}
	if got.Steps != 5 {
		t.Errorf("steps %d, want 5 (triage 1, billing 2, ledger 2)", got.Steps)
	}

	// The sub-agent's call expected of another agent fails the trajectory.
	expect.Trajectory.Calls[2].Agent = "billing"
	set.Cases[0].Turns[0].Expect = expect
	rep, err = eval.Run(t.Context(), build(), set, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cases[0].Pass || rep.Failed != 1 {
		t.Fatalf("a call expected of the wrong agent passed: %+v", rep.Cases[0].Scores)
	}
	if d := rep.Cases[0].Scores[0].Detail; !strings.Contains(d, "billing:find_invoice") || !strings.Contains(d, "ledger:find_invoice") {
		t.Errorf("detail %q", d)
	}
}

// recordRun runs one turn of an agent over a scripted model, recorded.
func recordRun(t *testing.T, instructions string) *replay.Record {
	t.Helper()
	rec := replay.Memory(replay.Header{Model: "scripted"})
	m := llmtest.New(
		llmtest.Reply(llmtest.Call("c1", "lookup", `{"q":"weather"}`)).WithUsage(llm.Usage{InputTokens: 100, OutputTokens: 10, CachedInputTokens: 50}),
		llmtest.Text("Sunny, 21°C.").WithUsage(llm.Usage{InputTokens: 130, OutputTokens: 5, CachedInputTokens: 100}),
	)
	a := newAgent(t, m, instructions, rec.Middleware(), rec.ToolMiddleware())
	rec.Turn("", []llm.Message{llm.UserText("What's the weather?")})
	if _, err := a.Run(t.Context(), []llm.Message{llm.UserText("What's the weather?")}, nil); err != nil {
		t.Fatal(err)
	}
	return rec.Record()
}

func newAgent(t *testing.T, m llm.Model, instructions string, mw middleware.Middleware, tmw tool.Middleware) *agent.Agent {
	t.Helper()
	lookup := tool.MustFunc("lookup", "looks things up", func(_ context.Context, a struct {
		Q string `json:"q"`
	}) (string, error) {
		return "sunny", nil
	})
	cfg := agent.Config{Name: "weather", Instructions: instructions, Tools: []tool.Tool{lookup}, Retry: middleware.RetryConfig{MaxAttempts: 1}}
	if mw != nil {
		cfg.Middleware = []middleware.Middleware{mw}
	}
	if tmw != nil {
		cfg.ToolMiddleware = []tool.Middleware{tmw}
	}
	a, err := agent.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestOfflineFromRecord: a case made from a record runs offline (no
// model, eval.Offline answering from the record); the same agent passes
// with no drift, and a changed system prompt is flagged as drift and fails
// the case.
func TestOfflineFromRecord(t *testing.T) {
	rec := recordRun(t, "You answer weather questions.")
	c, err := eval.FromRecord(rec, "weather.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "weather" || len(c.Turns) != 1 || len(c.Turns[0].Expect.Trajectory.Calls) != 1 || *c.Turns[0].Expect.Answer.Reference != "Sunny, 21°C." {
		t.Fatalf("case %+v", c)
	}
	set := &eval.Set{ID: "records", Cases: []eval.Case{c}}
	offline := eval.Offline(nil, llm.ModelInfo{Name: "scripted"})

	rep, err := eval.Run(t.Context(), newAgent(t, offline, "You answer weather questions.", nil, nil), set, nil)
	if err != nil {
		t.Fatal(err)
	}
	cr := rep.Cases[0]
	if !cr.Pass || cr.Drifted {
		t.Fatalf("unchanged agent: pass %v drifted %v %+v %q", cr.Pass, cr.Drifted, cr.Scores, cr.Error)
	}
	if cr.Usage.InputTokens != 230 || cr.CacheShare != round3(150.0/230) {
		t.Errorf("usage %+v cache share %v", cr.Usage, cr.CacheShare)
	}

	rep, err = eval.Run(t.Context(), newAgent(t, offline, "You answer weather questions tersely.", nil, nil), set, nil)
	if err != nil {
		t.Fatal(err)
	}
	cr = rep.Cases[0]
	if cr.Pass || !cr.Drifted {
		t.Fatalf("changed prompt: pass %v drifted %v", cr.Pass, cr.Drifted)
	}
	var drift *eval.ScoreSummary
	for i := range cr.Scores {
		if cr.Scores[i].Scorer == eval.ScoreDrift {
			drift = &cr.Scores[i]
		}
	}
	if drift == nil || drift.Pass || !strings.Contains(drift.Detail, "system prompt changed") {
		t.Errorf("drift score %+v", drift)
	}

	// A tool that answers otherwise now: its result drifts; answered from
	// the record (eval.RecordedTools), it does not.
	rainy := tool.MustFunc("lookup", "looks things up", func(context.Context, struct {
		Q string `json:"q"`
	}) (string, error) {
		return "rainy", nil
	})
	for _, tc := range []struct {
		name    string
		mw      []tool.Middleware
		drifted bool
	}{{"tool run for real", nil, true}, {"tool from the record", []tool.Middleware{eval.RecordedTools("all")}, false}} {
		a, _ := agent.New(offline, agent.Config{Name: "weather", Instructions: "You answer weather questions.", Tools: []tool.Tool{rainy}, ToolMiddleware: tc.mw, Retry: middleware.RetryConfig{MaxAttempts: 1}})
		rep, _ := eval.Run(t.Context(), a, set, nil)
		if cr := rep.Cases[0]; cr.Drifted != tc.drifted || (tc.drifted && !strings.Contains(strings.Join(cr.Runs[0].Drift, "\n"), "tool result of call c1 (lookup) differs")) {
			t.Errorf("%s: drifted %v %q", tc.name, cr.Drifted, cr.Runs[0].Drift)
		}
	}

	// An agent whose model is not eval.Offline does not silently pass.
	live := llmtest.New(llmtest.Text("whatever"))
	rep, _ = eval.Run(t.Context(), newAgent(t, live, "x", nil, nil), set, nil)
	if rep.Cases[0].Pass || !strings.Contains(rep.Cases[0].Error, "eval.Offline") {
		t.Errorf("a record nobody read: pass %v error %q", rep.Cases[0].Pass, rep.Cases[0].Error)
	}
}

// round3 rounds as the report does (to 1e-6).
func round3(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// TestRepeatConcurrencyAndSpread: Repeat runs each case N times, at most
// Concurrency at once, and reports the pass rate and the spread.
func TestRepeatConcurrencyAndSpread(t *testing.T) {
	var n, running, most atomic.Int32
	m := llmtest.New()
	for range 8 {
		m.Add(llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			r := running.Add(1)
			defer running.Add(-1)
			for {
				old := most.Load()
				if r <= old || most.CompareAndSwap(old, r) {
					break
				}
			}
			if n.Add(1)%2 == 0 {
				return &llm.Response{Message: llm.AssistantText("no")}, nil
			}
			return &llm.Response{Message: llm.AssistantText("yes")}, nil
		}))
	}
	a, _ := agent.New(m, agent.Config{})
	set := &eval.Set{ID: "flaky", Cases: []eval.Case{
		{ID: "a", Turns: []eval.Turn{{Input: "?", Expect: eval.Expect{Answer: &eval.Answer{Exact: ptr("yes")}}}}},
		{ID: "b", Turns: []eval.Turn{{Input: "?", Expect: eval.Expect{Answer: &eval.Answer{Exact: ptr("yes")}}}}},
	}}
	var seen atomic.Int32
	rep, err := eval.Run(t.Context(), a, set, &eval.Options{Repeat: 4, Concurrency: 2, MinPassRate: 0.5, OnCase: func(eval.CaseReport) { seen.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if most.Load() > 2 {
		t.Errorf("%d runs at once, want at most 2", most.Load())
	}
	if seen.Load() != 2 || len(rep.Cases[0].Runs) != 4 {
		t.Errorf("OnCase told %d times; %d runs", seen.Load(), len(rep.Cases[0].Runs))
	}
	total := 0.0
	for _, c := range rep.Cases {
		total += c.PassRate * 4
		s := c.Scores[0]
		if s.Min > s.Max || (s.Min != s.Max && s.StdDev == 0) {
			t.Errorf("spread %+v", s)
		}
	}
	if total != 4 {
		t.Errorf("%v runs passed in all, want 4 (every other answer is yes)", total)
	}
}

func ptr(s string) *string { return &s }
