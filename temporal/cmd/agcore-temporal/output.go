package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"

	agtemporal "github.com/agcore/agcore/temporal"
)

// silentExit ends the command with code, its reason already shown.
type silentExit struct{ code int }

func (e silentExit) Error() string { return fmt.Sprintf("exit %d", e.code) }

// turnOutput shows a durable turn as agcore run shows a local one: text on
// stdout and notes on stderr, or with --json the same events, or with
// --schema the typed answer alone.
type turnOutput struct {
	json, typed bool
	w, errw     io.Writer
}

func (o *turnOutput) emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(o.w, "%s\n", b)
}

func (o *turnOutput) start(sessionID, turnID, workflowID string, agents []agent.Spec) {
	if o.json {
		model := ""
		if len(agents) > 0 {
			model = agents[0].Model
		}
		o.emit(map[string]any{"type": "start", "session": sessionID, "model": model, "turn": turnID, "workflow": workflowID})
		return
	}
	fmt.Fprintf(o.errw, "turn %s of session %s (workflow %s)\n", turnID, sessionID, workflowID)
}

// errorCode is agcore run's --json error code for err.
func errorCode(err error) string {
	var ex *budget.ExceededError
	switch {
	case errors.Is(err, middleware.ErrBlocked) || errors.Is(err, middleware.ErrGuardrailFailed):
		return "blocked"
	case errors.As(err, &ex):
		return "budget"
	}
	var le *llm.Error
	if errors.As(err, &le) {
		switch le.Kind {
		case llm.KindRateLimited, llm.KindAuth, llm.KindContextLength, llm.KindOverloaded, llm.KindServer, llm.KindNetwork, llm.KindInvalidRequest:
			return le.Kind.String()
		case llm.KindCancelled:
			return "cancelled"
		case llm.KindIdleTimeout:
			return "timeout"
		}
	}
	return "internal"
}

// fail reports a turn that ended without an answer.
func (o *turnOutput) fail(turnID string, err error) error {
	if o.json {
		o.emit(map[string]any{"type": "error", "code": errorCode(err), "message": err.Error()})
		return silentExit{exitFailed}
	}
	return fmt.Errorf("turn %s: %w (the session is as it was)", turnID, err)
}

// done reports a finished turn (a spending limit's stop included).
func (o *turnOutput) done(res *agtemporal.TurnResult, sessionID string, streamed bool) error {
	if o.json {
		for _, m := range res.Transcript {
			for _, u := range m.ToolUses() {
				o.emit(map[string]any{"type": "tool_call", "id": u.ID, "name": u.Name, "input": json.RawMessage(orEmpty(u.Input))})
			}
			if m.Role == llm.RoleTool {
				o.emit(map[string]any{"type": "tool_result", "id": m.ToolCallID, "is_error": m.IsError, "output": m.Text()})
			}
		}
		done := map[string]any{"type": "done", "finish_reason": res.FinishReason, "text": res.Text, "agent": res.Agent,
			"usage":    map[string]int{"input_tokens": res.Usage.InputTokens, "output_tokens": res.Usage.OutputTokens, "cached_input_tokens": res.Usage.CachedInputTokens},
			"cost_usd": res.CostUSD, "cost_known": res.CostKnown}
		if res.Budget != nil {
			done["budget"] = res.Budget
		}
		o.emit(done)
		if res.Exceeded != nil {
			o.emit(map[string]any{"type": "error", "code": "budget", "message": res.Exceeded.Error()})
			return silentExit{exitFailed}
		}
		return nil
	}
	if o.typed {
		if len(res.Object) == 0 {
			return fmt.Errorf("turn %s: no typed answer", res.TurnID)
		}
		fmt.Fprintf(o.w, "%s\n", res.Object)
	} else {
		if !streamed {
			fmt.Fprint(o.w, res.Text)
		}
		fmt.Fprintln(o.w)
	}
	if res.Agent != "" && res.Agent != "agcore" {
		fmt.Fprintf(o.errw, "answered by %s\n", res.Agent)
	}
	if res.FinishReason == llm.FinishMaxSteps {
		fmt.Fprintf(o.errw, "the turn reached its limit of %d model calls: the last calls were not run\n", res.Steps)
	}
	cost := ""
	if res.CostKnown {
		cost = fmt.Sprintf(", $%.6f", res.CostUSD)
	}
	fmt.Fprintf(o.errw, "stored turn %s in session %s (%d model calls, %d input + %d output tokens%s)\n",
		res.TurnID, sessionID, res.Steps, res.Usage.InputTokens, res.Usage.OutputTokens, cost)
	if res.Exceeded != nil {
		fmt.Fprintf(o.errw, "agcore-temporal: %v (what the turn did is stored)\n", res.Exceeded)
		return silentExit{exitFailed}
	}
	return nil
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}
