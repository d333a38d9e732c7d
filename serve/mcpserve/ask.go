package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// AskUserName is the name of the tool [AskUser] returns.
const AskUserName = "ask_user"

// ErrNoClient is matched (errors.Is) by the error of an [AskUser] call or a
// [ClientModel] call made outside a turn that an MCP client asked for, or
// for a client that cannot answer (no elicitation or sampling
// capability).
var ErrNoClient = errors.New("mcpserve: no MCP client can answer")

// AskUser returns the ask_user tool: the agent asks the user of the MCP
// client that called it a question, optionally with a form (a flat JSON
// Schema object of strings, numbers, integers, booleans and enums, with
// defaults), through elicitation. The result the model reads is the
// user's action (accept, decline or cancel) and what they filled in. Out
// of an MCP call, or for a client without elicitation, the call fails with
// an error the model reads.
func AskUser() tool.Tool { return askUser{} }

type askUser struct{}

func (askUser) Name() string { return AskUserName }

func (askUser) Description() string {
	return "Ask the user a question and wait for the answer. Give the question as message; for a structured answer give schema, a JSON Schema object whose properties are strings, numbers, integers, booleans or enums (with titles, descriptions and defaults). The result says whether the user accepted, declined or cancelled, and what they filled in."
}

func (askUser) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"the question, in plain language"},"schema":{"type":"object","description":"the form: a JSON Schema object of flat fields; omit for a free-text answer"}},"required":["message"]}`)
}

type askUserArgs struct {
	Message string          `json:"message"`
	Schema  json.RawMessage `json:"schema,omitempty"`
}

// freeText is the form of a question without one: one text field.
var freeText = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"string","description":"your answer"}},"required":["answer"]}`)

func (askUser) Invoke(ctx context.Context, args json.RawMessage) (string, error) {
	var in askUserArgs
	if err := json.Unmarshal(args, &in); err != nil {
		return "", fmt.Errorf("ask_user: %w", err)
	}
	if strings.TrimSpace(in.Message) == "" {
		return "", errors.New("ask_user: message is empty")
	}
	t := turnFrom(ctx)
	if t == nil || t.caps.Elicitation == nil {
		return "", fmt.Errorf("ask_user: %w (the client cannot ask its user: no elicitation)", ErrNoClient)
	}
	schema := in.Schema
	if len(schema) == 0 || string(schema) == "null" {
		schema = freeText
	}
	res, err := t.ask(ctx, "ask_user", &sdk.ElicitParams{Message: in.Message, RequestedSchema: schema})
	if err != nil {
		return "", fmt.Errorf("ask_user: %w", err)
	}
	r, ok := res.(*sdk.ElicitResult)
	if !ok {
		return "", fmt.Errorf("ask_user: the client answered with %T, not an elicitation result", res)
	}
	content, _ := json.Marshal(r.Content)
	if r.Content == nil {
		content = []byte("{}")
	}
	return fmt.Sprintf("User response: action=%s, content=%s", r.Action, content), nil
}

// ClientModel is an llm.Model answered by the MCP client that called the
// turn: each call is a sampling/createMessage request to it (a sampling
// input request for a multi round-trip client), so an agent served over
// MCP can think with its caller's model. It carries text: system messages
// become the system prompt, tool calls and results are written as text,
// and tools are not offered (give such an agent none). Out of an MCP call,
// or for a client without the sampling capability, a call fails with
// [ErrNoClient].
type ClientModel struct {
	// MaxTokens caps an answer when the request does not; 0 means 1024.
	MaxTokens int
}

// Info implements llm.Model: the model is whatever the client runs.
func (ClientModel) Info() llm.ModelInfo {
	return llm.ModelInfo{Provider: "mcp-client", Name: "mcp-client"}
}

// Stream implements llm.Model: the client's whole answer as one stream.
func (m ClientModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range llm.StreamOf(resp) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Generate implements llm.Model.
func (m ClientModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	t := turnFrom(ctx)
	if t == nil || t.caps.Sampling == nil {
		return nil, &llm.Error{Kind: llm.KindInvalidRequest, Provider: "mcp-client", Message: "the MCP client cannot answer model calls (no sampling capability)", Err: ErrNoClient}
	}
	params := samplingParams(req, m.MaxTokens)
	res, err := t.ask(ctx, "sample", params)
	if err != nil {
		return nil, &llm.Error{Kind: llm.KindUnknown, Provider: "mcp-client", Message: "sampling/createMessage: " + err.Error(), Err: err}
	}
	var text []string
	model, stop := "", ""
	switch r := res.(type) {
	case *sdk.CreateMessageResult:
		model, stop = r.Model, r.StopReason
		text = appendText(text, r.Content)
	case *sdk.CreateMessageWithToolsResult:
		model, stop = r.Model, r.StopReason
		for _, c := range r.Content {
			text = appendText(text, c)
		}
	default:
		return nil, &llm.Error{Kind: llm.KindServer, Provider: "mcp-client", Message: fmt.Sprintf("the client answered sampling with %T", res)}
	}
	finish := llm.FinishStop
	if stop == "maxTokens" {
		finish = llm.FinishLength
	}
	return &llm.Response{Model: model, FinishReason: finish, Message: llm.AssistantText(strings.Join(text, "\n"))}, nil
}

func appendText(out []string, c sdk.Content) []string {
	if tc, ok := c.(*sdk.TextContent); ok {
		out = append(out, tc.Text)
	}
	return out
}

// samplingParams writes a request as a sampling request: text only.
func samplingParams(req *llm.Request, maxTokens int) *sdk.CreateMessageParams {
	p := &sdk.CreateMessageParams{MaxTokens: int64(req.MaxTokens), Temperature: 0}
	if p.MaxTokens == 0 {
		p.MaxTokens = int64(maxTokens)
	}
	if p.MaxTokens == 0 {
		p.MaxTokens = 1024
	}
	if req.Temperature != nil {
		p.Temperature = *req.Temperature
	}
	p.StopSequences = req.StopSequences
	var system []string
	for _, msg := range req.Messages {
		var role sdk.Role = "user"
		var parts []string
		switch msg.Role {
		case llm.RoleSystem:
			system = append(system, msg.Text())
			continue
		case llm.RoleAssistant:
			role = "assistant"
		}
		for _, b := range msg.Content {
			switch b := b.(type) {
			case llm.Text:
				parts = append(parts, b.Text)
			case llm.ToolUse:
				parts = append(parts, fmt.Sprintf("[called %s %s]", b.Name, b.InputOrEmpty()))
			}
		}
		if msg.Role == llm.RoleTool {
			parts = []string{"[tool result] " + strings.Join(parts, "\n")}
		}
		if len(parts) == 0 {
			continue
		}
		p.Messages = append(p.Messages, &sdk.SamplingMessage{Role: role, Content: &sdk.TextContent{Text: strings.Join(parts, "\n")}})
	}
	p.SystemPrompt = strings.Join(system, "\n\n")
	return p
}
