package main_test

import (
	"net/http"
	"strings"
	"testing"
)

// openaiGated streams parts as one answer's text, each after its gate
// (gates[i-1] holds part i; the first part goes at once).
func openaiGated(parts []string, gates []chan struct{}) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		s := newSSE(w)
		chunk := func(delta map[string]any, finish any) map[string]any {
			return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		}
		s.data(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		for i, part := range parts {
			if i > 0 {
				select {
				case <-gates[i-1]:
				case <-r.Context().Done():
					return
				}
			}
			for _, p := range pieces(part, 5) {
				s.data(chunk(map[string]any{"content": p}, nil))
			}
		}
		s.data(chunk(map[string]any{}, "stop"))
		s.data(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4o-mini", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10}})
		w.Write([]byte("data: [DONE]\n\n"))
	}
}

// On a terminal, a Markdown answer streams a line at a time: each line is
// rendered and shown once it is complete, while the model is still
// writing the rest of its paragraph, list or code block (a model that
// pauses after each part, as slow links and slow models do).
func TestMarkdownStreamsLineByLineOnATerminal(t *testing.T) {
	skipWithoutPTY(t)
	t.Parallel()
	gates := []chan struct{}{make(chan struct{}), make(chan struct{})}
	srv := newFake(t, openaiGated([]string{
		"# Plan\n\nThe **first** line of the paragraph.\n- item one\n",
		"- item two\nstill item two\n\n```go\nx := 1\n",
		"y := 2\n```\n\nDone.\n",
	}, gates))
	c := newCLI(t).openai(srv, "sk-test")
	tm := c.startTerminal("run", "--tools", "", "Plan it")
	// The paragraph and the list are not over, yet their complete lines
	// are on the screen, rendered.
	tm.expect("Plan")
	tm.expect("The first line of the paragraph.")
	tm.expect("• item one")
	close(gates[0])
	// The code block is open: its first line is shown, highlighted.
	tm.expect("• item two")
	tm.expect("still item two")
	tm.expect("x := 1")
	if screen := tm.screen(); strings.Contains(screen, "y := 2") || strings.Contains(screen, "Done.") {
		t.Fatalf("the terminal shows text the model has not sent:\n%s", screen)
	}
	close(gates[1])
	tm.expect("y := 2")
	tm.expect("Done.")
	if code := tm.wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, tm.screen())
	}
	for _, raw := range []string{"**first**", "# Plan", "```", "- item"} {
		if strings.Contains(tm.screen(), raw) {
			t.Errorf("the screen shows the Markdown source %q:\n%s", raw, tm.screen())
		}
	}
}
