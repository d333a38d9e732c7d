// Command longsession runs an agent through a long, tool-heavy session on a
// small context window and shows that no request ever goes over the input
// budget, while the session keeps every message. It runs offline.
//
// Each turn the user asks about some files; the model (scripted) reads one
// or two of them with parallel read_file calls, each result a few hundred
// to a thousand tokens, then answers. The window is 16k tokens, so the
// history outgrows it within five turns. Two things keep every request
// inside it, sharing one compact.Incremental strategy:
//
//   - the agent compresses the history before each turn (Agent.Compression);
//   - compact.Guard, inside the tool loop, compresses a later step of the
//     turn when the tool results push it over the budget.
//
// For each turn it prints the tokens of each request the model received
// (counted, and checked against the budget, by a middleware right above the
// model), the turn's usage as a provider with a prompt cache would report
// it, and the session's prefix statistic: requests so far, how many
// extended the previous request byte for byte (a prompt-cache hit), and
// where the last one diverged (-1: it extended the previous one). The
// session tracks the request the agent sends first in each turn; after a
// turn whose later step the guard compressed, the next turn's first
// request counts as diverging even when it extends what the model last
// received, as its cached tokens show.
//
//	go run ./examples/longsession [-turns 200]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"iter"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sqlite"
	"github.com/agcore/agcore/tool"
)

// info is the model: a 16k window (an Ollama model, so tokens are
// estimated; an OpenAI model id would get the exact counter).
var info = llm.ModelInfo{Provider: "ollama", Name: "qwen2.5-coder:7b", ContextWindow: 16_384, MaxOutputTokens: 1_024}

const sessionID = "long-session"

func main() {
	turns := flag.Int("turns", 200, "turns to run")
	flag.Parse()
	if _, err := run(context.Background(), os.Stdout, *turns); err != nil {
		log.Fatal(err)
	}
}

// summary is what a run observed.
type summary struct {
	Budget int                 // the input budget
	Sent   []int               // tokens of every request the model received, in order
	Stored []llm.Message       // the session's history at the end
	Prefix session.PrefixStats // the session's prefix statistic at the end
}

// run plays turns turns into a SQLite session in a temporary directory.
func run(ctx context.Context, w io.Writer, turns int) (*summary, error) {
	dir, err := os.MkdirTemp("", "agcore-longsession-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, err := sqlite.Open(ctx, filepath.Join(dir, "sessions.db"))
	if err != nil {
		return nil, err
	}
	defer store.Close()

	counter := compact.CounterFor(info)
	check := &budgetCheck{counter: counter, budget: info.InputBudget()}
	model, sc := llmtest.New().WithInfo(info), &script{counter: counter}
	// The default budget policy: no summarizer, so old tool results are
	// cleared and old turns dropped; give the policy a
	// compact.DefaultPipeline(summarizer) strategy to have them summarized.
	a, err := agent.New(model, agent.Config{
		Name:         "coder",
		Instructions: "You are a coding agent. Read the files you are asked about before answering.",
		Tools:        []tool.Tool{tool.MustFunc("read_file", "Reads a file of the repository.", readFile)},
		Compaction:   &compact.Policy{Counter: counter},
		Middleware:   []middleware.Middleware{check.middleware}, // after the policy: sees what the model receives
		Store:        store,
	})
	if err != nil {
		return nil, err
	}

	fmt.Fprintf(w, "window %d tokens, input budget %d\n", info.ContextWindow, info.InputBudget())
	for turn := 1; turn <= turns; turn++ {
		files := []string{fmt.Sprintf("pkg%d/handler.go", turn%17)}
		if turn%3 != 0 {
			files = append(files, fmt.Sprintf("pkg%d/handler_test.go", turn%13))
		}
		model.Add(sc.read(turn, files), sc.answer(turn))
		question := fmt.Sprintf("Turn %d: what do %s do?", turn, strings.Join(files, " and "))
		first := len(check.all)
		resp, err := a.Run(ctx, []llm.Message{llm.UserText(question)}, &agent.RunOptions{SessionID: sessionID})
		if err != nil {
			return nil, fmt.Errorf("turn %d: %w", turn, err)
		}
		if err := resp.PersistErr(); err != nil {
			return nil, err
		}
		s, err := store.Load(ctx, sessionID)
		if err != nil {
			return nil, err
		}
		u, p := resp.Usage, s.Prefix
		fmt.Fprintf(w, "turn %3d  requests %-11s tokens  usage %5d in (%5d cached) %2d out  prefix %3d requests, %3d stable, last divergence %2d\n",
			turn, strings.Trim(fmt.Sprint(check.all[first:]), "[]"), u.InputTokens, u.CachedInputTokens, u.OutputTokens,
			p.Requests, p.PrefixStable, p.LastDivergence)
	}

	s, err := store.Load(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if err := compact.Validate(s.Messages); err != nil {
		return nil, fmt.Errorf("the stored history: %w", err)
	}
	fmt.Fprintf(w, "summary: %d turns, %d requests, largest %d of %d tokens, none over; history %d messages (%d tokens), valid; prefix-stable %d/%d; cached %.0f%% of input\n",
		turns, len(check.all), slices.Max(check.all), check.budget, len(s.Messages), counter.CountMessages(s.Messages),
		s.Prefix.PrefixStable, s.Prefix.Requests, 100*float64(s.Usage.CachedInputTokens)/float64(s.Usage.InputTokens))
	return &summary{Budget: check.budget, Sent: check.all, Stored: s.Messages, Prefix: s.Prefix}, nil
}

// readFile is the tool: it returns a made-up Go file of 20 to 60 lines.
func readFile(_ context.Context, in struct {
	Path string `json:"path"`
}) (string, error) {
	var b strings.Builder
	for i := range 20 + len(in.Path)*7%41 {
		fmt.Fprintf(&b, "%s:%d: func handle%d(w http.ResponseWriter, r *http.Request) error { return serve(w, r, %d) }\n", in.Path, i+1, i, i*i)
	}
	return b.String(), nil
}

// script makes the scripted model's answers, turn by turn.
type script struct {
	counter  compact.TokenCounter
	previous []llm.Message // the last request the model received
}

// read is the model's first answer in a turn: parallel calls reading files.
func (s *script) read(turn int, files []string) llmtest.Step {
	blocks := []llm.Block{llm.Text{Text: "Let me read them."}}
	for i, f := range files {
		blocks = append(blocks, llmtest.Call(fmt.Sprintf("call_%d_%d", turn, i), "read_file", map[string]string{"path": f}))
	}
	return s.reply(blocks...)
}

// answer is the model's answer once it has read the files.
func (s *script) answer(turn int) llmtest.Step {
	return s.reply(llm.Text{Text: fmt.Sprintf("Turn %d: they register HTTP handlers that call serve.", turn)})
}

// reply answers with blocks, and with the usage that a provider whose
// prompt cache serves the longest message prefix shared with the previous
// request would report.
func (s *script) reply(blocks ...llm.Block) llmtest.Step {
	return llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		msg := llm.Message{Role: llm.RoleAssistant, Content: blocks}
		shared := 0
		for shared < min(len(req.Messages), len(s.previous)) && reflect.DeepEqual(req.Messages[shared], s.previous[shared]) {
			shared++
		}
		s.previous = req.Messages
		return &llm.Response{Message: msg, Usage: llm.Usage{
			InputTokens:       s.counter.CountMessages(req.Messages) + s.counter.CountTools(req.Tools),
			CachedInputTokens: s.counter.CountMessages(req.Messages[:shared]),
			OutputTokens:      s.counter.CountMessages([]llm.Message{msg}),
		}}, nil
	})
}

// budgetCheck is a model middleware that counts the tokens of each request
// the model receives, tools included, and fails any over the budget.
type budgetCheck struct {
	counter compact.TokenCounter
	budget  int

	mu  sync.Mutex
	all []int // tokens of every request, in order
}

// middleware checks every request before it is sent: written once as a
// stream, it serves Generate too (llm.Decorate).
func (c *budgetCheck) middleware(next llm.Model) llm.Model { return llm.Decorate(next, c.wrap) }

// count records req and returns an error if it is over the budget.
func (c *budgetCheck) count(req *llm.Request) error {
	n := c.counter.CountMessages(req.Messages) + c.counter.CountTools(req.Tools)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.all = append(c.all, n)
	if n > c.budget {
		return fmt.Errorf("a request of %d tokens is over the input budget of %d", n, c.budget)
	}
	return nil
}

func (c *budgetCheck) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := c.count(req); err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range next.Stream(ctx, req) {
			if !yield(ev, err) {
				return
			}
		}
	}
}
