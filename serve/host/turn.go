package host

import (
	"context"

	"github.com/agcore/agcore/llm"
)

// Turn is a turn an entry point of the server is about to run, as a
// TurnHook sees it.
type Turn struct {
	// Agent is the name of the agent that runs it.
	Agent string
	// Session is the id of its session in the principal's store
	// (Sessions), "" for a turn without one (a stateless request).
	Session string
	// ID names the turn (the response's, the task's, the run's id), unique
	// on the server.
	ID string
	// Input is the caller's messages.
	Input []llm.Message
}

// TurnHook prepares a turn: it returns the context to run the turn with
// and the function to call once the turn is over (its updates consumed).
// It may wait, for the turns before it on the session, until ctx ends.
type TurnHook func(ctx context.Context, t Turn) (context.Context, func())

type turnHookKey struct{}

// WithTurnHook returns ctx carrying hook, which the entry points call
// before each turn they run for the request (BeginTurn): package serve
// sets its record keeping (serve.Options.Records) so on every request it
// authenticates.
func WithTurnHook(ctx context.Context, hook TurnHook) context.Context {
	return context.WithValue(ctx, turnHookKey{}, hook)
}

// BeginTurn calls the TurnHook of ctx, if any, for t and returns what it
// returns; without one, ctx and a function that does nothing.
func BeginTurn(ctx context.Context, t Turn) (context.Context, func()) {
	if hook, _ := ctx.Value(turnHookKey{}).(TurnHook); hook != nil {
		if c, end := hook(ctx, t); c != nil && end != nil {
			return c, end
		}
	}
	return ctx, func() {}
}
