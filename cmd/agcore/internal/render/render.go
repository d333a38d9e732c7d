// Package render shows a turn of the agcore command as it happens: as
// text for people ([Text]: the answer streams on stdout, tool lines,
// thinking, a status line and the usage line on stderr) or as
// newline-delimited JSON events for programs ([JSON]).
package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
)

// Sink receives one turn's progress, in order: Start, then any number of
// Thinking, Text, ToolCall and ToolResult, then Done or Error. Retry may
// come at any time. Methods are called from one goroutine at a time.
type Sink interface {
	Start(session, model string)
	Thinking(delta string)
	Text(delta string)
	ToolCall(call llm.ToolUse)
	// ToolResult reports the result of the call named by result.ToolCallID.
	ToolResult(result *llm.Message)
	// Retry reports a failed model call about to be sent again.
	Retry(attempt int, delay time.Duration, err error)
	Done(d Done)
	Error(code, message string)
	// Cancelled reports a turn the user cancelled: not an error, so one
	// quiet line for people (an error event with the code "cancelled" for
	// programs).
	Cancelled(message string)
	// Note adds a quiet line after the turn (what was stored); nothing in
	// JSON.
	Note(message string)
	// Pause clears any status line and ends the current line so that the
	// caller can ask the user something; resume restores the status.
	Pause() (resume func())
	// Close stops background work (the spinner).
	Close()
}

// Done is how a turn ended.
type Done struct {
	Session      string
	Model        string
	FinishReason llm.FinishReason
	Text         string // the final assistant text
	Usage        llm.Usage
	CostUSD      float64
	CostKnown    bool
	Duration     time.Duration
	// Citations are the sources the answer's text blocks cite, in order.
	Citations []llm.Citation
	// Budget is what remains of the turn's spending limits; nil without
	// limits.
	Budget *budget.Remaining
	// Object is the typed answer of run --schema (compact JSON); nil
	// otherwise.
	Object json.RawMessage
}

// CitationsOf returns the citations of msg's text blocks, in order.
func CitationsOf(msg llm.Message) []llm.Citation {
	var out []llm.Citation
	for _, b := range msg.Content {
		if t, ok := b.(llm.Text); ok {
			out = append(out, t.Citations...)
		}
	}
	return out
}

// SourceLines returns the citations as numbered lines for people: "[1]
// Title — URL" (or the document, file or quoted text when there is no
// URL), each source once.
func SourceLines(cs []llm.Citation) []string {
	var lines []string
	seen := map[string]bool{}
	for _, c := range cs {
		var s string
		switch {
		case c.URL != "" && c.Title != "":
			s = c.Title + " — " + c.URL
		case c.URL != "":
			s = c.URL
		case c.FileID != "":
			s = strings.TrimSpace("file " + c.FileID + " " + c.Title)
		case c.Title != "":
			s = c.Title
		case c.Kind == llm.CitationDocument:
			s = fmt.Sprintf("document %d", c.Document)
		default:
			continue
		}
		if c.CitedText != "" && c.URL == "" {
			s += fmt.Sprintf(" (%q)", shorten(c.CitedText, 80))
		}
		if seen[s] {
			continue
		}
		seen[s] = true
		lines = append(lines, fmt.Sprintf("[%d] %s", len(lines)+1, s))
	}
	return lines
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// ErrorCode returns the code of the error event for err: the llm error
// kind, folded into the codes the --json format lists.
func ErrorCode(err error) string {
	if errors.Is(err, middleware.ErrBlocked) {
		return "blocked"
	}
	if errors.Is(err, llm.ErrBudgetExceeded) {
		return "budget"
	}
	switch k := llm.KindOf(err); k {
	case llm.KindRateLimited, llm.KindAuth, llm.KindContextLength, llm.KindOverloaded,
		llm.KindServer, llm.KindNetwork, llm.KindInvalidRequest, llm.KindCancelled:
		return k.String()
	case llm.KindIdleTimeout:
		return "network"

	case llm.KindTooLarge, llm.KindMalformed:
		return "server"
	}
	return "internal"
}
