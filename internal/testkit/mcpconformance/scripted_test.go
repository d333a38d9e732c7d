package mcpconformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// scriptedModel is an OpenAI Chat Completions server whose answers the
// test config's agents script in their system prompt, one directive line:
//
//	script: fail                 the request is refused (HTTP 400)
//	script: call NAME ARGS       the model calls the tool NAME with the JSON
//	                             ARGS ($INPUT: the user's text), then, once
//	                             its result is in the conversation, answers
//	                             with it
//
// Without a directive it answers one sentence about the user's text.
func scriptedModel(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	text := func(c any) string {
		switch c := c.(type) {
		case string:
			return c
		case []any: // content parts
			var b strings.Builder
			for _, p := range c {
				if m, ok := p.(map[string]any); ok {
					if s, ok := m["text"].(string); ok {
						b.WriteString(s)
					}
				}
			}
			return b.String()
		}
		return ""
	}
	var directive, input, result string
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			for _, line := range strings.Split(text(m.Content), "\n") {
				if d, ok := strings.CutPrefix(strings.TrimSpace(line), "script: "); ok {
					directive = d
				}
			}
		case "user":
			input = text(m.Content)
		case "tool":
			result = text(m.Content)
		}
	}
	if directive == "fail" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"this agent's model refuses every request (the test config scripts it so)","type":"invalid_request_error"}}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	call, isCall := strings.CutPrefix(directive, "call ")
	switch {
	case isCall && result == "":
		name, args, _ := strings.Cut(call, " ")
		quoted, _ := json.Marshal(input)
		args = strings.ReplaceAll(args, "$INPUT", strings.Trim(string(quoted), `"`))
		send(chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": name, "arguments": args}}}}, nil))
		send(chunk(map[string]any{}, "tool_calls"))
	case isCall:
		send(chunk(map[string]any{"role": "assistant", "content": result}, nil))
		send(chunk(map[string]any{}, "stop"))
	default:
		send(chunk(map[string]any{"role": "assistant", "content": fmt.Sprintf("You said: %s", input)}, nil))
		send(chunk(map[string]any{}, "stop"))
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}
