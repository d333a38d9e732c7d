package agent_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
)

// fileText is what the read_file tool of the guard tests returns: about
// 450 tokens, different for each path.
func fileText(path string) string {
	var b strings.Builder
	for i := range 18 {
		fmt.Fprintf(&b, "%s:%d: func handler%d(w http.ResponseWriter) { log.Print(%q) }\n", path, i+1, i, path)
	}
	return b.String()
}

// Within a turn the tool loop grows the conversation by a large tool
// result at every step. The agent's budget policy runs inside the loop and
// keeps every request the model receives inside the budget, while the
// session keeps the whole transcript.
func TestBudgetKeepsEveryStepOfAToolLoopInsideTheWindow(t *testing.T) {
	t.Parallel()
	const steps = 15 // model calls that ask for a tool, then one that answers
	{
		{
			info := llm.ModelInfo{Provider: "llmtest", Name: "gpt-4o", ContextWindow: 4096, MaxOutputTokens: 512}
			counter := compact.CounterFor(info)
			budget := info.InputBudget()

			var script []llmtest.Step
			for i := 1; i <= steps; i++ {
				script = append(script, llmtest.Reply(
					llm.Text{Text: fmt.Sprintf("Reading file %d.", i)},
					llmtest.Call(fmt.Sprintf("call_%d", i), "read_file", fmt.Sprintf(`{"path":"src/f%d.go"}`, i))))
				if i == 10 {
					// A retried call resends the same compressed request.
					script = append(script, llmtest.Fail(&llm.Error{Kind: llm.KindServer, StatusCode: 500, Message: "try again"}))
				}
			}
			script = append(script, llmtest.Text("All fifteen files define handlers."), llmtest.Text("Handlers everywhere."))
			m := llmtest.New(script...).WithInfo(info).Verify(t)

			readFile := tool.MustFunc("read_file", "Reads a file.", func(_ context.Context, in struct {
				Path string `json:"path"`
			}) (string, error) {
				return fileText(in.Path), nil
			})
			guardStrategy := &countingStrategy{Strategy: compact.NewIncremental(compact.DefaultPipeline(nil))}
			store := newStore()
			a := newAgent(t, m, agent.Config{
				Name:         "reader",
				Instructions: "You read files and report.",
				Tools:        []tool.Tool{readFile},
				Compaction:   &compact.Policy{Strategy: guardStrategy, Counter: counter},
				Retry:        middleware.RetryConfig{Clock: fixedClock{}},
				ModelInfo:    &info,
				Store:        store,
			})

			resp, err := a.Run(context.Background(), user("Read src/f1.go to src/f15.go, one at a time."), withSession("s"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.FinishReason != llm.FinishStop {
				t.Errorf("finish %q", resp.FinishReason)
			}
			turn1 := len(m.Requests())
			guardCalls := guardStrategy.count()
			if turn1 != steps+2 {
				t.Fatalf("%d model calls in the first turn, want %d (with one retry)", turn1, steps+2)
			}
			if _, err := a.Run(context.Background(), user("In one line?"), withSession("s")); err != nil {
				t.Fatal(err)
			}

			reqs := m.Requests()
			toolsTokens := counter.CountTools(reqs[0].Tools)
			for i, r := range reqs {
				if n := counter.CountMessages(r.Messages) + toolsTokens; n > budget {
					t.Errorf("request %d holds %d tokens, over the budget of %d", i+1, n, budget)
				}
				if err := compact.Validate(r.Messages); err != nil {
					t.Errorf("request %d: %v", i+1, err)
				}
			}
			// The test means something only if the turn outgrew the budget.
			stored := store.session(t, "s").Messages
			turn := stored[:2*steps+2] // the user message, 15 exchanges, the answer
			if n := counter.CountMessages(turn) + toolsTokens; n < 2*budget {
				t.Fatalf("the turn holds only %d tokens; the test needs well over the budget of %d", n, budget)
			}
			last := reqs[turn1-1]
			if !strings.Contains(last.Messages[len(last.Messages)-1].Text(), "src/f15.go") {
				t.Error("the last step does not end with the newest tool result")
			}
			if strings.Contains(llmText(last.Messages), "src/f2.go:1:") {
				t.Error("the last step still holds the second tool result whole")
			}
			// The guard compressed each step that was over the budget, once:
			// the retry (inside the guard) resent the same request.
			over := 0
			for k := range steps + 1 { // the request of step k+1 holds k exchanges
				if counter.CountMessages(append([]llm.Message{reqs[0].Messages[0]}, turn[:1+2*k]...))+toolsTokens > budget {
					over++
				}
			}
			if over == 0 || guardCalls != over {
				t.Errorf("the guard compressed %d times; %d steps were over the budget", guardCalls, over)
			}
			if !reflect.DeepEqual(reqs[10].Messages, reqs[11].Messages) {
				t.Error("the retried request differs from the failed one")
			}

			// Only what was sent shrank: the session holds every result whole.
			if err := compact.Validate(stored); err != nil {
				t.Errorf("the stored session: %v", err)
			}
			if len(stored) != 2*steps+4 {
				t.Fatalf("the session holds %d messages, want %d", len(stored), 2*steps+4)
			}
			results := 0
			for _, msg := range turn {
				if msg.Role == llm.RoleTool {
					results++
					if want := fileText(fmt.Sprintf("src/f%d.go", results)); msg.Text() != want {
						t.Errorf("stored result %d is not the tool's whole output", results)
					}
				}
			}
			if results != steps {
				t.Errorf("%d stored results, want %d", results, steps)
			}

			// One policy for every step and turn: the next turn's request
			// extends the last one of turn 1, so the provider's prompt cache
			// keeps hitting.
			next := reqs[len(reqs)-1]
			extends := len(next.Messages) >= len(last.Messages) && reflect.DeepEqual(last.Messages, next.Messages[:len(last.Messages)])
			if !extends {
				t.Error("turn 2's request does not extend the last request of turn 1")
			}
		}
	}
}

// countingStrategy counts the calls to its strategy.
type countingStrategy struct {
	compact.Strategy
	mu    sync.Mutex
	calls int
}

func (c *countingStrategy) Compress(ctx context.Context, msgs []llm.Message, budget int, counter compact.TokenCounter) ([]llm.Message, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.Strategy.Compress(ctx, msgs, budget, counter)
}

func (c *countingStrategy) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

// llmText joins the text of every message.
func llmText(msgs []llm.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Text())
		b.WriteByte('\n')
	}
	return b.String()
}
