package cli

import (
	"context"
	"errors"
	"fmt"
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
	return render.NewText(a.env.Stdout, a.env.Stderr, render.TextOptions{
		Terminal:     tty,
		Color:        tty && a.colorOK(),
		HideThinking: s.HideThinking,
		Width:        func() int { return termWidth(a.env.Stderr) },
	})
}

// turnError is a turn that ended with an error event.
type turnError struct {
	err         error
	interrupted bool // a Ctrl-C cancelled it
}

func (e *turnError) Error() string { return e.err.Error() }
func (e *turnError) Unwrap() error { return e.err }

// runTurn runs one user turn, the whole tool loop included, and shows it
// on rt.sink: start, the deltas, tool calls and results, then done once the
// turn is stored, or an error (and the session stays as it was). A Ctrl-C
// cancels the turn.
func (a *app) runTurn(ctx context.Context, rt *runtime, sessionID, prompt string) (*agent.Response, error) {
	sink := rt.sink
	tctx, end := a.intr.startTurn(ctx)
	a.intr.setNotify(func(msg string) {
		resume := sink.Pause()
		if _, ok := sink.(*render.Text); ok {
			fmt.Fprintln(a.env.Stderr, msg)
		}
		resume()
	})
	defer a.intr.setNotify(nil)

	start := time.Now()
	sink.Start(sessionID, rt.model)
	run := rt.agent.RunStream(tctx, []llm.Message{llm.UserText(prompt)}, &agent.RunOptions{SessionID: sessionID})
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
	interrupted := end()
	if err != nil {
		sink.Error(render.ErrorCode(err), errorMessage(err))
		return nil, &turnError{err: err, interrupted: interrupted || errors.Is(err, context.Canceled) && ctx.Err() != nil}
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
	})
	return resp, nil
}

// errorMessage is the error event's message.
func errorMessage(err error) string {
	var perr *agent.PersistError
	switch {
	case llm.KindOf(err) == llm.KindCancelled:
		return "the turn was cancelled; the session keeps its previous state"
	case errors.As(err, &perr):
		return "the turn could not be stored, so the session keeps its previous state: " + perr.Err.Error()
	}
	return err.Error()
}
