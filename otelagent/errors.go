package otelagent

import (
	"context"
	"errors"
	"fmt"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
)

// ErrorType is the error.type recorded for err: a short, low-cardinality
// class.
//
//   - an *llm.Error: its kind ("rate_limited", "overloaded", "auth",
//     "context_length", "invalid_request", "server", "network",
//     "idle_timeout", "cancelled", "too_large", "malformed", "unknown");
//   - a context's end: "cancelled" or "timeout";
//   - a run or stream abandoned by its caller (agent.ErrAbandoned,
//     ErrStopped): "abandoned";
//   - a hook's block: "blocked"; a denied tool call: "denied"; a call to a
//     tool that does not exist: "tool_not_found"; arguments that are not
//     a JSON object: "invalid_arguments"; a fatal tool error: "fatal";
//   - anything else: the error's Go type ("*mcp.ToolError"), or "_OTHER"
//     for an anonymous one (errors.New, fmt.Errorf).
func ErrorType(err error) string {
	var le *llm.Error
	var denied *tool.DeniedError
	var args *tool.ArgumentError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, llm.ErrBudgetExceeded):
		return "budget_exceeded"
	case errors.As(err, &le):
		return le.Kind.String()
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, agent.ErrAbandoned), errors.Is(err, ErrStopped):
		return "abandoned"
	case errors.Is(err, middleware.ErrBlocked):
		return "blocked"
	case errors.As(err, &denied):
		return "denied"
	case errors.Is(err, tool.ErrNotFound):
		return "tool_not_found"
	case errors.As(err, &args):
		return "invalid_arguments"
	case tool.IsFatal(err):
		return "fatal"
	}
	switch name := fmt.Sprintf("%T", err); name {
	case "*errors.errorString", "*fmt.wrapError", "*fmt.wrapErrors", "*errors.joinError":
		return "_OTHER"
	default:
		return name
	}
}
