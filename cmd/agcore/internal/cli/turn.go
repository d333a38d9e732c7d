package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/llm"
)

// newSink returns the sink the settings ask for: JSON events on stdout, or
// text for people.
func (a *app) newSink(s *config.Settings) render.Sink {
	if s.JSON {
		return render.NewJSON(a.env.Stdout)
	}
	tty := isTerminal(a.env.Stderr)
	opts := render.TextOptions{
		Terminal:     tty,
		Color:        tty && a.colorOK(),
		HideThinking: s.HideThinking,
		Width:        func() int { return termWidth(a.env.Stderr) },
	}
	// Markdown is rendered only for a person: stdout a terminal, --raw
	// not given, a terminal that is not dumb.
	if term, _ := a.env.Getenv("TERM"); !s.Raw && isTerminal(a.env.Stdout) && !strings.EqualFold(term, "dumb") {
		if md, err := render.NewMarkdown(termWidth(a.env.Stdout), !a.colorOK()); err == nil {
			opts.Markdown = md
		}
	}
	return render.NewText(a.env.Stdout, a.env.Stderr, opts)
}

// turnError is a turn that did not complete: it failed, timed out or was
// cancelled. It has been reported already.
type turnError struct {
	err         error
	interrupted bool // a Ctrl-C cancelled it
}

func (e *turnError) Error() string { return e.err.Error() }
func (e *turnError) Unwrap() error { return e.err }

// runTurn runs one user turn, the whole tool loop included, and shows it
// on rt.sink: start, the deltas, tool calls and results, then done once the
// turn is stored, or an error (and the session stays as it was). A Ctrl-C
// cancels the turn; --timeout bounds it.
func (a *app) runTurn(ctx context.Context, rt *runtime, sessionID, prompt string) (*agent.Response, error) {
	sink := rt.sink
	if err := a.checkPrompt(rt, prompt); err != nil {
		sink.Start(sessionID, rt.model)
		sink.Error("context_length", err.Error())
		return nil, &turnError{err: err}
	}
	ictx, end := a.intr.startTurn(ctx)
	tctx := ictx
	if rt.s.Timeout > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeoutCause(ictx, rt.s.Timeout, errTurnTimeout)
		defer cancel()
	}
	a.intr.setNotify(func(string) {
		if t, ok := sink.(*render.Text); ok {
			t.Busy("cancelling")
		}
	})
	defer a.intr.setNotify(nil)
	if rt.quiet != nil {
		rt.quiet.reset()
	}

	start := time.Now()
	sink.Start(sessionID, rt.model)
	input := []llm.Message{userMessage(prompt, rt.attach)}
	rt.attach = nil
	if rt.rec != nil {
		rt.rec.Turn(sessionID, input)
	}
	run := rt.agent.RunStream(tctx, input, &agent.RunOptions{SessionID: sessionID, MaxTokens: rt.s.MaxTokens, Temperature: rt.s.Temperature})
	for u, err := range run.Updates() {
		if err != nil {
			break // Wait returns it
		}
		switch u.Kind {
		case agent.UpdateText:
			sink.Text(u.Text)
		case agent.UpdateThinking:
			sink.Thinking(u.Text)
		case agent.UpdateToolCall:
			sink.ToolCall(u.ToolCall)
		case agent.UpdateToolResult:
			sink.ToolResult(u.ToolResult)
		}
	}
	// Done is shown only once the turn is stored: the post-invocation phase
	// runs to its end even after a Ctrl-C, so nothing is half-kept.
	resp, err := run.Wait()
	if err == nil {
		err = resp.PersistErr()
	}
	timedOut := errors.Is(context.Cause(tctx), errTurnTimeout)
	interrupted := end()
	// A turn a spending limit stopped after its first model call is
	// stored: done, then the error naming the limit.
	var stopped error
	if resp != nil && errors.Is(err, llm.ErrBudgetExceeded) {
		stopped, err = err, resp.PersistErr()
	}
	switch {
	case err == nil:
	case interrupted || ctx.Err() != nil:
		sink.Cancelled("cancelled; nothing was stored")
		return nil, &turnError{err: err, interrupted: true}
	case timedOut:
		sink.Error("timeout", fmt.Sprintf("the turn took longer than --timeout %s, so it was stopped; nothing was stored", rt.s.Timeout))
		return nil, &turnError{err: err}
	default:
		sink.Error(render.ErrorCode(err), describe(rt.s, err))
		return nil, &turnError{err: err}
	}
	sink.Done(render.Done{
		Session:      sessionID,
		Model:        resp.Model,
		FinishReason: resp.FinishReason,
		Text:         resp.Text(),
		Usage:        resp.Usage,
		CostUSD:      resp.CostUSD,
		CostKnown:    resp.CostKnown,
		Duration:     time.Since(start),
		Citations:    render.CitationsOf(resp.Message),
		Budget:       resp.Budget,
	})
	if stopped != nil {
		sink.Error(render.ErrorCode(stopped), describe(rt.s, stopped))
		return resp, &turnError{err: stopped}
	}
	return resp, nil
}
