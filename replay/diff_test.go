package replay_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/replay"
)

// base is a recorded request: instructions, a tool round, a question.
func base() *llm.Request {
	temp := 0.2
	return &llm.Request{
		Messages: []llm.Message{
			llm.SystemText("Be brief."),
			llm.UserText("find x"),
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text{Text: "looking"}, llm.ToolUse{ID: "call_1", Name: "grep", Input: json.RawMessage(`{"q":"x"}`)}}},
			llm.ToolResultText("call_1", "x.go:1", false),
			llm.AssistantText("in x.go"),
			llm.UserText("thanks"),
		},
		Tools: []llm.ToolDefinition{
			{Name: "grep", Description: "Search.", Parameters: json.RawMessage(`{"type":"object"}`)},
			{Name: "read", Description: "Read.", Parameters: json.RawMessage(`{"type":"object"}`)},
		},
		MaxTokens:   1000,
		Temperature: &temp,
	}
}

// TestDiffCategories changes one thing at a time and checks that Diff
// finds exactly that difference, named by its kind and place.
func TestDiffCategories(t *testing.T) {
	summary := llm.UserText("[Summary of the earlier conversation: 2 messages were replaced to save context.]\n\nThe user asked for x.")
	cases := []struct {
		name   string
		change func(r *llm.Request)
		want   replay.Difference
		reads  string // in its String
	}{
		{"system prompt", func(r *llm.Request) { r.Messages[0] = llm.SystemText("Be verbose.") },
			replay.Difference{Kind: replay.SystemChanged, Message: 0, Block: -1}, `system prompt changed: "Be brief." → "Be verbose."`},
		{"system prompt removed", func(r *llm.Request) { r.Messages = r.Messages[1:] },
			replay.Difference{Kind: replay.SystemChanged, Message: 0, Block: -1}, `system prompt changed: "Be brief." → (none)`},
		{"message text", func(r *llm.Request) { r.Messages[4] = llm.AssistantText("in y.go") },
			replay.Difference{Kind: replay.MessageChanged, Message: 4, Block: 0}, `message 4, block 0 differs: text "in x.go" → text "in y.go"`},
		{"block kind", func(r *llm.Request) {
			r.Messages[2] = llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Thinking{Text: "looking"}, r.Messages[2].Content[1]}}
		}, replay.Difference{Kind: replay.MessageChanged, Message: 2, Block: 0}, `message 2, block 0 differs: text "looking" → thinking "looking"`},
		{"role", func(r *llm.Request) { r.Messages[5] = llm.AssistantText("thanks") },
			replay.Difference{Kind: replay.MessageChanged, Message: 5, Block: -1}, `message 5 differs: user [text] → assistant [text]`},
		{"message added", func(r *llm.Request) { r.Messages = append(r.Messages, llm.UserText("more")) },
			replay.Difference{Kind: replay.MessageAdded, Message: 6, Block: -1}, `message 6 added`},
		{"message removed", func(r *llm.Request) { r.Messages = r.Messages[:5] },
			replay.Difference{Kind: replay.MessageRemoved, Message: 5, Block: -1}, `message 5 removed`},
		{"tool result", func(r *llm.Request) { r.Messages[3] = llm.ToolResultText("call_1", "y.go:2", false) },
			replay.Difference{Kind: replay.ToolResultChanged, Message: 3, Block: -1, ToolCallID: "call_1", Tool: "grep"}, `message 3: tool result of call call_1 (grep) differs: "x.go:1" → "y.go:2"`},
		{"tool added", func(r *llm.Request) {
			r.Tools = append(r.Tools, llm.ToolDefinition{Name: "write", Parameters: json.RawMessage(`{}`)})
		}, replay.Difference{Kind: replay.ToolAdded, Message: -1, Block: -1, Tool: "write"}, `tool write added to the definitions`},
		{"tool removed", func(r *llm.Request) { r.Tools = r.Tools[:1] },
			replay.Difference{Kind: replay.ToolRemoved, Message: -1, Block: -1, Tool: "read"}, `tool read removed from the definitions`},
		{"tool description", func(r *llm.Request) { r.Tools[0].Description = "Search files." },
			replay.Difference{Kind: replay.ToolChanged, Message: -1, Block: -1, Tool: "grep"}, `tool grep changed in the definitions: description "Search." → description "Search files."`},
		{"tool parameters", func(r *llm.Request) { r.Tools[1].Parameters = json.RawMessage(`{"type":"object","required":["path"]}`) },
			replay.Difference{Kind: replay.ToolChanged, Message: -1, Block: -1, Tool: "read"}, `tool read changed in the definitions: parameters`},
		{"tools reordered", func(r *llm.Request) { r.Tools[0], r.Tools[1] = r.Tools[1], r.Tools[0] },
			replay.Difference{Kind: replay.ToolsReordered, Message: -1, Block: -1}, `tool definitions reordered: grep, read → read, grep`},
		{"compaction cut moved (summary)", func(r *llm.Request) {
			r.Messages = append([]llm.Message{r.Messages[0], summary}, r.Messages[3:]...)
		}, replay.Difference{Kind: replay.CompactionMoved, Message: 1, Block: -1}, `compaction cut moved: 2 messages before the last 3 messages → 1 message before the last 3 messages`},
		{"compaction cut moved (dropped)", func(r *llm.Request) {
			r.Messages = append([]llm.Message{r.Messages[0]}, r.Messages[4:]...)
		}, replay.Difference{Kind: replay.CompactionMoved, Message: 1, Block: -1}, `compaction cut moved`},
		{"model", func(r *llm.Request) { r.Model = "gpt-5" },
			replay.Difference{Kind: replay.ParameterChanged, Message: -1, Block: -1, Parameter: "model"}, `parameter model changed: (none) → gpt-5`},
		{"max tokens", func(r *llm.Request) { r.MaxTokens = 2000 },
			replay.Difference{Kind: replay.ParameterChanged, Message: -1, Block: -1, Parameter: "max_tokens"}, `parameter max_tokens changed: 1000 → 2000`},
		{"temperature", func(r *llm.Request) { v := 0.7; r.Temperature = &v },
			replay.Difference{Kind: replay.ParameterChanged, Message: -1, Block: -1, Parameter: "temperature"}, `parameter temperature changed: 0.2 → 0.7`},
		{"response format", func(r *llm.Request) {
			r.ResponseFormat = &llm.ResponseFormat{Type: "json_schema", Name: "out", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}
		}, replay.Difference{Kind: replay.ParameterChanged, Message: -1, Block: -1, Parameter: "response_format"}, `parameter response_format changed: (none) → {"type":"json_schema"`},
		{"tool choice", func(r *llm.Request) { r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "grep"} },
			replay.Difference{Kind: replay.ParameterChanged, Message: -1, Block: -1, Parameter: "tool_choice"}, `parameter tool_choice changed: (none) → tool grep`},
		{"reasoning", func(r *llm.Request) { r.Reasoning = &llm.Reasoning{Effort: "high"} },
			replay.Difference{Kind: replay.ParameterChanged, Message: -1, Block: -1, Parameter: "reasoning"}, `parameter reasoning changed`},
		{"extra", func(r *llm.Request) { r.Extra = map[string]any{"seed": 1} },
			replay.Difference{Kind: replay.ParameterChanged, Message: -1, Block: -1, Parameter: "extra"}, `parameter extra changed: (none) → {"seed":1}`},
		{"thought signature", func(r *llm.Request) {
			u := r.Messages[2].Content[1].(llm.ToolUse)
			u.Signature, u.Provider = "CiQB0e2K", "gemini"
			r.Messages[2] = llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{r.Messages[2].Content[0], u}}
		}, replay.Difference{Kind: replay.MessageChanged, Message: 2, Block: 1}, `message 2, block 1 differs: tool_use grep "{\"q\":\"x\"}" → tool_use grep "{\"q\":\"x\"}" (signature 8 bytes`},
	}
	if d := replay.Diff(base(), base()); d != nil {
		t.Fatalf("equal requests differ: %v", d)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := base()
			tc.change(r)
			got := replay.Diff(base(), r)
			if len(got) != 1 {
				t.Fatalf("%d differences, want 1: %v", len(got), got)
			}
			g := got[0]
			g.Recorded, g.Replayed = "", ""
			if g != tc.want {
				t.Errorf("difference %+v, want %+v", g, tc.want)
			}
			if s := got[0].String(); !strings.Contains(s, tc.reads) {
				t.Errorf("reads %q, want it to contain %q", s, tc.reads)
			}
		})
	}
}
