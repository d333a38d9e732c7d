package compact

import (
	"context"

	"github.com/agcore/agcore/llm"
)

// TokenCounter counts the tokens a request would use.
type TokenCounter interface {
	// CountMessages returns the tokens of msgs including per-message overhead.
	CountMessages(msgs []llm.Message) int
	// CountTools returns the tokens the tool definitions add to a request.
	CountTools(tools []llm.ToolDefinition) int
}

// Strategy shrinks a conversation to fit a token budget.
type Strategy interface {
	// Compress returns messages whose count (by counter) is at most budget,
	// or an error (ErrCannotFit when it cannot). It must not modify msgs.
	Compress(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, error)
}
