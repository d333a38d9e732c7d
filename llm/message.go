package llm

import "strings"

// Role says who a message is from.
type Role string

// The four roles. RoleTool is a tool's result answering one [ToolUse]; its
// storage tag is "tool_result".
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool_result"
)

// Message is one message of a conversation: a role and an ordered list of
// content blocks. A tool-result message (Role == RoleTool) also names the
// ToolUse it answers by ToolCallID and says whether it is an error.
type Message struct {
	Role       Role
	Content    []Block
	ToolCallID string // RoleTool only: the ToolUse.ID this result answers
	IsError    bool   // RoleTool only
}

// SystemText returns a system message holding text.
func SystemText(text string) Message {
	return Message{Role: RoleSystem, Content: []Block{Text{Text: text}}}
}

// UserText returns a user message holding text.
func UserText(text string) Message {
	return Message{Role: RoleUser, Content: []Block{Text{Text: text}}}
}

// AssistantText returns an assistant message holding text.
func AssistantText(text string) Message {
	return Message{Role: RoleAssistant, Content: []Block{Text{Text: text}}}
}

// ToolResultText returns the result of the tool call toolCallID as text.
func ToolResultText(toolCallID, text string, isError bool) Message {
	return Message{Role: RoleTool, ToolCallID: toolCallID, IsError: isError, Content: []Block{Text{Text: text}}}
}

// Text returns the concatenation of the message's text blocks (not thinking).
func (m Message) Text() string {
	var n, count int
	var only string
	for _, b := range m.Content {
		if t, ok := b.(Text); ok {
			n += len(t.Text)
			count++
			only = t.Text
		}
	}
	if count <= 1 {
		return only
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, b := range m.Content {
		if t, ok := b.(Text); ok {
			sb.WriteString(t.Text)
		}
	}
	return sb.String()
}

// ToolUses returns the message's tool calls in order.
func (m Message) ToolUses() []ToolUse {
	var out []ToolUse
	for _, b := range m.Content {
		if t, ok := b.(ToolUse); ok {
			out = append(out, t)
		}
	}
	return out
}

// HasToolUse reports whether the message holds at least one tool call.
func (m Message) HasToolUse() bool {
	for _, b := range m.Content {
		if _, ok := b.(ToolUse); ok {
			return true
		}
	}
	return false
}

// Clone returns a copy of m whose Content slice can be changed without
// affecting m. Blocks are values; their byte slices are shared.
func (m Message) Clone() Message {
	if m.Content != nil {
		m.Content = append([]Block(nil), m.Content...)
	}
	return m
}
