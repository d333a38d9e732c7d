package llm

// FinishReason says why a model stopped.
type FinishReason string

// Finish reasons, normalized across providers.
const (
	FinishStop          FinishReason = "stop"           // natural end or a stop sequence
	FinishLength        FinishReason = "length"         // the output token limit was reached
	FinishToolUse       FinishReason = "tool_use"       // the model asks for tool calls
	FinishContentFilter FinishReason = "content_filter" // the provider withheld content
	FinishRefusal       FinishReason = "refusal"        // the model refused
	FinishMaxSteps      FinishReason = "max_steps"      // the tool loop hit its model-call limit
	FinishBudget        FinishReason = "budget"         // the next model call could have crossed a spending limit
	FinishUnknown       FinishReason = "unknown"        // anything else (the raw reason is logged by adapters)
)

// Response is a model's complete answer to one Request.
type Response struct {
	ID           string // the provider's response id
	Model        string // the model that answered, as the provider names it
	Message      Message
	FinishReason FinishReason
	Usage        Usage
	// Transcript, set by the tool loop, holds every message the turn added
	// in order: each assistant message and the tool results answering it.
	// Message is then the last assistant message and Usage the sum over all
	// model calls. Nil for a single model call.
	Transcript []Message
}

// Messages returns the messages this response adds to a conversation: the
// Transcript when set, else the single Message.
func (r *Response) Messages() []Message {
	if r.Transcript != nil {
		return r.Transcript
	}
	return []Message{r.Message}
}

// Usage counts tokens. InputTokens is every input token of the call,
// including those read from or written to the prompt cache; the cache fields
// say how many of them were.
type Usage struct {
	InputTokens         int `json:"input_tokens"`
	OutputTokens        int `json:"output_tokens"`
	CachedInputTokens   int `json:"cached_input_tokens,omitempty"`   // served from the prompt cache
	CacheCreationTokens int `json:"cache_creation_tokens,omitempty"` // written to the prompt cache
	ReasoningTokens     int `json:"reasoning_tokens,omitempty"`      // part of OutputTokens
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CachedInputTokens += o.CachedInputTokens
	u.CacheCreationTokens += o.CacheCreationTokens
	u.ReasoningTokens += o.ReasoningTokens
}

// Total returns input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }
