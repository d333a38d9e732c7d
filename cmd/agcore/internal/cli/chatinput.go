package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reeflective/readline"
)

// Chat input. A prompt is one line, or several: a paste (terminals send it
// bracketed, so its line breaks do not send it), a block between two
// lines of """, or lines that end in a backslash.

const (
	chatPrompt     = "> "
	chatContinue   = "… "
	multiLineQuote = `"""`
)

// errInterrupted is Ctrl-C at the prompt.
var errInterrupted = errors.New("interrupted at the prompt")

// lineReader gives chat its prompts: next returns the next whole prompt
// (several lines when they belong together), errInterrupted with the text
// typed so far on Ctrl-C, and io.EOF at the end of input (Ctrl-D).
type lineReader interface {
	next(ctx context.Context) (string, error)
}

// inputComplete reports whether text is a whole prompt: not inside an open
// """ block and not ending in a backslash.
func inputComplete(text string) bool {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, multiLineQuote) {
		return len(t) >= 2*len(multiLineQuote) && strings.HasSuffix(t, multiLineQuote)
	}
	return !strings.HasSuffix(text, `\`)
}

// promptText is the prompt a whole input makes: the """ lines and the
// backslashes that continued lines go.
func promptText(text string) string {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, multiLineQuote) && len(t) >= 2*len(multiLineQuote) && strings.HasSuffix(t, multiLineQuote) {
		return strings.TrimSpace(t[len(multiLineQuote) : len(t)-len(multiLineQuote)])
	}
	return strings.TrimSpace(strings.ReplaceAll(text, "\\\n", "\n"))
}

// termReader is the interactive prompt: a line editor (emacs or vi keys,
// ~/.inputrc, history, bracketed paste) that reads the terminal itself.
type termReader struct {
	rl   *readline.Shell
	hist *historyFile
}

func newTermReader(home string) *termReader {
	rl := readline.NewShell()
	_ = rl.Config.Set("enable-bracketed-paste", true)
	rl.Prompt.Primary(func() string { return chatPrompt })
	rl.Prompt.Secondary(func() string { return chatContinue })
	rl.AcceptMultiline = func(line []rune) bool { return inputComplete(string(line)) }
	hist := openHistory(home)
	rl.History.Add("chat", hist)
	return &termReader{rl: rl, hist: hist}
}

func (r *termReader) next(context.Context) (string, error) {
	line, err := r.rl.Readline()
	switch {
	case errors.Is(err, readline.ErrInterrupt):
		return line, errInterrupted
	case err != nil:
		return "", err
	}
	return promptText(line), nil
}

// ask asks an approval question on the prompt line; the answer is not
// kept in the history, and Ctrl-C is no answer.
func (r *termReader) ask(_ context.Context, question string) (string, error) {
	r.rl.Prompt.Primary(func() string { return question })
	r.hist.pause(true)
	defer func() {
		r.hist.pause(false)
		r.rl.Prompt.Primary(func() string { return chatPrompt })
	}()
	return r.rl.Readline()
}

// pipedReader reads prompts from a pipe, a line at a time; """ blocks and
// continued lines are joined as on a terminal.
type pipedReader struct{ asker lineAsker }

func newPipedReader(r io.Reader) *pipedReader {
	return &pipedReader{asker: lineAsker{w: io.Discard, r: r}}
}

func (p *pipedReader) next(ctx context.Context) (string, error) {
	text, err := p.asker.ask(ctx, "")
	for err == nil && !inputComplete(text) {
		var more string
		more, err = p.asker.ask(ctx, "")
		text += "\n" + more
	}
	if errors.Is(err, io.EOF) && text != "" {
		err = nil // an unclosed block at the end of input is still sent
	}
	return promptText(text), err
}

// historyFile is the chat's prompt history in $AGCORE_HOME/chat_history,
// private to the user: one JSON string a line, so a prompt of several
// lines stays one entry (a plain line, as older versions wrote, is read as
// it is).
type historyFile struct {
	mu     sync.Mutex
	path   string // "" keeps the history in memory only
	lines  []string
	paused bool
}

func openHistory(home string) *historyFile {
	h := &historyFile{}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return h
	}
	h.path = filepath.Join(home, "chat_history")
	f, err := os.Open(h.path)
	if err != nil {
		return h
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var s string
		if json.Unmarshal([]byte(line), &s) == nil {
			line = s
		}
		h.lines = append(h.lines, line)
	}
	return h
}

func (h *historyFile) pause(on bool) {
	h.mu.Lock()
	h.paused = on
	h.mu.Unlock()
}

// Write implements the line editor's history source.
func (h *historyFile) Write(line string) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.paused {
		return len(h.lines), nil
	}
	h.lines = append(h.lines, line)
	if h.path != "" {
		f, err := os.OpenFile(h.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return len(h.lines), err
		}
		b, _ := json.Marshal(line)
		_, err = f.Write(append(b, '\n'))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return len(h.lines), err
		}
	}
	return len(h.lines), nil
}

// GetLine implements the line editor's history source.
func (h *historyFile) GetLine(i int) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if i < 0 || i >= len(h.lines) {
		return "", errors.New("no such history line")
	}
	return h.lines[i], nil
}

// Len implements the line editor's history source.
func (h *historyFile) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.lines)
}

// Dump implements the line editor's history source.
func (h *historyFile) Dump() any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lines...)
}
