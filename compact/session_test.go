package compact

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/agcore/agcore/llm"
)

// sessionStats is what a simulated session observed.
type sessionStats struct {
	requests     int // model calls
	compressed   int // requests that needed compression
	prefixStable int // requests that extended the previous request unchanged
	tokens       int // tokens of all requests
	cached       int // tokens of all requests in the prefix shared with the previous request
	maxTokens    int // largest request sent
}

// simulateSession plays a tool-heavy agent session turn by turn, the way
// the agent does it: the stored history keeps every message, and before
// every model call (several per turn in the tool loop) the whole history is
// counted and, when over the budget, compressed by strategy into the
// request. It fails the test if a request is over the budget or invalid.
func simulateSession(t testing.TB, turns, budget int, strategy Strategy, counter TokenCounter, seed uint64) sessionStats {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	hist := []llm.Message{llm.SystemText("You are a coding agent working in a repository. Use the tools to read, search and test code.")}
	var st sessionStats
	var prev []llm.Message
	call := 0
	for turn := 1; turn <= turns; turn++ {
		hist = append(hist, llm.UserText(fmt.Sprintf("Turn %d: %s", turn, randText(r, 10+r.IntN(30)))))
		steps := 1 + r.IntN(4)
		for step := range steps {
			req := hist
			if counter.CountMessages(req) > budget {
				st.compressed++
				out, _, err := Apply(context.Background(), strategy, hist, budget, counter)
				if err != nil {
					t.Fatalf("turn %d: compression failed: %v", turn, err)
				}
				req = out
			}
			n := counter.CountMessages(req)
			if n > budget {
				t.Fatalf("turn %d: request of %d tokens exceeds the budget of %d", turn, n, budget)
			}
			if err := Validate(req); err != nil {
				t.Fatalf("turn %d: request does not validate: %v", turn, err)
			}
			st.requests++
			st.maxTokens = max(st.maxTokens, n)
			if prev != nil && len(prev) <= len(req) && reflect.DeepEqual(prev, req[:len(prev)]) {
				st.prefixStable++
			}
			st.tokens += n
			st.cached += counter.CountMessages(req[:commonPrefix(prev, req)])
			prev = req

			if step == steps-1 {
				hist = append(hist, llm.AssistantText(randText(r, 20+r.IntN(80))))
				continue
			}
			a := llm.Message{Role: llm.RoleAssistant}
			if r.IntN(2) == 0 {
				a.Content = append(a.Content, llm.Thinking{Text: randText(r, 40), Signature: fmt.Sprintf("sig%d", r.Uint64())})
			}
			var ids []string
			for range 1 + r.IntN(3) {
				call++
				id := fmt.Sprintf("toolu_%04d", call)
				ids = append(ids, id)
				in, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("pkg/file%d.go", r.IntN(40))})
				a.Content = append(a.Content, llm.ToolUse{ID: id, Name: []string{"read_file", "grep", "run_tests"}[r.IntN(3)], Input: in})
			}
			hist = append(hist, a)
			for _, id := range ids {
				size := 100 + r.IntN(1200) // words: roughly 130 to 1700 tokens
				hist = append(hist, llm.ToolResultText(id, randText(r, size), r.IntN(10) == 0))
			}
		}
	}
	return st
}

// TestPipelineKeeps200TurnSessionUnder32k: a 200-turn tool-heavy session on
// a 32k-token budget never sends an over-budget or invalid request with the
// default pipeline, and most requests extend the previous one byte for byte
// (the prompt cache keeps hitting); wrapped in Incremental, nearly all do.
func TestPipelineKeeps200TurnSessionUnder32k(t *testing.T) {
	const budget = 32_000
	for _, tc := range []struct {
		name       string
		summarizer bool
		strategy   func(m *fakeModel) Strategy
		minStable  float64 // share of requests that extend the previous one
	}{
		{"incremental pipeline with summarizer", true, func(m *fakeModel) Strategy { return NewIncremental(DefaultPipeline(m)) }, 0.9},
		{"incremental pipeline without summarizer", false, func(*fakeModel) Strategy { return NewIncremental(DefaultPipeline(nil)) }, 0.9},
		{"pipeline with summarizer", true, func(m *fakeModel) Strategy { return DefaultPipeline(m) }, 0.75},
		{"pipeline without summarizer", false, func(*fakeModel) Strategy { return DefaultPipeline(nil) }, 0.7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &fakeModel{}
			turns := 200
			if testing.Short() || raceEnabled {
				turns = 60 // still well past the budget, in a fraction of the time
			}
			st := simulateSession(t, turns, budget, tc.strategy(m), est, 42)
			stable := float64(st.prefixStable) / float64(st.requests-1)
			t.Logf("requests=%d compressed=%d prefix-stable=%d (%.0f%%) cached tokens=%.0f%% max=%d tokens summaries=%d",
				st.requests, st.compressed, st.prefixStable, 100*stable, 100*float64(st.cached)/float64(st.tokens), st.maxTokens, m.callCount())
			if tc.summarizer && m.callCount() == 0 {
				t.Fatal("the summarizer never ran: the case tests nothing the case without one does not")
			}
			if st.compressed < st.requests/2 {
				t.Fatalf("only %d of %d requests needed compression: the session is too small to test anything", st.compressed, st.requests)
			}
			if stable < tc.minStable {
				t.Errorf("only %.0f%% of requests extended the previous one; want at least %.0f%%", 100*stable, 100*tc.minStable)
			}
		})
	}
}
