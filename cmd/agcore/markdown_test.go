package main_test

import (
	"strings"
	"testing"
)

const markdownAnswer = "# Heading\n\nSome **bold** words and `code`.\n\n```go\nfunc main() { println(\"hi\") }\n```\n\n- one\n- two\n"

// Answers are rendered as Markdown on a terminal, code highlighted; --raw
// and a pipe get the text as the model wrote it.
func TestMarkdownIsRenderedOnATerminalOnly(t *testing.T) {
	skipWithoutPTY(t)
	t.Parallel()
	t.Run("terminal", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, openaiReply(turn{text: markdownAnswer}))
		c := newCLI(t).openai(srv, "sk-test")
		tm := c.startTerminal("run", "--tools", "", "Show me")
		tm.expect("session ")
		if code := tm.wait(); code != 0 {
			t.Fatalf("exit %d", code)
		}
		screen := tm.screen()
		for _, want := range []string{"Heading", "bold", "func main()", "one", "two"} {
			if !strings.Contains(screen, want) {
				t.Errorf("the screen lacks %q:\n%s", want, screen)
			}
		}
		for _, raw := range []string{"# Heading", "**bold**", "```"} {
			if strings.Contains(screen, raw) {
				t.Errorf("the screen shows the Markdown source %q:\n%s", raw, screen)
			}
		}
		tm.mu.Lock()
		styled := strings.Contains(tm.out.String(), "\x1b[") && !strings.Contains(tm.out.String(), "func main() {")
		tm.mu.Unlock()
		if !styled {
			t.Error("the code block is not highlighted (its tokens are not coloured apart)")
		}
	})
	t.Run("--raw", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, openaiReply(turn{text: markdownAnswer}))
		c := newCLI(t).openai(srv, "sk-test")
		tm := c.startTerminal("run", "--raw", "--tools", "", "Show me")
		tm.expect("session ")
		tm.wait()
		if screen := tm.screen(); !strings.Contains(screen, "**bold**") || !strings.Contains(screen, "# Heading") {
			t.Errorf("--raw rendered the answer:\n%s", screen)
		}
	})
	t.Run("pipe", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, openaiReply(turn{text: markdownAnswer}))
		c := newCLI(t).openai(srv, "sk-test")
		if r := c.ok("run", "--tools", "", "Show me"); r.stdout != markdownAnswer {
			t.Errorf("piped stdout = %q, want the answer as written", r.stdout)
		}
	})
}
