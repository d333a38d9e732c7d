package compact_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
)

// recorder is the model behind a guard: it records the request pointers it
// receives and answers "ok".
type recorder struct {
	mu   sync.Mutex
	reqs []*llm.Request
	info llm.ModelInfo
}

func (r *recorder) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return &llm.Response{Message: llm.AssistantText("ok"), FinishReason: llm.FinishStop}, nil
}

func (r *recorder) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		resp, _ := r.Generate(ctx, req)
		for ev, err := range llm.StreamOf(resp) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

func (r *recorder) Info() llm.ModelInfo { return r.info }

func (r *recorder) received() []*llm.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*llm.Request(nil), r.reqs...)
}

// strategyFunc is a strategy from a function; it counts its calls.
type strategyFunc struct {
	mu    sync.Mutex
	calls int
	fn    func(ctx context.Context, msgs []llm.Message, budget int, counter compact.TokenCounter) ([]llm.Message, error)
}

func (s *strategyFunc) Compress(ctx context.Context, msgs []llm.Message, budget int, counter compact.TokenCounter) ([]llm.Message, error) {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	return s.fn(ctx, msgs, budget, counter)
}

func (s *strategyFunc) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

var errStrategy = errors.New("the summarizer is down")

// toolSession returns a system prompt, a task and n tool exchanges whose
// results are about size words each.
func toolSession(n, size int) []llm.Message {
	msgs := []llm.Message{llm.SystemText("You are a careful agent."), llm.UserText("Read every file.")}
	for i := range n {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.ToolUse{ID: id, Name: "read_file", Input: json.RawMessage(fmt.Sprintf(`{"path":"f%d.txt"}`, i))},
			}},
			llm.ToolResultText(id, fmt.Sprintf("file %d: ", i)+strings.Repeat("lorem ipsum dolor sit amet ", size/5), false))
	}
	return msgs
}

// deepCopy copies a request's messages and their blocks.
func deepCopy(req *llm.Request) *llm.Request {
	c := req.Clone()
	for i := range c.Messages {
		c.Messages[i] = c.Messages[i].Clone()
	}
	return c
}

// limits are the Policy fields a TestGuard case sets.
type limits struct {
	Budget int
	Info   llm.ModelInfo
}

func TestGuard(t *testing.T) {
	t.Parallel()
	est := compact.Estimator{}
	tools := []llm.ToolDefinition{{Name: "read_file", Description: "Reads a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	long := toolSession(12, 200)
	longTokens := est.CountMessages(long) + est.CountTools(tools)
	// Truncating drops whole exchanges; it fails when even the kept
	// groups do not fit.
	truncate := func() compact.Strategy { return compact.Truncate{KeepLast: 2, Step: 1} }
	failing := func() compact.Strategy {
		return &strategyFunc{fn: func(context.Context, []llm.Message, int, compact.TokenCounter) ([]llm.Message, error) {
			return nil, errStrategy
		}}
	}
	empty := func() compact.Strategy {
		return &strategyFunc{fn: func(context.Context, []llm.Message, int, compact.TokenCounter) ([]llm.Message, error) {
			return nil, nil
		}}
	}
	// partial frees a little, not enough: a best effort with CannotFit.
	partial := func() compact.Strategy {
		return &strategyFunc{fn: func(_ context.Context, msgs []llm.Message, budget int, c compact.TokenCounter) ([]llm.Message, error) {
			out := append(append([]llm.Message(nil), msgs[:2]...), msgs[4:]...)
			return out, &compact.CannotFitError{Strategy: "partial", Tokens: c.CountMessages(out), Budget: budget}
		}}
	}

	type want int
	const (
		same       want = iota // the caller's request, the same pointer
		compressed             // a copy within the budget
		bestEffort             // a copy, smaller but over the budget
		tooLong                // KindContextLength, nothing sent
	)
	cases := []struct {
		name     string
		cfg      limits
		next     llm.ModelInfo
		msgs     []llm.Message
		strategy func() compact.Strategy
		want     want
		called   bool // whether the strategy runs
		warned   bool // whether a warning is logged
	}{
		{name: "under budget", cfg: limits{Budget: longTokens}, msgs: long, strategy: truncate, want: same},
		{name: "over budget", cfg: limits{Budget: longTokens / 3}, msgs: long, strategy: truncate, want: compressed, called: true},
		{name: "over budget, incremental", cfg: limits{Budget: longTokens / 2},
			msgs: long, strategy: func() compact.Strategy { return compact.NewIncremental(compact.DefaultPipeline(nil)) }, want: compressed, called: true},
		{name: "budget from Info", cfg: limits{Info: llm.ModelInfo{ContextWindow: 2 * longTokens / 3, ReservedOutput: 1, SafetyMargin: 1}},
			msgs: long, strategy: truncate, want: compressed, called: true},
		{name: "budget from the wrapped model's Info", next: llm.ModelInfo{ContextWindow: 2 * longTokens / 3, ReservedOutput: 1, SafetyMargin: 1},
			msgs: long, strategy: truncate, want: compressed, called: true},
		{name: "Budget overrides Info", cfg: limits{Budget: longTokens, Info: llm.ModelInfo{ContextWindow: longTokens / 3}},
			msgs: long, strategy: truncate, want: same},
		{name: "unknown limits", msgs: long, strategy: truncate, want: same},
		{name: "failing strategy, window unknown", cfg: limits{Budget: longTokens / 3},
			msgs: long, strategy: failing, want: same, called: true, warned: true},
		{name: "failing strategy, within the window", cfg: limits{Budget: longTokens / 3, Info: llm.ModelInfo{ContextWindow: longTokens}},
			msgs: long, strategy: failing, want: same, called: true, warned: true},
		{name: "failing strategy, over the window", cfg: limits{Budget: longTokens / 3, Info: llm.ModelInfo{ContextWindow: longTokens - 1}},
			msgs: long, strategy: failing, want: tooLong, called: true},
		{name: "strategy returns nothing", cfg: limits{Budget: longTokens / 3},
			msgs: long, strategy: empty, want: same, called: true, warned: true},
		{name: "partial result", cfg: limits{Budget: longTokens / 3},
			msgs: long, strategy: partial, want: bestEffort, called: true, warned: true},
		{name: "partial result still over the window", cfg: limits{Budget: longTokens / 3, Info: llm.ModelInfo{ContextWindow: longTokens / 2}},
			msgs: long, strategy: partial, want: tooLong, called: true},
		{name: "truncation cannot fit", cfg: limits{Budget: 200, Info: llm.ModelInfo{ContextWindow: 400}},
			msgs: long, strategy: truncate, want: tooLong, called: true},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			name := tc.name + "/generate"
			if stream {
				name = tc.name + "/stream"
			}
			t.Run(name, func(t *testing.T) {
				var logs bytes.Buffer
				next := &recorder{info: tc.next}
				cfg := tc.cfg
				strategy := tc.strategy()
				model := compact.Guard(&compact.Policy{
					Strategy: strategy, Counter: est, Budget: cfg.Budget, Info: cfg.Info,
					Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
				})(next)

				req := &llm.Request{Messages: tc.msgs, Tools: tools, MaxTokens: 100, Metadata: map[string]string{"k": "v"}}
				before := deepCopy(req)
				var resp *llm.Response
				var err error
				if stream {
					resp, err = llm.Collect(model.Stream(context.Background(), req))
				} else {
					resp, err = model.Generate(context.Background(), req)
				}
				if !reflect.DeepEqual(req, before) {
					t.Fatal("the caller's request was modified")
				}
				if sf, ok := strategy.(*strategyFunc); ok && (sf.count() > 0) != tc.called {
					t.Errorf("the strategy ran %d times, want called=%v", sf.count(), tc.called)
				}
				if warned := strings.Contains(logs.String(), "level=WARN"); warned != tc.warned {
					t.Errorf("warning logged: %v, want %v\n%s", warned, tc.warned, logs.String())
				}
				got := next.received()
				if tc.want == tooLong {
					var le *llm.Error
					if !errors.As(err, &le) || le.Kind != llm.KindContextLength || !errors.Is(err, llm.ErrContextLength) || llm.IsRetryable(err) {
						t.Fatalf("error %v, want a non-retryable *llm.Error of KindContextLength", err)
					}
					if !errors.Is(err, errStrategy) && !errors.Is(err, compact.ErrCannotFit) {
						t.Errorf("error %v does not wrap the strategy's error", err)
					}
					if len(got) != 0 {
						t.Errorf("%d requests sent; a request over the context window must not be", len(got))
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if resp.Message.Text() != "ok" || len(got) != 1 {
					t.Fatalf("response %q after %d requests", resp.Message.Text(), len(got))
				}
				sent := got[0]
				if tc.want == same {
					if sent != req {
						t.Error("the request was not passed on as is (same pointer)")
					}
					return
				}
				if sent == req {
					t.Fatal("the caller's request was sent as is")
				}
				if !reflect.DeepEqual(sent.Tools, req.Tools) || sent.MaxTokens != req.MaxTokens || !reflect.DeepEqual(sent.Metadata, req.Metadata) {
					t.Error("the compressed request lost fields other than the messages")
				}
				if err := compact.Validate(sent.Messages); err != nil {
					t.Errorf("the compressed request does not validate: %v", err)
				}
				n := est.CountMessages(sent.Messages) + est.CountTools(sent.Tools)
				budget := cfg.Budget
				if budget == 0 {
					budget = max(cfg.Info.InputBudget(), tc.next.InputBudget())
				}
				switch tc.want {
				case compressed:
					if n > budget {
						t.Errorf("sent %d tokens, over the budget of %d", n, budget)
					}
					if !strings.Contains(logs.String(), "compact: request compressed") {
						t.Errorf("no debug record of the compression:\n%s", logs.String())
					}
				case bestEffort:
					if n >= longTokens || n <= budget {
						t.Errorf("sent %d tokens; want the partial result, between the budget %d and the original %d", n, budget, longTokens)
					}
				}
			})
		}
	}
}

func TestGuardForwardsInfo(t *testing.T) {
	t.Parallel()
	info := llm.ModelInfo{Provider: "p", Name: "m", ContextWindow: 1000}
	m := compact.Guard(&compact.Policy{Strategy: compact.Truncate{}, Counter: compact.Estimator{}, Budget: 10})(&recorder{info: info})
	if m.Info() != info {
		t.Errorf("Info() = %+v, want the wrapped model's %+v", m.Info(), info)
	}
}

// The zero Policy works: the default strategy and the estimator.
func TestGuardZeroPolicyCompresses(t *testing.T) {
	t.Parallel()
	long := toolSession(12, 200)
	budget := compact.Estimator{}.CountMessages(long) / 2
	next := &recorder{}
	for _, p := range []*compact.Policy{nil, {Budget: budget}} {
		m := compact.Guard(p)(next)
		if _, err := m.Generate(context.Background(), &llm.Request{Messages: long}); err != nil {
			t.Fatal(err)
		}
	}
	got := next.received()
	if len(got[0].Messages) != len(long) {
		t.Error("a nil policy without known limits changed the request")
	}
	if n := (compact.Estimator{}).CountMessages(got[1].Messages); n > budget {
		t.Errorf("sent %d tokens, over the budget of %d", n, budget)
	}
}

// A strategy that fails because the run was cancelled fails the call:
// nothing is sent.
func TestGuardCancelledDuringCompression(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	s := &strategyFunc{fn: func(ctx context.Context, _ []llm.Message, _ int, _ compact.TokenCounter) ([]llm.Message, error) {
		cancel()
		return nil, ctx.Err()
	}}
	next := &recorder{}
	m := compact.Guard(&compact.Policy{Strategy: s, Counter: compact.Estimator{}, Budget: 100, Logger: slog.New(slog.DiscardHandler)})(next)
	_, err := m.Generate(ctx, &llm.Request{Messages: toolSession(5, 200)})
	if llm.KindOf(err) != llm.KindCancelled || !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want KindCancelled", err)
	}
	if n := len(next.received()); n != 0 {
		t.Errorf("%d requests sent after cancellation", n)
	}
}

// Breaking out of a guarded stream stops the wrapped one.
func TestGuardStreamStopsWhenTheCallerStops(t *testing.T) {
	t.Parallel()
	next := &recorder{}
	m := compact.Guard(&compact.Policy{Strategy: compact.Truncate{}, Counter: compact.Estimator{}, Budget: 1 << 20})(next)
	n := 0
	for _, err := range m.Stream(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	if n != 1 || len(next.received()) != 1 {
		t.Errorf("%d events, %d requests", n, len(next.received()))
	}
}

// A guard over an Incremental keeps the steps of a growing conversation a
// prefix of one another between compressions, and each within the budget.
func TestGuardWithIncrementalExtendsItsLastRequest(t *testing.T) {
	t.Parallel()
	est := compact.Estimator{}
	all := toolSession(30, 200)
	budget := est.CountMessages(all) / 4
	next := &recorder{}
	m := compact.Guard(&compact.Policy{Strategy: compact.NewIncremental(compact.Truncate{}), Counter: est, Budget: budget})(next)
	extended := 0
	for n := 4; n <= len(all); n += 2 {
		if _, err := m.Generate(context.Background(), &llm.Request{Messages: all[:n]}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := next.received()
	for i, r := range reqs {
		if c := est.CountMessages(r.Messages); c > budget {
			t.Errorf("request %d: %d tokens over the budget of %d", i, c, budget)
		}
		if err := compact.Validate(r.Messages); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
		if i > 0 && len(reqs[i-1].Messages) <= len(r.Messages) && reflect.DeepEqual(reqs[i-1].Messages, r.Messages[:len(reqs[i-1].Messages)]) {
			extended++
		}
	}
	if extended < len(reqs)*2/3 {
		t.Errorf("%d of %d requests extend the previous one; want most", extended, len(reqs))
	}
}
