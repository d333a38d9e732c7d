package main_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func skipWithoutPTY(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no pseudo-terminal on Windows")
	}
}

// chat at a terminal: typing, a pasted text of three lines (one prompt), a
// """ block, a slash command answered locally, Ctrl-D.
func TestChatAtATerminal(t *testing.T) {
	skipWithoutPTY(t)
	t.Parallel()
	srv := newFake(t,
		openaiReply(turn{text: "Hello, Bo.", in: 10, out: 3}),
		openaiReply(turn{text: "Three lines read.", in: 20, out: 3}),
		openaiReply(turn{text: "Block read.", in: 30, out: 3}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	tm := c.startTerminal("chat", "--raw", "--tools", "", "--session", "bo")
	tm.expect("/help for commands")
	tm.expect("> ")

	tm.send("I am Bo.\r")
	tm.expect("Hello, Bo.")
	tm.expect("> ")

	tm.paste("line one\nline two\nline three\n")
	tm.send("\r")
	tm.expect("Three lines read.")
	tm.expect("> ")

	tm.send(`"""` + "\r" + "first\r" + "second\r" + `"""` + "\r")
	tm.expect("Block read.")
	tm.expect("> ")

	tm.send("/foo\r")
	tm.expect("unknown command /foo: /help lists the commands")
	tm.expect("> ")
	tm.send("\x04") // Ctrl-D
	tm.expect("session bo (continue: agcore chat --session bo)")
	if code := tm.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}

	reqs := srv.got()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls, want 3 (the paste and the block are one prompt each, /foo none)", len(reqs))
	}
	for i, want := range []string{"I am Bo.", "line one\nline two\nline three", "first\nsecond"} {
		if got := userText(t, srv, i); got != want {
			t.Errorf("prompt %d = %q, want %q", i+1, got, want)
		}
	}
	if strings.Contains(srv.messages(2), "/foo") {
		t.Error("/foo reached the model")
	}
}

// Ctrl-C while the answer streams cancels the turn with one quiet line (no
// error); the prompt comes back; nothing was stored, and the goodbye says
// so.
func TestChatCtrlCMidStream(t *testing.T) {
	skipWithoutPTY(t)
	t.Parallel()
	srv := newFake(t, openaiReply(turn{text: "This answer never ends", hang: true}))
	c := newCLI(t).openai(srv, "sk-test")
	tm := c.startTerminal("chat", "--raw", "--tools", "")
	tm.expect("> ")
	tm.send("Tell me everything\r")
	tm.expect("This ")
	tm.send("\x03") // Ctrl-C: the terminal sends SIGINT
	tm.expect("cancelled; nothing was stored")
	tm.expect("> ")
	tm.send("\x03") // at an empty prompt: a hint
	tm.expect("(Ctrl-C again or Ctrl-D to exit)")
	// The line editor prints its prompt once it has the terminal in raw
	// mode; a key sent before that is a SIGINT of the terminal between
	// two prompts, which quits the command without the hint's second
	// Ctrl-C (a person sees the prompt before pressing it).
	tm.expect("> ")
	tm.send("\x03") // a second one exits
	tm.expect("nothing was stored")
	if code := tm.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
	screen := tm.screen()
	for _, bad := range []string{"error", "continue: agcore chat", "Ctrl-C again to quit"} {
		if strings.Contains(screen, bad) {
			t.Errorf("the terminal shows %q:\n%s", bad, screen)
		}
	}
	if list := c.ok("sessions", "list", "--json"); !strings.Contains(list.stdout, `"sessions":[]`) {
		t.Errorf("the cancelled turn was stored: %s", list.stdout)
	}
}

// Piped chat keeps a prompt a line, joins """ blocks, and answers unknown
// slash commands without the model.
func TestChatFromAPipeJoinsBlocks(t *testing.T) {
	t.Parallel()
	srv := newFake(t, openaiReply(turn{text: "One."}), openaiReply(turn{text: "Two."}))
	c := newCLI(t).openai(srv, "sk-test")
	r := c.run("Hi\n/nope\n\"\"\"\na\nb\n\"\"\"\n", "chat", "--store", "memory:", "--tools", "")
	if r.code != 0 || r.stdout != "One.\nTwo.\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if got := userText(t, srv, 1); got != "a\nb" {
		t.Errorf("the block was sent as %q", got)
	}
	if !strings.Contains(r.stderr, "unknown command /nope") || lastLine(r.stderr) != "nothing was stored" {
		t.Errorf("stderr:\n%s", r.stderr)
	}
}

// A tool that needs approval asks on the prompt line; the answer is typed
// there and is not kept as a prompt in the history.
func TestChatAsksForApproval(t *testing.T) {
	skipWithoutPTY(t)
	t.Parallel()
	srv := newFake(t,
		openaiReply(turn{calls: []call{{"w1", "write_file", `{"path":"out.txt","content":"written"}`}}}),
		openaiReply(turn{text: "Done writing."}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	tm := c.startTerminal("chat", "--raw", "--tools", "write_file")
	tm.expect("> ")
	tm.send("Write it\r")
	tm.expect(`Allow write_file path="out.txt"`)
	tm.send("y\r")
	tm.expect("Done writing.")
	tm.expect("> ")
	tm.send("\x04")
	if code := tm.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if b, err := os.ReadFile(filepath.Join(c.dir, "out.txt")); err != nil || string(b) != "written" {
		t.Errorf("out.txt: %q, %v", b, err)
	}
	hist, _ := os.ReadFile(filepath.Join(c.home, "chat_history"))
	if string(hist) != "\"Write it\"\n" {
		t.Errorf("chat_history = %q, want the prompt only", hist)
	}
}
