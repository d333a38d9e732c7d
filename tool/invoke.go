package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
	"unicode/utf8"

	"github.com/agcore/agcore/llm"
)

// Defaults of the zero [Invoker].
const (
	DefaultConcurrency    = 8        // calls of one batch running at once
	DefaultMaxResultBytes = 64 << 10 // bytes of one result the model reads
)

// Call is one tool call as a [Handler] sees it.
type Call struct {
	ID    string          // the ToolUse id the result answers
	Name  string          // the tool's name as the model wrote it
	Input json.RawMessage // the arguments; never empty ("{}" at least)
	// Tool is the tool called, or nil when no tool has this name (the
	// innermost handler then answers `tool "x" not found`).
	Tool Tool
}

// Handler runs one call and returns the text the model reads. Its error
// becomes an error result, unless it wraps [ErrFatal] (the turn stops) or
// the batch's context is done (the batch fails as cancelled).
type Handler func(ctx context.Context, call Call) (string, error)

// Middleware wraps the handling of each tool call: it may look at or change
// the call (call.Input), refuse it by returning an error without calling
// next, or change the result. Approval, hooks and logging are middleware.
type Middleware func(next Handler) Handler

// Lookup finds a tool by name; [Registry.Get] and [Definitions.Get] are
// lookups.
type Lookup func(name string) (Tool, bool)

// Runner runs the calls of one batch. Run must call do(ctx, i) exactly once
// for every i in [0, n), at most limit at a time (limit >= 1), and return
// only when all of them have returned. A durable orchestrator can replace
// the default [GoRunner] with one that schedules the calls itself.
type Runner interface {
	Run(ctx context.Context, n, limit int, do func(ctx context.Context, i int))
}

// GoRunner is the default [Runner]: up to limit goroutines take the calls in
// order. A batch of one call, or a limit of one, runs on the caller's
// goroutine.
type GoRunner struct{}

// Run implements [Runner].
func (GoRunner) Run(ctx context.Context, n, limit int, do func(ctx context.Context, i int)) {
	if n == 1 || limit <= 1 {
		for i := range n {
			do(ctx, i)
		}
		return
	}
	workers := min(limit, n)
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	done := make(chan struct{}, workers)
	for range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range next {
				do(ctx, i)
			}
		}()
	}
	for range workers {
		<-done
	}
}

// Invoker runs batches of tool calls (the tool loop's "invoke all"). The
// zero value runs up to DefaultConcurrency calls at once with no timeout
// and results cut at DefaultMaxResultBytes. An Invoker must not be changed
// while it runs a batch.
type Invoker struct {
	// Concurrency is the most calls of a batch running at once; 0 means
	// DefaultConcurrency, 1 runs them one after another.
	Concurrency int
	// Timeout limits each call; 0 means none. A tool implementing [Timed]
	// sets its own. A call that times out becomes an error result.
	Timeout time.Duration
	// MaxResultBytes is the most bytes of a result the model reads; longer
	// results are cut on a UTF-8 boundary and end with a marker saying how
	// much was cut. 0 means DefaultMaxResultBytes, negative means no limit.
	MaxResultBytes int
	// Middleware wraps every call; the first is the outermost.
	Middleware []Middleware
	// Runner runs the calls of a batch; nil means GoRunner.
	Runner Runner
	// Logger records recovered panics; nil means slog.Default().
	Logger *slog.Logger
}

// Invoke runs calls (at most Concurrency at a time) and returns one
// tool-result message per call, in call order, each with its call's
// ToolCallID. Every call is answered: an unknown tool, bad arguments, a
// tool's error, a panic or a timeout become error results (IsError) and
// the others still run.
//
// Invoke returns an error, and no results, in two cases: a tool returned a
// fatal error (wrapping [ErrFatal]; the other calls' contexts are cancelled,
// and the first fatal error in call order is returned), or ctx was done (a
// KindCancelled *llm.Error that also matches ctx's error). In both cases
// every call has returned before Invoke does, so nothing is left running —
// provided the tools honour their context.
func (inv *Invoker) Invoke(ctx context.Context, lookup Lookup, calls []llm.ToolUse) ([]llm.Message, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, llm.Cancelled("", err)
	}
	h := inv.handler()
	limit := inv.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	runner := inv.Runner
	if runner == nil {
		runner = GoRunner{}
	}
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()

	results := make([]llm.Message, len(calls))
	fatal := make([]error, len(calls))
	runner.Run(bctx, len(calls), min(limit, len(calls)), func(ctx context.Context, i int) {
		c := calls[i]
		call := Call{ID: c.ID, Name: c.Name, Input: c.InputOrEmpty()}
		if lookup != nil {
			call.Tool, _ = lookup(c.Name)
		}
		text, err := inv.run(ctx, h, call)
		if err != nil && IsFatal(err) {
			fatal[i] = err
			cancel()
			return
		}
		isErr := err != nil
		if isErr {
			text = err.Error()
		}
		results[i] = llm.ToolResultText(c.ID, Truncate(text, inv.maxBytes()), isErr)
	})
	for i, err := range fatal {
		if err != nil {
			return nil, fmt.Errorf("tool %q (call %s): %w", calls[i].Name, calls[i].ID, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, llm.Cancelled("", err)
	}
	return results, nil
}

func (inv *Invoker) maxBytes() int {
	switch {
	case inv.MaxResultBytes == 0:
		return DefaultMaxResultBytes
	case inv.MaxResultBytes < 0:
		return -1
	}
	return inv.MaxResultBytes
}

// handler composes the middleware around the innermost handler.
func (inv *Invoker) handler() Handler {
	h := inv.invokeTool
	for i := len(inv.Middleware) - 1; i >= 0; i-- {
		if mw := inv.Middleware[i]; mw != nil {
			h = mw(h)
		}
	}
	return h
}

// run calls h, turning a panic into an error result.
func (inv *Invoker) run(ctx context.Context, h Handler, call Call) (text string, err error) {
	defer func() {
		if v := recover(); v != nil {
			logger := inv.Logger
			if logger == nil {
				logger = slog.Default()
			}
			logger.ErrorContext(ctx, "tool panicked", "tool", call.Name, "call_id", call.ID,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			text, err = "", fmt.Errorf("tool %q panicked: %v", call.Name, v)
		}
	}()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return h(ctx, call)
}

// invokeTool is the innermost handler: it finds the tool, checks the
// arguments are a JSON object and runs the tool under its time limit.
func (inv *Invoker) invokeTool(ctx context.Context, call Call) (string, error) {
	if call.Tool == nil {
		return "", &notFoundError{name: call.Name}
	}
	in := bytes.TrimSpace(call.Input)
	if len(in) == 0 {
		in = []byte("{}")
	}
	if !json.Valid(in) {
		return "", &ArgumentError{Tool: call.Name, Err: fmt.Errorf("not valid JSON: %.200s", in)}
	}
	if text, bad := (llm.ToolUse{Input: in}).Malformed(); bad && in[0] == '"' {
		// The model sent text that is not JSON (see llm.ToolUse).
		return "", &ArgumentError{Tool: call.Name, Err: fmt.Errorf("the arguments are not valid JSON (cut short or malformed): %.200s; call the tool again with one complete JSON object", text)}
	}
	if in[0] != '{' {
		return "", &ArgumentError{Tool: call.Name, Err: fmt.Errorf("arguments must be a JSON object, got %.100s", in)}
	}
	timeout := inv.Timeout
	if t, ok := call.Tool.(Timed); ok && t.Timeout() > 0 {
		timeout = t.Timeout()
	}
	tctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	out, err := call.Tool.Invoke(tctx, in)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		if timeout > 0 && tctx.Err() != nil {
			return "", fmt.Errorf("tool %q timed out after %s", call.Name, timeout)
		}
		return "", fmt.Errorf("tool %q timed out: %w", call.Name, err)
	}
	return out, err
}

type notFoundError struct{ name string }

func (e *notFoundError) Error() string        { return fmt.Sprintf("tool %q not found", e.name) }
func (e *notFoundError) Is(target error) bool { return target == ErrNotFound }

// Truncate returns s cut to at most max bytes on a UTF-8 boundary, followed
// by a marker saying how many bytes were cut. s is returned as is when it
// fits or max is negative.
func Truncate(s string, max int) string {
	if max < 0 || len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s\n[truncated: %d of %d bytes cut]", s[:cut], len(s)-cut, len(s))
}
