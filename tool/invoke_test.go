package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agcore/agcore/llm"
)

// fnTool is a Tool made of a function, for tests.
type fnTool struct {
	name    string
	fn      func(ctx context.Context, args json.RawMessage) (string, error)
	timeout time.Duration
}

func (f *fnTool) Name() string                { return f.name }
func (f *fnTool) Description() string         { return "" }
func (f *fnTool) Parameters() json.RawMessage { return nil }
func (f *fnTool) Timeout() time.Duration      { return f.timeout }
func (f *fnTool) Invoke(ctx context.Context, args json.RawMessage) (string, error) {
	return f.fn(ctx, args)
}

func call(id, name, args string) llm.ToolUse {
	return llm.ToolUse{ID: id, Name: name, Input: json.RawMessage(args)}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func lookupOf(tools ...Tool) Lookup {
	var r Registry
	if err := r.Register(tools...); err != nil {
		panic(err)
	}
	return r.Get
}

func TestInvokeRules(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	echo := &fnTool{name: "echo", fn: func(_ context.Context, a json.RawMessage) (string, error) {
		ran.Add(1)
		return "echo " + string(a), nil
	}}
	failing := &fnTool{name: "failing", fn: func(context.Context, json.RawMessage) (string, error) { return "", errors.New("file not found: a.txt") }}
	panicking := &fnTool{name: "panicking", fn: func(context.Context, json.RawMessage) (string, error) { panic("boom") }}
	sleepy := func(name string, own time.Duration) *fnTool {
		return &fnTool{name: name, timeout: own, fn: func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}}
	}
	typed := MustFunc("typed", "", func(_ context.Context, in weatherIn) (string, error) { ran.Add(1); return in.City, nil })
	big := &fnTool{name: "big", fn: func(context.Context, json.RawMessage) (string, error) { return strings.Repeat("é", 100), nil }}

	tests := []struct {
		name     string
		inv      Invoker
		call     llm.ToolUse
		want     string // substring of the result text
		wantErr  bool   // IsError
		wantRuns int32  // how many times echo/typed ran
	}{
		{"a successful call returns its text", Invoker{}, call("c", "echo", `{"a":1}`), `echo {"a":1}`, false, 1},
		{"empty arguments are an empty object", Invoker{}, call("c", "echo", ``), `echo {}`, false, 1},
		{"an unknown tool is an error result", Invoker{}, call("c", "nope", `{}`), `tool "nope" not found`, true, 0},
		{"arguments that are not JSON are an error result, the tool does not run", Invoker{}, call("c", "echo", `{"a":`), `not valid JSON: {"a":`, true, 0},
		{"arguments that are not an object are an error result", Invoker{}, call("c", "echo", `[1]`), `must be a JSON object`, true, 0},
		{"arguments failing the schema are an error result quoting the problem", Invoker{}, call("c", "typed", `{"city":1}`), `want "string"`, true, 0},
		{"a recoverable error is an error result with its message", Invoker{}, call("c", "failing", `{}`), "file not found: a.txt", true, 0},
		{"a panic is recovered as an error result", Invoker{Logger: quiet()}, call("c", "panicking", `{}`), `tool "panicking" panicked: boom`, true, 0},
		{"the invoker's timeout is honoured", Invoker{Timeout: 5 * time.Millisecond}, call("c", "sleepy", `{}`), `tool "sleepy" timed out after 5ms`, true, 0},
		{"a tool's own timeout overrides the invoker's", Invoker{Timeout: 200 * time.Millisecond}, call("c", "sleepy_own", `{}`), `timed out after 3ms`, true, 0},
		{"a long result is cut at the limit on a UTF-8 boundary with a marker", Invoker{MaxResultBytes: 11}, call("c", "big", `{}`), "éééé\n[truncated: 190 of 200 bytes cut]", false, 0},
		{"a negative limit keeps the whole result", Invoker{MaxResultBytes: -1}, call("c", "big", `{}`), strings.Repeat("é", 100), false, 0},
	}
	lookup := lookupOf(echo, failing, panicking, sleepy("sleepy", 0), sleepy("sleepy_own", 3*time.Millisecond), typed, big)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran.Store(0)
			msgs, err := tt.inv.Invoke(context.Background(), lookup, []llm.ToolUse{tt.call})
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			m := msgs[0]
			if m.Role != llm.RoleTool || m.ToolCallID != "c" || m.IsError != tt.wantErr || !strings.Contains(m.Text(), tt.want) {
				t.Errorf("result = %+v (text %q); want IsError=%v containing %q", m, m.Text(), tt.wantErr, tt.want)
			}
			if ran.Load() != tt.wantRuns {
				t.Errorf("tool ran %d times, want %d", ran.Load(), tt.wantRuns)
			}
		})
	}
}

func TestResultsComeInCallOrderTiedToTheirIDs(t *testing.T) {
	t.Parallel()
	// Later calls finish first: call i sleeps (n-i) ms.
	const n = 6
	tl := &fnTool{name: "wait", fn: func(_ context.Context, a json.RawMessage) (string, error) {
		var in struct{ I int }
		_ = json.Unmarshal(a, &in)
		time.Sleep(time.Duration(n-in.I) * time.Millisecond)
		return fmt.Sprint("done ", in.I), nil
	}}
	calls := make([]llm.ToolUse, n)
	for i := range calls {
		calls[i] = call(fmt.Sprintf("id_%d", i), "wait", fmt.Sprintf(`{"I":%d}`, i))
	}
	msgs, err := (&Invoker{}).Invoke(context.Background(), lookupOf(tl), calls)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		if m.ToolCallID != fmt.Sprintf("id_%d", i) || m.Text() != fmt.Sprint("done ", i) {
			t.Errorf("result %d = %s %q", i, m.ToolCallID, m.Text())
		}
	}
}

func TestConcurrencyLimitIsHonoured(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 3} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			var active, peak atomic.Int32
			tl := &fnTool{name: "t", fn: func(context.Context, json.RawMessage) (string, error) {
				a := active.Add(1)
				for {
					p := peak.Load()
					if a <= p || peak.CompareAndSwap(p, a) {
						break
					}
				}
				time.Sleep(2 * time.Millisecond)
				active.Add(-1)
				return "ok", nil
			}}
			calls := make([]llm.ToolUse, 9)
			for i := range calls {
				calls[i] = call(fmt.Sprint(i), "t", "{}")
			}
			if _, err := (&Invoker{Concurrency: limit}).Invoke(context.Background(), lookupOf(tl), calls); err != nil {
				t.Fatal(err)
			}
			if p := peak.Load(); p > int32(limit) || (limit > 1 && p < 2) {
				t.Errorf("peak concurrency %d with limit %d", p, limit)
			}
		})
	}
}

func TestAFatalErrorStopsTheBatch(t *testing.T) {
	t.Parallel()
	cause := errors.New("credentials revoked")
	var stopped atomic.Bool
	fatal := &fnTool{name: "fatal", fn: func(context.Context, json.RawMessage) (string, error) { return "", Fatal(cause) }}
	slow := &fnTool{name: "slow", fn: func(ctx context.Context, _ json.RawMessage) (string, error) {
		select {
		case <-ctx.Done():
			stopped.Store(true)
			return "", ctx.Err()
		case <-time.After(2 * time.Second): // not stopped: fail rather than hang
			return "finished", nil
		}
	}}
	msgs, err := (&Invoker{}).Invoke(context.Background(), lookupOf(fatal, slow), []llm.ToolUse{call("a", "slow", "{}"), call("b", "fatal", "{}")})
	if msgs != nil || !errors.Is(err, ErrFatal) || !errors.Is(err, cause) || !strings.Contains(err.Error(), `tool "fatal"`) {
		t.Fatalf("msgs %v err %v; want the fatal error", msgs, err)
	}
	if !stopped.Load() {
		t.Error("the other calls were not cancelled")
	}
}

func TestCancellationStopsEveryCallAndFailsTheBatch(t *testing.T) {
	t.Parallel()
	var started sync.WaitGroup
	var running atomic.Int32
	slow := &fnTool{name: "slow", fn: func(ctx context.Context, _ json.RawMessage) (string, error) {
		running.Add(1)
		defer running.Add(-1)
		started.Done()
		<-ctx.Done()
		return "", ctx.Err()
	}}
	ctx, cancel := context.WithCancel(context.Background())
	started.Add(3)
	go func() { started.Wait(); cancel() }()
	msgs, err := (&Invoker{}).Invoke(ctx, lookupOf(slow), []llm.ToolUse{call("a", "slow", "{}"), call("b", "slow", "{}"), call("c", "slow", "{}")})
	if msgs != nil || !errors.Is(err, llm.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("msgs %v err %v; want a cancelled error", msgs, err)
	}
	if n := running.Load(); n != 0 {
		t.Errorf("%d calls still running after Invoke returned", n)
	}
}

func TestAnAlreadyCancelledContextRunsNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran atomic.Bool
	tl := &fnTool{name: "t", fn: func(context.Context, json.RawMessage) (string, error) { ran.Store(true); return "", nil }}
	if _, err := (&Invoker{}).Invoke(ctx, lookupOf(tl), []llm.ToolUse{call("a", "t", "{}")}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if ran.Load() {
		t.Error("a tool ran under a cancelled context")
	}
}

func TestMiddlewareWrapsEachCallOutermostFirst(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var trace []string
	mark := func(name string) Middleware {
		return func(next Handler) Handler {
			return func(ctx context.Context, c Call) (string, error) {
				mu.Lock()
				trace = append(trace, name+">"+c.ID)
				mu.Unlock()
				out, err := next(ctx, c)
				return out + "|" + name, err
			}
		}
	}
	rewrite := func(next Handler) Handler {
		return func(ctx context.Context, c Call) (string, error) {
			if c.Name == "deny" {
				return "", errors.New("denied by policy")
			}
			c.Input = json.RawMessage(`{"rewritten":true}`)
			return next(ctx, c)
		}
	}
	echo := &fnTool{name: "echo", fn: func(_ context.Context, a json.RawMessage) (string, error) { return string(a), nil }}
	inv := Invoker{Concurrency: 1, Middleware: []Middleware{mark("outer"), mark("inner"), rewrite}}
	msgs, err := inv.Invoke(context.Background(), lookupOf(echo), []llm.ToolUse{call("1", "echo", `{}`), call("2", "deny", `{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[0].Text(); got != `{"rewritten":true}|inner|outer` {
		t.Errorf("result 1 = %q", got)
	}
	if !msgs[1].IsError || !strings.Contains(msgs[1].Text(), "denied by policy") {
		t.Errorf("result 2 = %+v", msgs[1])
	}
	if strings.Join(trace, ",") != "outer>1,inner>1,outer>2,inner>2" {
		t.Errorf("trace = %v", trace)
	}
}

type countingRunner struct{ batches, calls int }

func (r *countingRunner) Run(ctx context.Context, n, limit int, do func(context.Context, int)) {
	r.batches++
	for i := n - 1; i >= 0; i-- { // reverse order: results must still be in call order
		r.calls++
		do(ctx, i)
	}
}

func TestARunnerReplacesTheGoroutines(t *testing.T) {
	t.Parallel()
	r := &countingRunner{}
	echo := &fnTool{name: "echo", fn: func(_ context.Context, a json.RawMessage) (string, error) { return string(a), nil }}
	msgs, err := (&Invoker{Runner: r}).Invoke(context.Background(), lookupOf(echo), []llm.ToolUse{call("1", "echo", `{"n":1}`), call("2", "echo", `{"n":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	if r.batches != 1 || r.calls != 2 || msgs[0].Text() != `{"n":1}` || msgs[1].ToolCallID != "2" {
		t.Errorf("runner %+v, results %+v", r, msgs)
	}
}

func TestMergeFirstGroupWinsAName(t *testing.T) {
	t.Parallel()
	a := &fnTool{name: "read"}
	b := &fnTool{name: "read"}
	c := &fnTool{name: "write"}
	got := Merge([]Tool{a}, nil, []Tool{b, c})
	if len(got) != 2 || got[0] != Tool(a) || got[1] != Tool(c) {
		t.Fatalf("Merge = %v", got)
	}
	if only := []Tool{a, c}; &Merge(only)[0] != &only[0] {
		t.Error("Merge of one group copied it")
	}
	if Merge() != nil || Merge(nil, nil) != nil {
		t.Error("Merge of nothing is not nil")
	}
	if tl, ok := Find(got, "write"); !ok || tl != Tool(c) {
		t.Errorf("Find = %v, %v", tl, ok)
	}
	if _, ok := Find(got, "nope"); ok {
		t.Error("Find found a missing tool")
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"fits", "hello", 5, "hello"},
		{"no limit", "hello", -1, "hello"},
		{"cut with marker", "hello world", 5, "hello\n[truncated: 6 of 11 bytes cut]"},
		{"cut backs up to a rune start", "aé", 2, "a\n[truncated: 2 of 3 bytes cut]"},
		{"zero keeps only the marker", "abc", 0, "\n[truncated: 3 of 3 bytes cut]"},
		{"four-byte runes", "😀😀", 7, "😀\n[truncated: 4 of 8 bytes cut]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Truncate(tt.in, tt.max)
			if got != tt.want || !utf8.ValidString(got) {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}
