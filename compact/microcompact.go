package compact

import (
	"context"
	"fmt"
	"strings"

	"github.com/agcore/agcore/llm"
)

// Defaults of [Microcompact].
const (
	DefaultKeepRecent = 8
	DefaultMinFree    = 2000
	DefaultStep       = 24
)

// placeholderPrefix starts every placeholder, so a cleared result is never
// cleared twice.
const placeholderPrefix = "[tool result cleared to save context: "

// Microcompact is the cheapest strategy: it replaces the content of tool
// results older than the last KeepRecent messages with a one-line placeholder
// that names the tool and the original size, so the model knows what it had and
// can call the tool again. It never touches error results (their text is why
// the model acts as it does next), assistant messages (so thinking blocks and
// tool calls are kept as sent) or the structure of the conversation.
//
// Clearing results changes the conversation from the first cleared result
// on, so the prompt cache misses from there. Microcompact therefore acts
// only when it frees at least MinFree tokens, and it moves its boundary in
// steps of Step messages: between two steps the cleared part stays
// byte-identical and the cache keeps hitting. Under [Incremental], which
// reuses its last result until it no longer fits, a step only leaves up to
// Step-1 more messages to send afresh at the next compression, so there a
// Microcompact whose Step is left at zero uses 1: it clears every result
// before the last KeepRecent messages; and one whose MinFree is left at
// zero clears any amount (Incremental compresses a view that no longer
// fits, whose earlier results are already cleared).
//
// The zero value uses the defaults. A Microcompact is stateless and safe
// for concurrent use.
type Microcompact struct {
	// KeepRecent is how many messages at the end keep their results whole
	// (default [DefaultKeepRecent]).
	KeepRecent int
	// MinFree is the least number of tokens worth clearing (default
	// [DefaultMinFree]); a negative value means any amount.
	MinFree int
	// Step is the granularity of the boundary in messages (default
	// [DefaultStep]); 1 moves it with every message.
	Step int
}

// Compress implements [Strategy].
func (mc Microcompact) Compress(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, error) {
	out, _, err := mc.CompressReport(ctx, msgs, budget, counter)
	return out, err
}

// CompressReport implements [Reporter]. When clearing every eligible result
// is not enough, it returns the cleared messages with a *[CannotFitError];
// when clearing would free less than MinFree, it returns the input
// unchanged (with the error if the input is over the budget).
func (mc Microcompact) CompressReport(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, Report, error) {
	const name = "microcompact"
	if err := ctx.Err(); err != nil {
		return nil, Report{Strategy: name}, err
	}
	total := counter.CountMessages(msgs)
	if total <= budget {
		out, rep := unchanged(name, msgs, total)
		return out, rep, nil
	}
	keep := orDefault(mc.KeepRecent, DefaultKeepRecent)
	step := orDefault(mc.Step, DefaultStep)
	minFree := mc.MinFree
	if minFree == 0 {
		minFree = DefaultMinFree
	}
	boundary := len(msgs) - keep
	boundary -= boundary % step
	names := toolNames(msgs)

	out := append([]llm.Message(nil), msgs...)
	base := counter.CountMessages(nil)
	freed, cleared, first := 0, 0, len(msgs)
	for i := 0; i < boundary; i++ {
		nm, ok := clearResults(msgs[i], names)
		if !ok {
			continue
		}
		before := counter.CountMessages(msgs[i:i+1]) - base
		after := counter.CountMessages([]llm.Message{nm}) - base
		if after >= before {
			continue // the result is already smaller than its placeholder
		}
		out[i] = nm
		freed += before - after
		cleared++
		first = min(first, i)
	}
	if cleared == 0 || (minFree > 0 && freed < minFree) {
		out, rep := unchanged(name, msgs, total)
		rep.Detail = fmt.Sprintf("would free %d tokens, less than %d: left as is", freed, minFree)
		return out, rep, &CannotFitError{Strategy: name, Tokens: total, Budget: budget, Reason: rep.Detail}
	}
	after := counter.CountMessages(out)
	rep := Report{
		Strategy: name, TokensBefore: total, TokensAfter: after,
		MessagesBefore: len(msgs), MessagesAfter: len(out),
		Changed: true, KeptPrefix: first,
		Detail: fmt.Sprintf("cleared %d tool results before message %d", cleared, boundary),
	}
	if after > budget {
		return out, rep, &CannotFitError{Strategy: name, Tokens: after, Budget: budget, Reason: "the remaining messages are too large"}
	}
	return out, rep, nil
}

// forIncremental clears every old result when Step is left at its
// default: under [Incremental] the result is reused until it no longer
// fits, so a quantized boundary only leaves more to send afresh.
func (mc Microcompact) forIncremental() Strategy {
	if mc.Step <= 0 {
		mc.Step = 1
	}
	if mc.MinFree == 0 {
		// Incremental compresses only a view that no longer fits, whose
		// results cleared earlier stay cleared: whatever is left to
		// clear is worth clearing before anything is dropped.
		mc.MinFree = -1
	}
	return mc
}

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// toolNames maps each tool call id to the tool's name.
func toolNames(msgs []llm.Message) map[string]string {
	names := map[string]string{}
	for i := range msgs {
		if msgs[i].Role != llm.RoleAssistant {
			continue
		}
		for _, b := range msgs[i].Content {
			if u, ok := b.(llm.ToolUse); ok {
				names[u.ID] = u.Name
			}
		}
	}
	return names
}

// clearResults returns m with its successful tool results replaced by
// placeholders, and whether anything was replaced.
func clearResults(m llm.Message, names map[string]string) (llm.Message, bool) {
	switch m.Role {
	case llm.RoleTool:
		if m.IsError || isPlaceholder(m.Content) {
			return m, false
		}
		m.Content = []llm.Block{llm.Text{Text: placeholder(names[m.ToolCallID], m.Content)}}
		return m, true
	case llm.RoleUser:
		changed := false
		var content []llm.Block
		for j, b := range m.Content {
			tr, ok := b.(llm.ToolResult)
			if !ok || tr.IsError || isPlaceholder(tr.Content) {
				continue
			}
			if content == nil {
				content = append([]llm.Block(nil), m.Content...)
			}
			tr.Content = []llm.Block{llm.Text{Text: placeholder(names[tr.ToolUseID], tr.Content)}}
			content[j] = tr
			changed = true
		}
		if changed {
			m.Content = content
		}
		return m, changed
	}
	return m, false
}

func isPlaceholder(content []llm.Block) bool {
	if len(content) != 1 {
		return false
	}
	t, ok := content[0].(llm.Text)
	return ok && strings.HasPrefix(t.Text, placeholderPrefix)
}

func placeholder(tool string, content []llm.Block) string {
	if tool == "" {
		tool = "a tool"
	}
	return fmt.Sprintf("%s%s returned %s; call it again if it is needed]", placeholderPrefix, tool, sizeText(contentBytes(content)))
}

func sizeText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// contentBytes is the size of the content as sent, exhaustive over block
// kinds.
func contentBytes(content []llm.Block) int {
	n := 0
	for _, b := range content {
		switch b := b.(type) {
		case llm.Text:
			n += len(b.Text)
		case llm.Thinking:
			n += len(b.Text)
		case llm.RedactedThinking:
			n += len(b.Data)
		case llm.ToolUse:
			n += len(b.Input)
		case llm.ToolResult:
			n += contentBytes(b.Content)
		case llm.Image:
			n += len(b.Data) + len(b.URL)
		case llm.Audio:
			n += len(b.Data) + len(b.URL)
		case llm.File:
			n += len(b.Data) + len(b.URL) + len(b.FileID)
		case llm.Extension:
			n += len(b.Data)
		}
	}
	return n
}
