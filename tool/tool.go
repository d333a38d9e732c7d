package tool

import (
	"context"
	"encoding/json"
)

// Tool is something the model can call.
type Tool interface {
	Name() string
	Description() string
	// Parameters is the JSON Schema of the arguments object.
	Parameters() json.RawMessage
	// Invoke runs the tool with its JSON arguments and returns the text the
	// model reads. Return an error wrapping ErrFatal to stop the turn;
	// any other error becomes an error result the model can read.
	Invoke(ctx context.Context, args json.RawMessage) (string, error)
}

// Final is implemented by a tool whose successful call ends the turn: the
// tool loop runs the batch the call is part of, then returns the turn
// (FinishStop) instead of calling the model again. A call of it that
// failed (an error result the model reads) does not end the turn. Package
// structured's forced answer tool is one: its arguments are the answer.
type Final interface {
	Tool
	// EndsTurn reports whether a successful call ends the turn.
	EndsTurn() bool
}
