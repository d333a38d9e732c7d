package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// DefaultHookTimeout is how long one hook may run unless Hooks.Timeout says
// otherwise.
const DefaultHookTimeout = 10 * time.Second

// Hook is one named hook; the name appears in block errors and logs.
type Hook[F any] struct {
	Name string
	Func F
}

// Hook functions, one type per event. Each returns nil to let things go on,
// [Block] to stop them, or (PreToolUse only) [Deny] to refuse one tool call.
// Any other error, a panic or a timeout is logged and ignored: hooks fail
// open.
type (
	// PreRequestFunc sees each model request before it is sent and may
	// change it in place: its own copy, whose slices and maps it may
	// change, but whose messages' blocks are shared, so replace a message
	// rather than edit its Content in place.
	PreRequestFunc func(ctx context.Context, req *llm.Request) error
	// PostRequestFunc sees each model call once it is over; it must not
	// change req or resp. For Generate it runs after a success, with the
	// response, and a Block turns the call into a failure. For Stream it
	// runs once the stream has ended, however it ended: with the
	// assembled response when the stream completed, with a nil resp when
	// it failed or the consumer stopped early. A streamed response was
	// already delivered, so there a Block is logged, not applied.
	PostRequestFunc func(ctx context.Context, req *llm.Request, resp *llm.Response) error
	// ErrorFunc is told about each failed model call. Its error is only
	// logged.
	ErrorFunc func(ctx context.Context, req *llm.Request, err error) error
	// PreToolUseFunc sees each tool call before it runs and may change its
	// arguments (call.Input).
	PreToolUseFunc func(ctx context.Context, call *tool.Call) error
	// PostToolUseFunc sees each tool call's result and may replace it.
	PostToolUseFunc func(ctx context.Context, call tool.Call, result *ToolResult) error
)

// ToolResult is a tool call's outcome as PostToolUse hooks see it: the text
// the model will read, or the error that becomes an error result.
type ToolResult struct {
	Text string
	Err  error
}

// Hooks runs user hooks at five events: around each model call (PreRequest,
// PostRequest, OnError, through [Hooks.Middleware]) and around each tool
// call (PreToolUse, PostToolUse, through [Hooks.ToolMiddleware]), and
// guardrails at two more, once per turn: on its input (InputGuardrails,
// through [Hooks.InputGate]) and on its final answer (OutputGuardrails,
// [Hooks.RunOutputGuardrails]). Hooks of one event run in order; each sees
// the changes of the ones before.
//
// A hook that returns [Block] stops the model call or the turn with an
// *[BlockedError] naming the event, the hook and the reason. A
// hook that returns another error, panics or runs past Timeout is logged
// and skipped (fail open). A hook that ignores its context's end keeps
// running in the background; what it does then is discarded.
//
// A Hooks must not be changed once in use. The zero value has no hooks.
type Hooks struct {
	PreRequest  []Hook[PreRequestFunc]
	PostRequest []Hook[PostRequestFunc]
	OnError     []Hook[ErrorFunc]
	PreToolUse  []Hook[PreToolUseFunc]
	PostToolUse []Hook[PostToolUseFunc]
	// InputGuardrails check each turn's input, once per turn, before any
	// tool runs; OutputGuardrails check each turn's final answer (see
	// InputGuardrailFunc, OutputGuardrailFunc). A tripped or failed
	// guardrail stops the turn with a *GuardrailError and nothing of the
	// turn is stored. agent.New's agents and conversation.Cycle run them
	// (Hooks.InputGate, Hooks.RunOutputGuardrails).
	InputGuardrails  []Hook[InputGuardrailFunc]
	OutputGuardrails []Hook[OutputGuardrailFunc]
	// GuardrailMode says whether the input guardrails run alongside the
	// turn's first model call (GuardrailsParallel, the zero value) or
	// before it (GuardrailsBlocking).
	GuardrailMode GuardrailMode
	// Timeout limits each hook run; 0 means DefaultHookTimeout. A
	// negative Timeout sets no limit and runs each hook on the caller's
	// goroutine: for a driver that schedules the work itself and bounds
	// it elsewhere (a durable run, whose hooks are activities with
	// timeouts of their own, may start no goroutine).
	Timeout time.Duration
	// Logger records failing hooks; nil means slog.Default().
	Logger *slog.Logger
}

// hookVerdict is what Block and Deny return.
type hookVerdict struct {
	deny   bool
	reason string
	info   any // Tripwire's info
}

func (v *hookVerdict) Error() string {
	if v.deny {
		return "denied: " + v.reason
	}
	return "blocked: " + v.reason
}

// Block returns the error a hook returns to stop what it sees: the model
// call (PreRequest, PostRequest) or the turn (PreToolUse, PostToolUse, and
// the guardrails, for which it trips the wire: see [Tripwire]).
func Block(reason string) error { return &hookVerdict{reason: reason} }

// Deny returns the error a PreToolUse hook returns to refuse one tool call:
// the call does not run and the model reads message as its error result;
// the turn goes on.
func Deny(message string) error { return &hookVerdict{deny: true, reason: message} }

// ErrBlocked matches every *[BlockedError] in errors.Is.
var ErrBlocked = errors.New("middleware: blocked by a hook")

// BlockedError is the error of a model call or turn that a hook stopped
// with [Block]. It is not retryable.
type BlockedError struct {
	Event  string // "PreRequest", "PostRequest", "PreToolUse", "PostToolUse"
	Hook   string // the hook's name
	What   string // what was blocked: "request", `call to tool "x"`, ...
	Reason string // the hook's reason
}

// Error names the event, the hook, what it blocked and why.
func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s hook %q blocked the %s: %s", e.Event, e.Hook, e.What, e.Reason)
}

// Is reports whether target is ErrBlocked.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// blocked builds the error for a hook's block.
func blocked(event, name, what, reason string) *BlockedError {
	return &BlockedError{Event: event, Hook: name, What: what, Reason: reason}
}

// run runs one hook with the timeout, recovering a panic. It returns the
// hook's verdict (nil when it passed or failed open) and whether the hook
// returned nil in time, so that its changes may be adopted.
func (h *Hooks) run(ctx context.Context, event, name string, fn func(ctx context.Context) error) (*hookVerdict, bool) {
	err := h.call(ctx, fn)
	if err == nil {
		return nil, true
	}
	var v *hookVerdict
	if errors.As(err, &v) {
		return v, false
	}
	if ctx.Err() == nil { // a cancelled turn is not the hook's failure
		h.logger().WarnContext(ctx, "hook failed; ignored", "event", event, "hook", name, "error", err.Error())
	}
	return nil, false
}

// call runs fn with the timeout, recovering a panic, and returns its error,
// or the panic's or the timeout's.
func (h *Hooks) call(ctx context.Context, fn func(ctx context.Context) error) (err error) {
	if h.Timeout < 0 {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("panic: %v", v)
			}
		}()
		return fn(ctx)
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultHookTimeout
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- fmt.Errorf("panic: %v", v)
			}
		}()
		done <- fn(hctx)
	}()
	select {
	case err = <-done:
	case <-hctx.Done():
		err = fmt.Errorf("did not return within %s: %w", timeout, hctx.Err())
	}
	return err
}

func (h *Hooks) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

// runPreRequest runs the PreRequest hooks and returns the request to send:
// req itself when there are none, else a changed copy. It returns a
// *BlockedError if a hook blocked.
func (h *Hooks) runPreRequest(ctx context.Context, req *llm.Request) (*llm.Request, error) {
	for _, hk := range h.PreRequest {
		c := req.Clone() // each hook works on its own copy, adopted only if it returns in time
		v, ok := h.run(ctx, "PreRequest", hk.Name, func(ctx context.Context) error { return hk.Func(ctx, c) })
		if v != nil {
			return nil, blocked("PreRequest", hk.Name, "request", v.reason)
		}
		if ok {
			req = c
		}
	}
	return req, nil
}

// runPostRequest runs the PostRequest hooks; it returns a *BlockedError
// if a hook blocked.
func (h *Hooks) runPostRequest(ctx context.Context, req *llm.Request, resp *llm.Response) error {
	for _, hk := range h.PostRequest {
		if v, _ := h.run(ctx, "PostRequest", hk.Name, func(ctx context.Context) error { return hk.Func(ctx, req, resp) }); v != nil {
			return blocked("PostRequest", hk.Name, "response", v.reason)
		}
	}
	return nil
}

// runOnError tells the OnError hooks about err. The agent calls it for
// failures outside the model pipeline (or when it has no Hooks middleware).
func (h *Hooks) runOnError(ctx context.Context, req *llm.Request, err error) {
	for _, hk := range h.OnError {
		h.run(ctx, "OnError", hk.Name, func(ctx context.Context) error { return hk.Func(ctx, req, err) })
	}
}

// runPreToolUse runs the PreToolUse hooks on call, which they may change.
// It returns a *tool.DeniedError if a hook denied the call, or a fatal
// *BlockedError (see tool.Fatal) if one blocked it.
func (h *Hooks) runPreToolUse(ctx context.Context, call *tool.Call) error {
	for _, hk := range h.PreToolUse {
		c := *call
		c.Input = append(json.RawMessage(nil), call.Input...)
		v, ok := h.run(ctx, "PreToolUse", hk.Name, func(ctx context.Context) error { return hk.Func(ctx, &c) })
		switch {
		case v == nil:
			if ok {
				*call = c
			}
		case v.deny:
			return &tool.DeniedError{Tool: call.Name, By: fmt.Sprintf("hook %q", hk.Name), Reason: v.reason}
		default:
			return tool.Fatal(blocked("PreToolUse", hk.Name, fmt.Sprintf("call to tool %q", call.Name), v.reason))
		}
	}
	return nil
}

// runPostToolUse runs the PostToolUse hooks on result, which they may
// replace. It returns a fatal *BlockedError if a hook blocked.
func (h *Hooks) runPostToolUse(ctx context.Context, call tool.Call, result *ToolResult) error {
	for _, hk := range h.PostToolUse {
		r := *result
		v, ok := h.run(ctx, "PostToolUse", hk.Name, func(ctx context.Context) error { return hk.Func(ctx, call, &r) })
		if v != nil {
			return tool.Fatal(blocked("PostToolUse", hk.Name, fmt.Sprintf("result of tool %q", call.Name), v.reason))
		}
		if ok {
			*result = r
		}
	}
	return nil
}

// ToolMiddleware returns the tool middleware that runs the PreToolUse and
// PostToolUse hooks around each call. Give it to the tool loop's invoker.
func (h *Hooks) ToolMiddleware() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		if len(h.PreToolUse) == 0 && len(h.PostToolUse) == 0 {
			return next
		}
		return func(ctx context.Context, call tool.Call) (string, error) {
			if err := h.runPreToolUse(ctx, &call); err != nil {
				return "", err
			}
			text, err := next(ctx, call)
			if len(h.PostToolUse) == 0 || tool.IsFatal(err) || ctx.Err() != nil {
				return text, err
			}
			res := ToolResult{Text: text, Err: err}
			if herr := h.runPostToolUse(ctx, call, &res); herr != nil {
				return "", herr
			}
			return res.Text, res.Err
		}
	}
}

// Middleware returns the model middleware that runs PreRequest before each
// model call, PostRequest after each success and OnError after each
// failure.
func (h *Hooks) Middleware() Middleware {
	return func(next llm.Model) llm.Model { return &hooked{next: next, h: h} }
}

type hooked struct {
	next llm.Model
	h    *Hooks
}

func (m *hooked) Info() llm.ModelInfo { return m.next.Info() }

func (m *hooked) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.wrap(ctx, req, llm.Next{Model: m.next, Blocking: true}))
}

func (m *hooked) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return m.wrap(ctx, req, llm.Next{Model: m.next})
}

// wrap runs the hooks around both calls. A blocking call's answer is
// not delivered yet when the PostRequest hooks run, so their error (a
// Block) is the call's; a stream's was delivered as it came, so they run
// once it ended, whichever way, and a Block is only logged.
func (m *hooked) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		req, err := m.h.runPreRequest(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		var final *llm.Response
		if len(m.h.PostRequest) > 0 && !next.Blocking {
			// Once the stream has ended, whichever way (see PostRequestFunc).
			defer func() { m.postStream(ctx, req, final) }()
		}
		for ev, err := range next.Stream(ctx, req) {
			if err != nil {
				m.h.runOnError(ctx, req, err)
				yield(llm.Event{}, err)
				return
			}
			if ev.Type == llm.EventComplete {
				final = ev.Response
				if next.Blocking {
					if err := m.h.runPostRequest(ctx, req, final); err != nil {
						yield(llm.Event{}, err)
						return
					}
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// postStream runs the PostRequest hooks after a stream ended. What the
// stream delivered cannot be taken back, so a Block is only logged.
func (m *hooked) postStream(ctx context.Context, req *llm.Request, resp *llm.Response) {
	var b *BlockedError
	if err := m.h.runPostRequest(ctx, req, resp); errors.As(err, &b) {
		m.h.logger().WarnContext(ctx, "a PostRequest hook blocked a streamed response that was already delivered; ignored",
			"hook", b.Hook, "reason", b.Reason)
	}
}

// Verdict is what a hook's [Block], [Deny] or [Tripwire] error says, as
// data: a driver that runs a hook somewhere else (a durable run's worker)
// carries it back and rebuilds the error with [Verdict.Err].
type Verdict struct {
	// Kind is "block" (Block and Tripwire) or "deny".
	Kind   string
	Reason string
	// Info is what Tripwire was given (nil for Block and Deny).
	Info any
}

// VerdictOf returns the verdict err carries, if it is one.
func VerdictOf(err error) (Verdict, bool) {
	var v *hookVerdict
	if !errors.As(err, &v) {
		return Verdict{}, false
	}
	kind := "block"
	if v.deny {
		kind = "deny"
	}
	return Verdict{Kind: kind, Reason: v.reason, Info: v.info}, true
}

// Err returns the error the verdict stands for, which hooks, guardrails
// and the tool loop treat as the hook's own.
func (v Verdict) Err() error {
	return &hookVerdict{deny: v.Kind == "deny", reason: v.Reason, info: v.Info}
}
