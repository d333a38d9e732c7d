package compact

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agcore/agcore/llm"
)

// Limits on how much of each part of the conversation the summarizer sees.
const (
	maxRenderText   = 4000 // bytes of a user or assistant message
	maxRenderArgs   = 500  // bytes of a tool call's arguments
	maxRenderResult = 1500 // bytes of a tool result
)

// renderTranscript writes msgs as plain text for the summarizer, at most
// limit bytes: when longer, the oldest lines are left out (they are the
// least likely to matter, and a previous summary covers what came before).
func renderTranscript(msgs []llm.Message, names map[string]string, limit int) string {
	var lines []string
	for i := range msgs {
		lines = append(lines, renderMessage(&msgs[i], names)...)
	}
	size := 0
	start := len(lines)
	for start > 0 && size+len(lines[start-1])+1 <= limit {
		start--
		size += len(lines[start]) + 1
	}
	var sb strings.Builder
	if start > 0 {
		fmt.Fprintf(&sb, "(%d earlier entries left out)\n", start)
	}
	for _, l := range lines[start:] {
		sb.WriteString(l)
		sb.WriteByte('\n')
	}
	return sb.String()
}

func renderMessage(m *llm.Message, names map[string]string) []string {
	var out []string
	switch m.Role {
	case llm.RoleTool:
		status := "result"
		if m.IsError {
			status = "error"
		}
		out = append(out, fmt.Sprintf("TOOL %s %s: %s", names[m.ToolCallID], status, clip(renderBlocks(m.Content), maxRenderResult)))
		return out
	case llm.RoleSystem:
		return []string{"SYSTEM: " + clip(renderBlocks(m.Content), maxRenderText)}
	}
	who := "USER"
	if m.Role == llm.RoleAssistant {
		who = "ASSISTANT"
	}
	var text []llm.Block
	for _, b := range m.Content {
		switch b := b.(type) {
		case llm.ToolUse:
			out = append(out, fmt.Sprintf("ASSISTANT calls %s(%s)", b.Name, clip(string(b.InputOrEmpty()), maxRenderArgs)))
		case llm.ToolResult:
			status := "result"
			if b.IsError {
				status = "error"
			}
			out = append(out, fmt.Sprintf("TOOL %s %s: %s", names[b.ToolUseID], status, clip(renderBlocks(b.Content), maxRenderResult)))
		case llm.Thinking, llm.RedactedThinking:
			// Reasoning is not part of what was said.
		default:
			text = append(text, b)
		}
	}
	if t := renderBlocks(text); t != "" {
		out = append([]string{who + ": " + clip(t, maxRenderText)}, out...)
	}
	return out
}

// renderBlocks renders content as text, exhaustive over block kinds.
func renderBlocks(bs []llm.Block) string {
	var parts []string
	for _, b := range bs {
		switch b := b.(type) {
		case llm.Text:
			parts = append(parts, b.Text)
		case llm.Thinking, llm.RedactedThinking:
		case llm.ToolUse:
			parts = append(parts, fmt.Sprintf("[call %s]", b.Name))
		case llm.ToolResult:
			parts = append(parts, renderBlocks(b.Content))
		case llm.Image:
			parts = append(parts, "[image]")
		case llm.Audio:
			parts = append(parts, "[audio]")
		case llm.File:
			parts = append(parts, fmt.Sprintf("[file %s]", b.Name))
		case llm.Extension:
			parts = append(parts, fmt.Sprintf("[%s]", b.Kind))
		}
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

// clip shortens s to at most n bytes on a rune boundary, noting the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s … [%d more bytes]", s[:cut], len(s)-cut)
}

// filesTouched returns the file paths named in the arguments of m's tool
// calls: string values (or lists of strings) of keys such as "path",
// "file", "filename", "file_path" or "dir".
func filesTouched(m *llm.Message) []string {
	if m.Role != llm.RoleAssistant {
		return nil
	}
	var out []string
	for _, b := range m.Content {
		u, ok := b.(llm.ToolUse)
		if !ok {
			continue
		}
		var args map[string]any
		if json.Unmarshal(u.InputOrEmpty(), &args) != nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(args)) {
			if !isPathKey(k) {
				continue
			}
			switch v := args[k].(type) {
			case string:
				out = appendPath(out, v)
			case []any:
				for _, e := range v {
					if s, ok := e.(string); ok {
						out = appendPath(out, s)
					}
				}
			}
		}
	}
	return out
}

func isPathKey(k string) bool {
	k = strings.ToLower(k)
	return strings.Contains(k, "path") || strings.Contains(k, "file") || k == "dir" || k == "directory"
}

func appendPath(out []string, p string) []string {
	p = strings.TrimSpace(p)
	if p == "" || len(p) > 300 || strings.ContainsAny(p, "\n\r") {
		return out
	}
	return append(out, p)
}
