package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/structured"
)

// readSchema reads the JSON Schema of run --schema: the file it names, or
// the schema itself when the value starts with '{'. It must be an object
// schema.
func readSchema(arg string) (json.RawMessage, error) {
	b := []byte(arg)
	if !strings.HasPrefix(strings.TrimSpace(arg), "{") {
		var err error
		if b, err = os.ReadFile(arg); err != nil {
			return nil, exit(ExitUsage, "--schema: %v", err)
		}
	}
	b = bytes.TrimSpace(b)
	if !json.Valid(b) {
		return nil, exit(ExitUsage, "--schema %s: not JSON", arg)
	}
	if err := structured.CheckSchema(b); err != nil {
		return nil, exit(ExitUsage, "--schema %s: %v", arg, err)
	}
	return b, nil
}

// typedTurn runs one user turn whose answer must validate against schema
// (structured.Run) and prints the answer on stdout, compact, on one line.
// Everything else (tool calls, the usage line, the error) goes to stderr;
// a turn with no valid answer is an error (exit 1) that says what failed.
func (a *app) typedTurn(ctx context.Context, s *config.Settings, opts buildOptions, spec sessionSpec, prompt string, schema json.RawMessage) error {
	rt, err := a.build(ctx, s, opts)
	if err != nil {
		if ctx.Err() != nil {
			err = exit(ExitInterrupted, "interrupted while starting: %v", err)
		}
		return err
	}
	defer rt.Close()
	closeNamed, err := a.joinHandoffs(ctx, opts.cmd, rt)
	if err != nil {
		return err
	}
	defer closeNamed()
	id, existed, err := a.pickSession(ctx, rt, spec)
	if err != nil {
		return err
	}
	var sink render.Sink
	if s.JSON {
		// The events on stdout; the done event carries the answer.
		sink = render.NewJSON(a.env.Stdout)
	} else {
		tty := isTerminal(a.env.Stderr)
		sink = render.NewText(io.Discard, a.env.Stderr, render.TextOptions{
			Terminal: tty, Color: tty && a.colorOK(), HideThinking: s.HideThinking,
			Width: func() int { return termWidth(a.env.Stderr) },
		})
	}
	rt.setSink(sink)
	defer sink.Close()
	if err := a.checkPrompt(rt, prompt); err != nil {
		sink.Error("context_length", err.Error())
		return exit(ExitFailed, "")
	}
	ictx, end := a.intr.startTurn(ctx)
	tctx := ictx
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeoutCause(ictx, s.Timeout, errTurnTimeout)
		defer cancel()
	}
	if rt.quiet != nil {
		rt.quiet.reset()
	}
	start := time.Now()
	sink.Start(id, rt.model)
	answerCalls := map[string]bool{} // the forced answer tool's calls: the answer, not shown as tool calls
	v, resp, err := structured.Run[json.RawMessage](tctx, rt.agent, []llm.Message{userMessage(prompt, rt.attach)}, &structured.Options{
		Run:    &agent.RunOptions{SessionID: id, MaxTokens: s.MaxTokens, Temperature: s.Temperature},
		Schema: schema,
		Name:   "answer",
		OnUpdate: func(u agent.Update) {
			switch u.Kind {
			case agent.UpdateThinking:
				sink.Thinking(u.Text)
			case agent.UpdateToolCall:
				if u.ToolCall.Name == structured.ToolName {
					answerCalls[u.ToolCall.ID] = true
				} else {
					sink.ToolCall(u.ToolCall)
				}
			case agent.UpdateToolResult:
				if u.ToolResult != nil && !answerCalls[u.ToolResult.ToolCallID] {
					sink.ToolResult(u.ToolResult)
				}
			}
		},
	})
	if err == nil && resp != nil {
		err = resp.PersistErr()
	}
	timedOut := errors.Is(context.Cause(tctx), errTurnTimeout)
	interrupted := end()
	var se *structured.Error
	switch {
	case err == nil:
	case interrupted || ctx.Err() != nil:
		sink.Cancelled("cancelled; nothing was stored")
		return exit(ExitInterrupted, "")
	case timedOut:
		sink.Error("timeout", fmt.Sprintf("the turn took longer than --timeout %s, so it was stopped; nothing was stored", s.Timeout))
		return exit(ExitFailed, "")
	case errors.As(err, &se):
		msg := "no answer validates against the schema: " + se.Error()
		if se.Raw != "" {
			msg += fmt.Sprintf("\nthe answer was: %.500s", se.Raw)
		}
		sink.Error("invalid_answer", msg)
		return exit(ExitFailed, "")
	default:
		sink.Error(render.ErrorCode(err), describe(s, err))
		return exit(ExitFailed, "")
	}
	var out bytes.Buffer
	if err := json.Compact(&out, v); err != nil {
		out.Reset()
		out.Write(v)
	}
	done := render.Done{Session: id, Model: resp.Model, FinishReason: resp.FinishReason,
		Usage: resp.Usage, CostUSD: resp.CostUSD, CostKnown: resp.CostKnown, Duration: time.Since(start)}
	if s.JSON {
		done.Object, done.Text = out.Bytes(), out.String()
	} else {
		out.WriteByte('\n')
		if _, err := a.env.Stdout.Write(out.Bytes()); err != nil {
			return exit(ExitFailed, "writing the answer: %v", err)
		}
	}
	sink.Done(done)
	if note := storedNote(rt, turnOutcome{id: id, existed: existed}); note != "" {
		sink.Note(note)
	}
	return nil
}
