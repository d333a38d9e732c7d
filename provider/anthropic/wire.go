package anthropic

import (
	"encoding/json"

	"github.com/agcore/agcore/llm"
)

// The Messages API's JSON, as far as this adapter reads or writes it.

type wireRequest struct {
	Model         string            `json:"model"`
	MaxTokens     int               `json:"max_tokens"`
	System        []*textBlock      `json:"system,omitempty"`
	Messages      []wireMessage     `json:"messages"`
	Tools         []*wireTool       `json:"tools,omitempty"`
	ToolChoice    *wireToolChoice   `json:"tool_choice,omitempty"`
	Temperature   *float64          `json:"temperature,omitempty"`
	TopP          *float64          `json:"top_p,omitempty"`
	StopSequences []string          `json:"stop_sequences,omitempty"`
	Thinking      *wireThinking     `json:"thinking,omitempty"`
	OutputConfig  *wireOutputConfig `json:"output_config,omitempty"`
	Stream        bool              `json:"stream,omitempty"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"` // *textBlock, *imageBlock, ..., json.RawMessage
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type textBlock struct {
	Type         string        `json:"type"` // "text"
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type wireSource struct {
	Type      string `json:"type"` // base64, url, text, file
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
	FileID    string `json:"file_id,omitempty"`
}

type imageBlock struct {
	Type         string        `json:"type"` // "image"
	Source       wireSource    `json:"source"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type documentBlock struct {
	Type         string        `json:"type"` // "document"
	Source       wireSource    `json:"source"`
	Title        string        `json:"title,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type toolUseBlock struct {
	Type         string          `json:"type"` // "tool_use"
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type toolResultBlock struct {
	Type         string        `json:"type"` // "tool_result"
	ToolUseID    string        `json:"tool_use_id"`
	Content      []any         `json:"content,omitempty"`
	IsError      bool          `json:"is_error,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

// Thinking blocks cannot carry cache_control.
type thinkingBlock struct {
	Type      string `json:"type"` // "thinking"
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type redactedThinkingBlock struct {
	Type string `json:"type"` // "redacted_thinking"
	Data string `json:"data"`
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type wireToolChoice struct {
	Type string `json:"type"` // auto, any, tool, none
	Name string `json:"name,omitempty"`
}

type wireThinking struct {
	Type         string `json:"type"` // "enabled"
	BudgetTokens int    `json:"budget_tokens"`
}

type wireOutputConfig struct {
	Effort string      `json:"effort,omitempty"`
	Format *wireFormat `json:"format,omitempty"`
}

type wireFormat struct {
	Type   string          `json:"type"` // "json_schema"
	Schema json.RawMessage `json:"schema"`
}

// wireResponse is a non-streamed answer, and the "message" of message_start.
type wireResponse struct {
	ID         string            `json:"id"`
	Type       string            `json:"type"`
	Model      string            `json:"model"`
	Content    []json.RawMessage `json:"content"`
	StopReason string            `json:"stop_reason"`
	Usage      wireUsage         `json:"usage"`
}

// wireUsage uses pointers so a message_delta can say which counts it
// carries: present counts replace message_start's.
type wireUsage struct {
	InputTokens              *int             `json:"input_tokens"`
	OutputTokens             *int             `json:"output_tokens"`
	CacheCreationInputTokens *int             `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int             `json:"cache_read_input_tokens"`
	Iterations               []wireUsageCount `json:"iterations"`
}

type wireUsageCount struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// wireContent is a response content block (and a content_block_start's
// content_block).
type wireContent struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Citations []wireCitation  `json:"citations"`
}

// wireCitation is one of a text block's citations, of any location type:
// char_location, page_location, content_block_location (a document of the
// request), web_search_result_location, search_result_location.
type wireCitation struct {
	Type           string `json:"type"`
	CitedText      string `json:"cited_text"`
	DocumentIndex  int    `json:"document_index"`
	DocumentTitle  string `json:"document_title"`
	StartCharIndex int    `json:"start_char_index"`
	EndCharIndex   int    `json:"end_char_index"`
	StartPage      int    `json:"start_page_number"`
	EndPage        int    `json:"end_page_number"`
	StartBlock     int    `json:"start_block_index"`
	EndBlock       int    `json:"end_block_index"`
	URL            string `json:"url"`
	Title          string `json:"title"`
	Source         string `json:"source"`
	SearchResult   int    `json:"search_result_index"`
	FileID         string `json:"file_id"`
}

// citation maps a wire citation to agcore's. Anthropic cites whole text
// blocks (it splits the answer at citation boundaries), so Start and End
// stay 0.
func (w *wireCitation) citation() llm.Citation {
	c := llm.Citation{Kind: llm.CitationDocument, CitedText: w.CitedText, Document: w.DocumentIndex, Title: w.DocumentTitle, FileID: w.FileID}
	switch w.Type {
	case "char_location":
		c.Unit, c.From, c.To = "char", w.StartCharIndex, w.EndCharIndex
	case "page_location":
		c.Unit, c.From, c.To = "page", w.StartPage, w.EndPage
	case "content_block_location":
		c.Unit, c.From, c.To = "block", w.StartBlock, w.EndBlock
	case "web_search_result_location":
		c = llm.Citation{Kind: llm.CitationURL, URL: w.URL, Title: w.Title, CitedText: w.CitedText}
	case "search_result_location":
		c = llm.Citation{Kind: llm.CitationURL, URL: w.Source, Title: w.Title, CitedText: w.CitedText,
			Document: w.SearchResult, Unit: "block", From: w.StartBlock, To: w.EndBlock}
	}
	return c
}

// citations maps a block's wire citations; nil when there are none.
func citations(ws []wireCitation) []llm.Citation {
	if len(ws) == 0 {
		return nil
	}
	out := make([]llm.Citation, len(ws))
	for i := range ws {
		out[i] = ws[i].citation()
	}
	return out
}

// wireEvent is any streamed event's data. Delta is a content delta in
// content_block_delta and the message delta in message_delta.
type wireEvent struct {
	Type         string          `json:"type"`
	Index        int             `json:"index"`
	Message      *wireResponse   `json:"message"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        wireDelta       `json:"delta"`
	Usage        *wireUsage      `json:"usage"`
	Error        *wireError      `json:"error"`
}

type wireDelta struct {
	Type        string          `json:"type"`
	Text        string          `json:"text"`
	Thinking    string          `json:"thinking"`
	PartialJSON string          `json:"partial_json"`
	Signature   string          `json:"signature"`
	Content     json.RawMessage `json:"content"` // compaction_delta
	StopReason  string          `json:"stop_reason"`
	Citation    *wireCitation   `json:"citation"` // citations_delta
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// wireErrorBody is an HTTP error body.
type wireErrorBody struct {
	Error     *wireError `json:"error"`
	RequestID string     `json:"request_id"`
}
