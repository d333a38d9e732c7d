package agent

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// ContextProvider adds context to an agent's runs and learns how they ended.
// Providers are called only for runs that have
// a session, in the order of Agent.Providers.
//
// A provider may keep per-session data in the session's state bag
// ([session.GetState], [session.SetState] on Invocation.Session); the keys
// it changes are persisted with the turn when the run succeeds, and
// discarded when it fails.
type ContextProvider interface {
	// Invoking runs before the model call and returns what to add to the
	// request. An error skips this provider for the run (it is logged and
	// reported to Agent.OnError); the run goes on.
	Invoking(ctx context.Context, inv *Invocation) (Injection, error)
	// Invoked runs when the run's stream has ended: out holds the request
	// and either the response or the error that ended the run. An error is
	// logged and reported; it changes nothing else.
	Invoked(ctx context.Context, inv *Invocation, out *Outcome) error
}

// Invocation describes a run to its context providers.
type Invocation struct {
	Agent *Agent
	RunID string
	// Session is the run's working copy of the session: its history as
	// loaded, and a state bag the provider may change.
	Session *session.Session
	// Messages are the caller's messages for this run, system-role messages
	// dropped. Do not change them.
	Messages []llm.Message
	// Options are the run's options. Do not change them.
	Options *RunOptions
}

// Injection is what one provider adds to a run.
type Injection struct {
	// Instructions are appended to the system message, after the agent's
	// and earlier providers' instructions, separated by a blank line.
	Instructions string
	// Messages go after the session's history and before the caller's
	// messages. System-role messages are dropped.
	Messages []llm.Message
	// ReplaceMessages makes Messages replace the messages earlier providers
	// added instead of following them.
	ReplaceMessages bool
	// Tools are offered for this run after the agent's own; a tool whose
	// name is already taken is skipped.
	Tools []tool.Tool
	// ToolsNow, when set, is asked before each model call after the
	// turn's first: its tools replace Tools for the rest of the turn (the
	// next model call is offered them), for tools that change while a turn
	// runs (an MCP server's tools/list_changed). It must be safe to call
	// from the run's goroutine while others change what it returns.
	ToolsNow func() []tool.Tool
}

// Outcome is how a run ended, as Invoked sees it.
type Outcome struct {
	// Request is the request sent to the model (nil if the run failed before
	// it was built).
	Request *llm.Request
	// Response is the run's response; nil when Err is set.
	Response *Response
	// Err is why the run failed: the model's error, a cancellation, or
	// ErrAbandoned.
	Err error
}

// providerName returns p's Name() if it has one, else its Go type.
func providerName(p ContextProvider) string {
	if n, ok := p.(interface{ Name() string }); ok {
		return n.Name()
	}
	return fmt.Sprintf("%T", p)
}
