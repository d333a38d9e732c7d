package render

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
)

// TextOptions configures a Text sink.
type TextOptions struct {
	// Terminal says stderr is a terminal: colours and a status line.
	Terminal bool
	// Color allows ANSI colours on stderr (off with NO_COLOR).
	Color bool
	// HideThinking leaves the model's thinking out.
	HideThinking bool
	// Width returns the terminal's width in columns, so the status line
	// never wraps; nil or 0 means 80.
	Width func() int
	// Markdown, when set, renders the answer (stdout is a terminal): it is
	// shown a line at a time, each line rendered once it is complete (a
	// table once it is whole).
	Markdown *Markdown
}

// Text shows a turn for people. The answer streams on out (stdout) and
// nothing else goes there, so `agcore run ... > answer.txt` keeps just the
// answer. Everything else goes to errw (stderr): thinking (dimmed), one
// line per tool call and per result, retries, the usage line and errors; on
// a terminal a spinner shows what the turn is waiting for.
type Text struct {
	out, errw io.Writer
	opts      TextOptions

	mu       sync.Mutex
	st       *status
	model    string
	outMid   bool // out's last byte is not a newline
	errMid   bool // errw's last byte is not a newline
	thinking bool // inside a run of thinking deltas
	names    map[string]string
	pending  int // tool calls without a result yet
	paused   string
	md       mdStream // answer text not rendered yet (with Markdown)
}

// NewText returns a text sink.
func NewText(out, errw io.Writer, opts TextOptions) *Text {
	t := &Text{out: out, errw: errw, opts: opts, names: map[string]string{}}
	t.md.m = opts.Markdown
	t.st = newStatus(errw, &t.mu)
	t.st.width, t.st.color = opts.Width, opts.Color
	return t
}

func (t *Text) color(code, s string) string {
	if !t.opts.Color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// busyLocked sets the status line (terminals only).
func (t *Text) busyLocked(msg string) {
	if t.opts.Terminal {
		t.st.setLocked(msg)
	}
}

// lineLocked ends the current lines of both streams and clears the status
// line, so that a decoration line starts at column 0.
func (t *Text) lineLocked() {
	t.st.clearLocked()
	t.flushMarkdownLocked()
	t.endThinkingLocked()
	if t.outMid {
		io.WriteString(t.out, "\n")
		t.outMid = false
	}
	if t.errMid {
		io.WriteString(t.errw, "\n")
		t.errMid = false
	}
}

// flushMarkdownLocked renders the answer text held back, if any.
func (t *Text) flushMarkdownLocked() {
	if t.opts.Markdown == nil {
		return
	}
	t.writeMarkdownLocked(t.md.flush())
}

// writeMarkdownLocked writes rendered lines.
func (t *Text) writeMarkdownLocked(rendered string) {
	if rendered == "" {
		return
	}
	t.st.clearLocked()
	t.endThinkingLocked()
	io.WriteString(t.out, rendered)
	t.outMid = false
}

// endThinkingLocked ends a run of thinking: the dim colour and the line.
func (t *Text) endThinkingLocked() {
	if !t.thinking {
		return
	}
	t.thinking = false
	if t.opts.Color {
		io.WriteString(t.errw, "\x1b[0m")
	}
	if t.errMid {
		io.WriteString(t.errw, "\n")
		t.errMid = false
	}
}

// Start implements Sink.
func (t *Text) Start(session, model string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.model = model
	t.pending = 0
	clear(t.names)
	t.busyLocked("waiting for " + model)
}

// Thinking implements Sink.
func (t *Text) Thinking(delta string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.opts.HideThinking {
		t.busyLocked("thinking")
		return
	}
	t.st.clearLocked()
	if !t.thinking {
		if t.outMid {
			io.WriteString(t.out, "\n")
			t.outMid = false
		}
		if t.errMid {
			io.WriteString(t.errw, "\n")
		}
		io.WriteString(t.errw, t.color("2;3", "thinking: "))
		if t.opts.Color {
			io.WriteString(t.errw, "\x1b[2m") // dim until the thinking ends
		}
		t.thinking = true
	}
	io.WriteString(t.errw, delta)
	t.errMid = !strings.HasSuffix(delta, "\n")
	t.busyLocked("")
}

// Text implements Sink.
func (t *Text) Text(delta string) {
	if delta == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.opts.Markdown != nil {
		if lines := t.md.add(delta); lines != "" {
			t.st.setLocked("")
			t.writeMarkdownLocked(lines)
		}
		t.busyLocked("writing")
		return
	}
	t.st.setLocked("")
	t.endThinkingLocked()
	io.WriteString(t.out, delta)
	t.outMid = !strings.HasSuffix(delta, "\n")
}

// ToolCall implements Sink.
func (t *Text) ToolCall(call llm.ToolUse) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lineLocked()
	t.names[call.ID] = call.Name
	t.pending++
	fmt.Fprintf(t.errw, "  %s %s %s\n", t.color("36", "→"), t.color("1", call.Name), t.color("2", ShortArgs(call.InputOrEmpty(), 100)))
	t.busyLocked("running " + call.Name)
}

// ToolResult implements Sink.
func (t *Text) ToolResult(m *llm.Message) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lineLocked()
	name := t.names[m.ToolCallID]
	if name == "" {
		name = m.ToolCallID
	}
	text := m.Text()
	if m.IsError {
		fmt.Fprintf(t.errw, "  %s %s %s\n", t.color("31", "✗"), name, t.color("31", "error: "+firstLine(text, 120)))
	} else {
		fmt.Fprintf(t.errw, "  %s %s %s\n", t.color("32", "✓"), name, t.color("2", Size(len(text))))
	}
	if t.pending > 0 {
		t.pending--
	}
	if t.pending == 0 {
		t.busyLocked("waiting for " + t.model)
	}
}

// Retry implements Sink.
func (t *Text) Retry(attempt int, delay time.Duration, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	msg := fmt.Sprintf("%s; retrying in %s (attempt %d)", ErrorCode(err), delay.Round(100*time.Millisecond), attempt+1)
	if t.opts.Terminal {
		t.busyLocked(msg)
		return
	}
	t.lineLocked()
	fmt.Fprintln(t.errw, "  "+msg)
}

// Done implements Sink: the usage line.
func (t *Text) Done(d Done) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.setLocked("")
	t.lineLocked()
	if lines := SourceLines(d.Citations); len(lines) > 0 {
		fmt.Fprintln(t.out, "\nSources:")
		for _, l := range lines {
			fmt.Fprintln(t.out, "  "+l)
		}
	}
	fmt.Fprintln(t.errw, t.color("2", UsageLine(d)))
}

// Error implements Sink.
func (t *Text) Error(code, message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.setLocked("")
	t.lineLocked()
	fmt.Fprintln(t.errw, t.color("31", "error ("+code+"): "+message))
}

// Cancelled implements Sink: one dim line, no error.
func (t *Text) Cancelled(message string) { t.Note(message) }

// Note implements Sink: one dim line on stderr.
func (t *Text) Note(message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.setLocked("")
	t.lineLocked()
	fmt.Fprintln(t.errw, t.color("2", message))
}

// Busy shows msg on the status line (terminals only), as cancelling.
func (t *Text) Busy(msg string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.busyLocked(msg)
}

// Pause implements Sink.
func (t *Text) Pause() func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.paused = t.st.msg
	t.st.setLocked("")
	t.lineLocked()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.busyLocked(t.paused)
	}
}

// Close implements Sink.
func (t *Text) Close() { t.st.close() }

// UsageLine formats the end-of-turn line: tokens (input / cached /
// output), cost and duration.
func UsageLine(d Done) string {
	cost := "cost unknown"
	if d.CostKnown {
		cost = USD(d.CostUSD)
	}
	s := fmt.Sprintf("── %s input / %s cached / %s output tokens · %s · %s",
		Thousands(d.Usage.InputTokens), Thousands(d.Usage.CachedInputTokens), Thousands(d.Usage.OutputTokens),
		cost, Duration(d.Duration))
	if d.FinishReason != "" && d.FinishReason != llm.FinishStop {
		s += " · stopped: " + string(d.FinishReason)
	}
	if d.Budget != nil {
		for _, l := range []struct {
			what string
			left *budget.Left
		}{{"turn", d.Budget.Run}, {"session", d.Budget.Session}, {"quota", d.Budget.Principal}} {
			if l.left != nil {
				s += " · " + l.what + " budget left: " + leftText(*l.left)
			}
		}
	}
	return s
}

// leftText shows what is left of limits: "$0.4210, 12,000 tokens".
func leftText(l budget.Left) string {
	var parts []string
	if l.CostUSD != nil {
		parts = append(parts, USD(*l.CostUSD))
	}
	for _, n := range []struct {
		v    *int
		unit string
	}{{l.Tokens, "tokens"}, {l.InputTokens, "input tokens"}, {l.OutputTokens, "output tokens"}} {
		if n.v != nil {
			parts = append(parts, Thousands(*n.v)+" "+n.unit)
		}
	}
	return strings.Join(parts, ", ")
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	return Clip(s, n)
}
