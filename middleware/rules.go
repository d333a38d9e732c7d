package middleware

import (
	"errors"
	"fmt"

	"github.com/agcore/agcore/llm"
)

// The rules below decide how a tool loop ends a turn ([FunctionInvocation]
// applies them; a durable turn runs that same loop inside its workflow).

// StepLimit returns the most model calls of a turn configured with
// maxSteps: maxSteps when positive, else [DefaultMaxSteps].
func StepLimit(maxSteps int) int {
	if maxSteps <= 0 {
		return DefaultMaxSteps
	}
	return maxSteps
}

// StopBeforeTools decides whether the tool calls of a model answer must
// not run: the answer was cut off by the output token limit (finish is
// FinishLength), or it came from the step-th model call (1-based) of a
// turn limited to limit calls ([StepLimit]). When they must not, it
// returns the finish reason the turn ends with (FinishLength or
// FinishMaxSteps) and why, for [NotRun].
func StopBeforeTools(step, limit int, finish llm.FinishReason) (end llm.FinishReason, why string, stop bool) {
	switch {
	case finish == llm.FinishLength:
		return llm.FinishLength, "the answer was cut off by the output token limit", true
	case step >= limit:
		return llm.FinishMaxSteps, fmt.Sprintf("the tool loop reached its limit of %d model calls", limit), true
	}
	return "", "", false
}

// NotRun answers each call, in call order, with an error result saying
// that it was not run and why, so that every tool_use keeps its
// tool_result.
func NotRun(calls []llm.ToolUse, why string) []llm.Message {
	out := make([]llm.Message, len(calls))
	for i, c := range calls {
		out[i] = llm.ToolResultText(c.ID, fmt.Sprintf("tool %q was not run: %s", c.Name, why), true)
	}
	return out
}

// StopOnBudget decides whether a model call's error ends the turn the way
// the step limit does: the call was refused by a spending limit (err
// matches [llm.ErrBudgetExceeded]) and steps model calls of the turn
// have already answered. The turn then ends with [llm.FinishBudget]: what
// it did stands (every tool call made so far is answered, since the
// refused call was the one that would have read their results). A refusal
// of the turn's first call (steps == 0) is the turn's error: it did
// nothing.
func StopOnBudget(steps int, err error) bool {
	return steps > 0 && errors.Is(err, llm.ErrBudgetExceeded)
}
