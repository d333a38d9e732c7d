package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/internal/jsonw"
	"github.com/agcore/agcore/llm"
)

// chatRequest is the part of a Chat Completions request the server reads;
// other fields are ignored.
type chatRequest struct {
	Model         string        `json:"model"`
	Messages      []chatMessage `json:"messages"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Temperature         *float64        `json:"temperature"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	N                   *int            `json:"n"`
	Tools               []chatTool      `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ResponseFormat      *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict bool            `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type contentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

// chatUsage is the usage object of Chat Completions.
type chatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func chatUsageOf(u llm.Usage) *chatUsage {
	c := &chatUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	c.PromptTokensDetails.CachedTokens = u.CachedInputTokens
	c.CompletionTokensDetails.ReasoningTokens = u.ReasoningTokens
	return c
}

type chatDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          *string        `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        chatDelta `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type chatChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *chatUsage    `json:"usage,omitempty"`
}

type chatOutMessage struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	Refusal          *string        `json:"refusal"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []chatToolCall `json:"tool_calls,omitempty"`
}

type chatChoice struct {
	Index        int            `json:"index"`
	Message      chatOutMessage `json:"message"`
	Logprobs     *struct{}      `json:"logprobs"`
	FinishReason string         `json:"finish_reason"`
}

type chatCompletion struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   *chatUsage   `json:"usage"`
}

// chat serves POST /v1/chat/completions: a stateless turn whose history
// is the request's messages.
func (h *Handler) chat(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, decodeError(err))
		return
	}
	a, apiErr := h.agent(req.Model)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	if req.N != nil && *req.N != 1 {
		writeError(w, invalid("n", "only n=1 is supported"))
		return
	}
	msgs, instr, apiErr := chatMessages(req.Messages)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	opts := &agent.RunOptions{Instructions: instr, Temperature: req.Temperature, MaxTokens: req.MaxCompletionTokens}
	if opts.MaxTokens == 0 {
		opts.MaxTokens = req.MaxTokens
	}
	if opts.Declared, apiErr = chatTools(req.Tools); apiErr != nil {
		writeError(w, apiErr)
		return
	}
	if opts.ToolChoice, apiErr = toolChoice(req.ToolChoice); apiErr != nil {
		writeError(w, apiErr)
		return
	}
	if rf := req.ResponseFormat; rf != nil && rf.Type != "" {
		opts.ResponseFormat = &llm.ResponseFormat{Type: rf.Type}
		if rf.JSONSchema != nil {
			opts.ResponseFormat.Name, opts.ResponseFormat.Schema, opts.ResponseFormat.Strict = rf.JSONSchema.Name, rf.JSONSchema.Schema, rf.JSONSchema.Strict
		}
	}
	ctx, end, ok := h.beginTurn(w, r)
	if !ok {
		writeError(w, draining())
		return
	}
	defer end()
	id := newID("chatcmpl-")
	c := &chatSink{id: id, model: a.Name, created: h.now().Unix(), stream: req.Stream}
	if req.Stream {
		c.sse = newSSE(w, h.flushEvery)
		defer c.sse.close()
	}
	resp, err := runTurn(ctx, a, msgs, opts, id, c)
	if err != nil {
		e := turnError(ctx, err)
		if r.Context().Err() == nil {
			h.log.LogAttrs(ctx, 8, "turn failed", attrs(a.Name, id, err)...)
		}
		if c.sse != nil && c.sse.isStarted() {
			_ = c.sse.send("", struct {
				Error errorBody `json:"error"`
			}{e.body()})
			return
		}
		writeError(w, e)
		return
	}
	finish := chatFinish(resp.FinishReason, len(c.calls) > 0)
	usage := chatUsageOf(resp.Usage)
	if !req.Stream {
		text := c.out.String()
		out := chatOutMessage{Role: "assistant", Content: &text, ReasoningContent: c.reasoning.String(), ToolCalls: c.calls}
		writeJSON(w, http.StatusOK, chatCompletion{ID: id, Object: "chat.completion", Created: c.created, Model: a.Name,
			Choices: []chatChoice{{Message: out, FinishReason: finish}}, Usage: usage})
		return
	}
	if !c.sentRole {
		if c.send(chatDelta{Role: "assistant", Content: new(string)}, nil) != nil {
			return
		}
	}
	if c.send(chatDelta{}, &finish) != nil {
		return
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		if c.sse.send("", chatChunk{ID: id, Object: "chat.completion.chunk", Created: c.created, Model: a.Name, Choices: []chunkChoice{}, Usage: usage}) != nil {
			return
		}
	}
	_ = c.sse.final("[DONE]")
}

// chatFinish maps a finish reason to Chat Completions'.
func chatFinish(f llm.FinishReason, clientCalls bool) string {
	switch {
	case clientCalls:
		return "tool_calls"
	case f == llm.FinishLength:
		return "length"
	case f == llm.FinishContentFilter || f == llm.FinishRefusal:
		return "content_filter"
	}
	return "stop"
}

// chatSink shows a turn as chunks (stream) or collects it.
type chatSink struct {
	id, model string
	created   int64
	stream    bool
	sse       *sse
	sentRole  bool
	afterTool bool // a tool ran since the last text: a new step's text starts a paragraph
	out       strings.Builder
	reasoning strings.Builder
	calls     []chatToolCall // the client's declared tools the model called
	enc       []byte         // the hot path's encoding buffer
}

func (c *chatSink) send(d chatDelta, finish *string) error {
	if !c.sentRole {
		d.Role, c.sentRole = "assistant", true
	}
	return c.sse.send("", chatChunk{ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.model,
		Choices: []chunkChoice{{Delta: d, FinishReason: finish}}})
}

func (c *chatSink) text(delta string) error {
	if c.afterTool && c.out.Len() > 0 {
		// A new step's text starts a paragraph.
		switch text := c.out.String(); {
		case strings.HasSuffix(text, "\n\n"):
		case strings.HasSuffix(text, "\n"):
			delta = "\n" + delta
		default:
			delta = "\n\n" + delta
		}
	}
	c.afterTool = false
	c.out.WriteString(delta)
	if !c.stream {
		return nil
	}
	if !c.sentRole {
		return c.send(chatDelta{Content: &delta}, nil)
	}
	// The hot path: a text delta, encoded by hand (the bytes encoding/json
	// writes for the chunk with SetEscapeHTML(false), agcore's one JSON
	// string encoding, internal/jsonw; TestTextChunkEncoding checks).
	c.enc = appendTextChunk(c.enc[:0], c.id, c.model, c.created, delta)
	return c.sse.write("", c.enc)
}

// appendTextChunk appends the JSON of a chunk whose delta is text.
func appendTextChunk(b []byte, id, model string, created int64, text string) []byte {
	b = append(b, `{"id":`...)
	b = jsonw.AppendString(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = jsonw.AppendString(b, model)
	b = append(b, `,"choices":[{"index":0,"delta":{"content":`...)
	b = jsonw.AppendString(b, text)
	return append(b, `},"logprobs":null,"finish_reason":null}]}`...)
}

func (c *chatSink) thinking(delta string) error {
	c.reasoning.WriteString(delta)
	if !c.stream {
		return nil
	}
	return c.send(chatDelta{ReasoningContent: delta}, nil)
}

// toolCall shows only the client's own tools' calls: a call the server
// runs is not the client's to run.
func (c *chatSink) toolCall(call llm.ToolUse, declared bool) error {
	if !declared {
		c.afterTool = true
		return nil
	}
	i := len(c.calls)
	tc := chatToolCall{Index: &i, ID: call.ID, Type: "function"}
	tc.Function.Name, tc.Function.Arguments = call.Name, string(call.InputOrEmpty())
	c.calls = append(c.calls, tc)
	if !c.stream {
		c.calls[i].Index = nil
		return nil
	}
	return c.send(chatDelta{ToolCalls: []chatToolCall{tc}}, nil)
}

func (c *chatSink) toolResult(*llm.Message) error { c.afterTool = true; return nil }

// chatMessages converts the request's messages: system and developer
// messages become the run's instructions, the rest the history.
func chatMessages(in []chatMessage) ([]llm.Message, string, *apiError) {
	if len(in) == 0 {
		return nil, "", invalid("messages", "messages must hold at least one message")
	}
	var instr []string
	out := make([]llm.Message, 0, len(in))
	for i, m := range in {
		blocks, err := contentBlocks(m.Content)
		if err != nil {
			return nil, "", invalid("messages["+itoa(i)+"].content", "%v", err)
		}
		switch m.Role {
		case "system", "developer":
			instr = append(instr, llm.Message{Content: blocks}.Text())
		case "user":
			if len(blocks) == 0 {
				return nil, "", invalid("messages["+itoa(i)+"].content", "a user message needs content")
			}
			out = append(out, llm.Message{Role: llm.RoleUser, Content: blocks})
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant, Content: blocks}
			for j, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Function.Name == "" {
					return nil, "", invalid("messages["+itoa(i)+"].tool_calls["+itoa(j)+"]", "a tool call needs an id and a function name")
				}
				msg.Content = append(msg.Content, toolUse(tc.ID, tc.Function.Name, tc.Function.Arguments))
			}
			out = append(out, msg)
		case "tool":
			if m.ToolCallID == "" {
				return nil, "", invalid("messages["+itoa(i)+"].tool_call_id", "a tool message needs tool_call_id")
			}
			out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: m.ToolCallID, Content: blocks})
		default:
			return nil, "", invalid("messages["+itoa(i)+"].role", "unknown role %q", m.Role)
		}
	}
	return out, strings.Join(instr, "\n\n"), nil
}

// toolUse builds a call from its wire arguments (a JSON text).
func toolUse(id, name, args string) llm.ToolUse {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if !json.Valid([]byte(args)) {
		return llm.MalformedInput(id, name, args)
	}
	return llm.ToolUse{ID: id, Name: name, Input: json.RawMessage(args)}
}

// contentBlocks decodes a content that is null, a string or a list of
// parts (text, image_url).
func contentBlocks(raw json.RawMessage) ([]llm.Block, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []llm.Block{llm.Text{Text: s}}, nil
	}
	var parts []contentPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, errors.New("content must be a string or a list of parts")
	}
	blocks := make([]llm.Block, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case "text", "input_text", "output_text":
			blocks = append(blocks, llm.Text{Text: p.Text})
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return nil, errors.New("an image_url part needs a url")
			}
			blocks = append(blocks, llm.Image{URL: p.ImageURL.URL, Detail: p.ImageURL.Detail})
		default:
			return nil, errors.New("unsupported content part type " + p.Type)
		}
	}
	return blocks, nil
}

// chatTools declares the client's function tools.
func chatTools(in []chatTool) ([]llm.ToolDefinition, *apiError) {
	var out []llm.ToolDefinition
	for i, t := range in {
		if t.Type != "function" || t.Function.Name == "" {
			return nil, invalid("tools["+itoa(i)+"]", "only function tools with a name are supported")
		}
		out = append(out, llm.ToolDefinition{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return out, nil
}

// toolChoice decodes "auto", "none", "required" or a named function
// (either API's shape).
func toolChoice(raw json.RawMessage) (llm.ToolChoice, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return llm.ToolChoice{}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto":
			return llm.ToolChoice{Mode: llm.ToolChoiceAuto}, nil
		case "none":
			return llm.ToolChoice{Mode: llm.ToolChoiceNone}, nil
		case "required":
			return llm.ToolChoice{Mode: llm.ToolChoiceRequired}, nil
		}
		return llm.ToolChoice{}, invalid("tool_choice", "unknown tool_choice %q", s)
	}
	var obj struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil || obj.Type != "function" {
		return llm.ToolChoice{}, invalid("tool_choice", "tool_choice must be auto, none, required or a function")
	}
	name := obj.Function.Name
	if name == "" {
		name = obj.Name
	}
	return llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: name}, nil
}
