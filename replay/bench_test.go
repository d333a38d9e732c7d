package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// benchCalls is the size of the benchmarked run: 25 turns of a tool call
// and an answer on one session, 50 model calls.
const benchCalls = 50

// benchRun returns the steps of the benchmarked run and its turns' inputs.
func benchRun() ([]llmtest.Step, []string) {
	var steps []llmtest.Step
	var turns []string
	para := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 8)
	for i := range benchCalls / 2 {
		turns = append(turns, fmt.Sprintf("question %d: %s", i, para))
		steps = append(steps,
			llmtest.Reply(llm.Thinking{Text: "look it up", Signature: "sig" + fmt.Sprint(i)}, llmtest.Call(fmt.Sprintf("call_%d", i), "lookup", map[string]string{"q": fmt.Sprint(i)})).WithUsage(llm.Usage{InputTokens: 100 * i, OutputTokens: 20}),
			llmtest.Text(fmt.Sprintf("answer %d: %s", i, para)).WithUsage(llm.Usage{InputTokens: 100*i + 50, OutputTokens: 80}))
	}
	return steps, turns
}

func benchConfig(b *testing.B) agent.Config {
	lookup, err := tool.Func("lookup", "Looks a thing up.", func(_ context.Context, in struct {
		Q string `json:"q"`
	}) (string, error) {
		return "result for " + in.Q, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return agent.Config{Instructions: "Answer from the lookup tool.", Tools: []tool.Tool{lookup}, Retry: middleware.RetryConfig{MaxAttempts: 1}}
}

// runTurns runs the turns on a fresh session over model.
func runTurns(b *testing.B, model llm.Model, cfg agent.Config, turns []replay.Turn) {
	a, err := agent.New(model, cfg)
	if err != nil {
		b.Fatal(err)
	}
	sessions := map[string]*session.Session{}
	for _, t := range turns {
		s := sessions[t.Session]
		if s == nil {
			s = &session.Session{ID: t.Session, Messages: t.History}
			sessions[t.Session] = s
		}
		if _, err := a.Run(context.Background(), t.Input, &agent.RunOptions{Session: s}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplay50Calls replays a recorded run of 50 model calls (the
// record parsed from its file, each request compared with the recorded
// one, the tools run for real) and reports the CPU time per replayed call
// ("cpu-ms/call"; the target is under 5 ms). Its floor is the same
// run over the scripted model (llmtest), with no record and no
// comparison, also in CPU time: "x-floor" is the replay's CPU time over
// the floor's.
func BenchmarkReplay50Calls(b *testing.B) {
	steps, inputs := benchRun()
	var turns []replay.Turn
	for i, in := range inputs {
		turns = append(turns, replay.Turn{N: i + 1, Session: "s1", Input: []llm.Message{llm.UserText(in)}})
	}
	var file bytes.Buffer
	rec, err := replay.NewRecorder(&file, replay.Header{Provider: "anthropic", Model: "claude-test"})
	if err != nil {
		b.Fatal(err)
	}
	cfg := benchConfig(b)
	cfg.Middleware = []middleware.Middleware{rec.Middleware()}
	cfg.ToolMiddleware = []tool.Middleware{rec.ToolMiddleware()}
	a, err := agent.New(llmtest.New(steps...), cfg)
	if err != nil {
		b.Fatal(err)
	}
	sess := &session.Session{ID: "s1"}
	for _, t := range turns {
		rec.Turn(t.Session, t.Input)
		if _, err := a.Run(context.Background(), t.Input, &agent.RunOptions{Session: sess}); err != nil {
			b.Fatal(err)
		}
	}
	rec.Close()
	data := file.Bytes()

	// The floor: the same turns over the scripted model, in CPU time
	// (timed by hand: testing.Benchmark cannot run inside a benchmark).
	const floorRuns = 30
	f0, _ := cpuTime()
	for range floorRuns {
		runTurns(b, llmtest.New(steps...), benchConfig(b), turns)
	}
	f1, _ := cpuTime()
	floorCPU := float64(f1-f0) / floorRuns
	b.ResetTimer()

	b.ReportAllocs()
	cpu0, cpuOK := cpuTime()
	n := 0
	for b.Loop() {
		r, err := replay.Parse(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		m := replay.NewModel(r, replay.Options{Strict: true})
		runTurns(b, m, benchConfig(b), r.Turns)
		if m.Calls() != benchCalls || len(m.Drifts()) != 0 {
			b.Fatalf("%d calls, drift %v", m.Calls(), m.Drifts())
		}
		n++
	}
	if cpu1, ok := cpuTime(); ok && cpuOK && n > 0 {
		perRun := float64(cpu1-cpu0) / float64(n)
		b.ReportMetric(perRun/benchCalls/1e6, "cpu-ms/call")
		if floorCPU > 0 {
			b.ReportMetric(floorCPU/benchCalls/1e6, "floor-cpu-ms/call")
			b.ReportMetric(perRun/floorCPU, "x-floor")
		}
	}
}
