package sessiontest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agcore/agcore/llm"
)

// EveryBlockKind returns messages that together hold every content block
// kind (text, image with bytes and by URL, audio, file, tool_use, a
// tool_result block with nested content, thinking with a signature,
// redacted_thinking, extension) and tool-result messages, error and not.
// Every value is already in the form a store returns it in (JSON inputs
// compact, empty byte slices nil), so a store must give back a deeply equal
// copy. The tool uses and their results pair up, so the messages form a
// valid conversation.
func EveryBlockKind() []llm.Message {
	return []llm.Message{
		llm.SystemText("You are terse.\nAnswer in one line."),
		{Role: llm.RoleUser, Content: []llm.Block{
			llm.Text{Text: "What is in these? 你好 👋 <b>&amp;</b> \"quoted\" \\ \u2028"},
			llm.Image{Data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 255}, MediaType: "image/png", Detail: "high"},
			llm.Image{URL: "https://example.com/cat.jpg"},
			llm.Audio{Data: []byte("RIFF\x00\x00WAVEfmt "), MediaType: "audio/wav"},
			llm.Audio{URL: "https://example.com/a.mp3", MediaType: "audio/mpeg"},
			llm.File{Data: []byte("%PDF-1.7\n"), MediaType: "application/pdf", Name: "report.pdf"},
			llm.File{FileID: "file-abc123", Name: "notes.txt"},
			llm.File{URL: "https://example.com/doc.pdf", MediaType: "application/pdf"},
		}},
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Thinking{Text: "The user wants a description.", Signature: "EqQBCkYIARgCIkD+sig/=="},
			llm.RedactedThinking{Data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVy"},
			llm.Text{Text: "Let me look."},
			llm.ToolUse{ID: "call_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Beijing","days":[1,2],"nested":{"ok":true}}`)},
			llm.ToolUse{ID: "call_2", Name: "now", Input: json.RawMessage(`{}`)},
		}},
		{Role: llm.RoleTool, ToolCallID: "call_1", Content: []llm.Block{llm.Text{Text: "Sunny, 25°C"}}},
		{Role: llm.RoleTool, ToolCallID: "call_2", IsError: true, Content: []llm.Block{llm.Text{Text: "clock unavailable"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse{ID: "toolu_3", Name: "screenshot", Input: json.RawMessage(`{"full":false}`)},
		}},
		// Anthropic nests tool results in a user message; nested content
		// must survive too, images included.
		{Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResult{ToolUseID: "toolu_3", IsError: false, Content: []llm.Block{
				llm.Text{Text: "here it is"},
				llm.Image{Data: []byte{1, 2, 3}, MediaType: "image/png"},
			}},
			llm.ToolResult{ToolUseID: "toolu_4", IsError: true},
			llm.Extension{Kind: "citation", Data: json.RawMessage(`{"source":"doc.pdf","page":3}`)},
			llm.Extension{Kind: "marker"},
		}},
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Text{Text: strings.Repeat("long answer ", 20000)}, // ~240 KB in one block
		}},
		{Role: llm.RoleAssistant}, // no content at all
	}
}

// Conversation returns n messages (n a multiple of 4 makes whole exchanges)
// shaped like a real tool-using conversation: a user question, an assistant
// message with a tool call, the tool's result, and an assistant answer. tag
// makes the texts and tool-call ids unique.
func Conversation(tag string, n int) []llm.Message {
	msgs := make([]llm.Message, 0, n)
	for i := 0; len(msgs) < n; i++ {
		id := fmt.Sprintf("call_%s_%d", tag, i)
		exchange := []llm.Message{
			llm.UserText(fmt.Sprintf("[%s %d] What is the weather in city %d, and should I bring an umbrella tomorrow?", tag, i, i)),
			{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.Text{Text: "Let me check the forecast."},
				llm.ToolUse{ID: id, Name: "get_weather", Input: json.RawMessage(fmt.Sprintf(`{"city":"city-%d","days":2}`, i))},
			}},
			llm.ToolResultText(id, `{"today":"sunny, 25°C","tomorrow":"rain, 18°C, 80% chance"}`, false),
			llm.AssistantText(fmt.Sprintf("[%s %d] Today is sunny at 25°C; tomorrow brings rain (80%%), so yes, take an umbrella.", tag, i)),
		}
		for _, m := range exchange {
			if len(msgs) == n {
				break
			}
			msgs = append(msgs, m)
		}
	}
	return msgs
}
