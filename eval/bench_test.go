package eval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/eval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/tool"
)

// benchRecord records a turn of five model calls (four tool calls, one
// at a time, then the answer).
func benchRecord(b *testing.B) *replay.Record {
	rec := replay.Memory(replay.Header{Model: "bench"})
	var steps []llmtest.Step
	for i := range 4 {
		steps = append(steps, llmtest.Reply(llm.Text{Text: "Looking."}, llmtest.Call(fmt.Sprintf("c%d", i), "lookup", fmt.Sprintf(`{"q":"part %d","page":%d}`, i, i))).WithUsage(llm.Usage{InputTokens: 200 + 50*i, OutputTokens: 20}))
	}
	steps = append(steps, llmtest.Text("The parts are all in stock; part 3 ships Monday.").WithUsage(llm.Usage{InputTokens: 420, OutputTokens: 15}))
	a := benchAgent(b, llmtest.New(steps...), rec.Middleware())
	in := []llm.Message{llm.UserText("Are the parts in stock?")}
	rec.Turn("", in)
	if _, err := a.Run(context.Background(), in, nil); err != nil {
		b.Fatal(err)
	}
	return rec.Record()
}

func benchAgent(b *testing.B, m llm.Model, mw middleware.Middleware) *agent.Agent {
	lookup := tool.MustFunc("lookup", "looks a part up", func(_ context.Context, a struct {
		Q    string `json:"q"`
		Page int    `json:"page"`
	}) (string, error) {
		return "in stock: " + a.Q, nil
	})
	cfg := agent.Config{Name: "stock", Instructions: "You check stock.", Tools: []tool.Tool{lookup}, Retry: middleware.RetryConfig{MaxAttempts: 1}}
	if mw != nil {
		cfg.Middleware = []middleware.Middleware{mw}
	}
	a, err := agent.New(m, cfg)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// benchSet is n cases made from rec, each with every kind of expectation.
func benchSet(b *testing.B, rec *replay.Record, n int) *eval.Set {
	set := &eval.Set{ID: "bench"}
	for i := range n {
		c, err := eval.FromRecord(rec, "stock.jsonl", fmt.Sprintf("case-%03d", i))
		if err != nil {
			b.Fatal(err)
		}
		e := &c.Turns[0].Expect
		e.Trajectory.Match = eval.InOrder
		e.Trajectory.Args = eval.ArgsSubset
		e.Answer.Contains = []string{"stock"}
		e.Answer.Regexp = `\bMonday\b`
		e.Agent = "stock"
		e.Limits = &eval.Limits{Steps: 5, Tokens: 5000, Latency: eval.Duration(time.Minute)}
		e.NoToolErrors = true
		set.Cases = append(set.Cases, c)
	}
	return set
}

// BenchmarkOfflineEval runs 100 cases of 5 model calls each offline
// (answered from a record), at -j 1, 2 and 4, and reports the CPU time of
// the whole eval (cpu-s/eval: the budget is 2 s).
func BenchmarkOfflineEval(b *testing.B) {
	rec := benchRecord(b)
	set := benchSet(b, rec, 100)
	a := benchAgent(b, eval.Offline(nil, llm.ModelInfo{Name: "bench"}), nil)
	for _, j := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("j=%d", j), func(b *testing.B) {
			cpu0, ok := cpuTime()
			for b.Loop() {
				rep, err := eval.Run(context.Background(), a, set, &eval.Options{Concurrency: j})
				if err != nil || !rep.OK() {
					b.Fatalf("%v: %d failed: %+v", err, rep.Failed, rep.Cases[0])
				}
			}
			if cpu1, ok1 := cpuTime(); ok && ok1 {
				b.ReportMetric((cpu1-cpu0).Seconds()/float64(b.N), "cpu-s/eval")
			}
		})
	}
}

// BenchmarkScoringShare measures what scoring adds to a case: the same
// 100 cases run with no scorer (the floor) and with every built-in
// scorer, in the same run; scoring-% is the difference over the floor
// (the least CPU time of each over the iterations).
func BenchmarkScoringShare(b *testing.B) {
	rec := benchRecord(b)
	set := benchSet(b, rec, 100)
	a := benchAgent(b, eval.Offline(nil, llm.ModelInfo{Name: "bench"}), nil)
	run := func(scorers []eval.Scorer) time.Duration {
		c0, _ := cpuTime()
		if _, err := eval.Run(context.Background(), a, set, &eval.Options{Concurrency: 1, Scorers: scorers}); err != nil {
			b.Fatal(err)
		}
		c1, _ := cpuTime()
		return c1 - c0
	}
	// The least CPU of each over the iterations: the machine's other load
	// only ever adds.
	floor, scored := time.Duration(1<<62), time.Duration(1<<62)
	for b.Loop() {
		floor = min(floor, run([]eval.Scorer{}))
		scored = min(scored, run(eval.Default(nil)))
	}
	b.ReportMetric(100*float64(scored-floor)/float64(floor), "scoring-%")
	b.ReportMetric(floor.Seconds(), "floor-cpu-s")
}

// BenchmarkScorers is the cost of scoring one case's turn with each
// built-in scorer.
func BenchmarkScorers(b *testing.B) {
	rec := benchRecord(b)
	c := benchSet(b, rec, 1).Cases[0]
	got := &eval.Observed{Answer: "The parts are all in stock; part 3 ships Monday.", Agent: "stock", Steps: 5}
	for _, call := range c.Turns[0].Expect.Trajectory.Calls {
		got.Calls = append(got.Calls, eval.ToolCall{Name: call.Name, Args: json.RawMessage(call.Args)})
	}
	in := &eval.Input{Case: &c, Expect: &c.Turns[0].Expect, Got: got}
	for _, sc := range eval.Default(nil) {
		b.Run(sc.Name(), func(b *testing.B) {
			for b.Loop() {
				sc.Score(context.Background(), in)
			}
		})
	}
}
