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
