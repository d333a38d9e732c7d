package compact

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"

	"github.com/agcore/agcore/llm"
)

var (
	// ErrCircuitOpen is returned by [Summarize] after MaxFailures
	// consecutive failed summaries, without calling the model, until
	// [Summarize.Reset].
	ErrCircuitOpen = errors.New("compact: summarization stopped after repeated failures")
	// ErrThrashing is returned by [Summarize] when a new summary would be
	// needed right after the last one: the kept part of the conversation
	// alone overflows the budget, and summarizing again would only burn
	// model calls.
	ErrThrashing = errors.New("compact: summarization is thrashing: the budget was exceeded again right after a summary")
)

// Defaults of [Summarize].
const (
	DefaultSummaryTokens = 2000
	DefaultThrashWindow  = 4
)

// DefaultSummaryInstructions is the summarizer's system prompt.
const DefaultSummaryInstructions = `You compact the history of a conversation between a user and an AI assistant that uses tools, so that the assistant can continue the work with less context.
Write a concise summary in plain text with these sections:
Goal: what the user wants overall.
Decisions: choices made so far and why.
Done: work completed, with key results, values and identifiers.
Pending: tasks requested or started but not finished, and the next step.
Facts: names, numbers, paths, error messages the assistant will still need.
Do not invent anything. The user's own messages and the files touched are kept separately; do not repeat them verbatim. If a previous summary is given, merge it with the new part into one summary.`

// Summarize asks a model to summarize the oldest groups of the conversation
// into one user message, keeping the last KeepLast groups verbatim (and, as
// [Truncate] does, the system messages, the first user message and the last
// assistant message with tool calls). The summary message holds the model's
// summary (goal, decisions, work done, pending tasks, facts), the user's own
// messages verbatim as far as they fit, and the files the tool calls
// touched.
//
// Summaries are remembered: while the same groups are summarized the
// summary is reused without a model call, so consecutive requests share a
// byte-identical prefix (the cut points are quantized as in [Truncate]).
// When more must go, the previous summary and the newly dropped groups are
// summarized together.
//
// Summarize is stateful (use it through a pointer; it is safe for concurrent
// use by many conversations): after MaxFailures consecutive failed model calls
// it stops with [ErrCircuitOpen], and it refuses with [ErrThrashing] to
// summarize again within ThrashWindow messages of its last summary of the same
// conversation.
type Summarize struct {
	// Model writes the summaries. Required.
	Model llm.Model
	// KeepLast is how many groups at the end stay verbatim (default
	// [DefaultKeepLast]).
	KeepLast int
	// Step is the cut granularity in tokens (default: a fifth of the
	// budget).
	Step int
	// SummaryTokens caps the summary message (default
	// [DefaultSummaryTokens], at most a quarter of the budget); half of it
	// goes to the model's text, half to the verbatim user messages.
	SummaryTokens int
	// Instructions replaces [DefaultSummaryInstructions].
	Instructions string
	// MaxFailures opens the circuit breaker (default [DefaultMaxFailures]).
	MaxFailures int
	// ThrashWindow is how many messages a conversation must grow by before
	// it may be summarized again (default [DefaultThrashWindow]).
	ThrashWindow int

	mu        sync.Mutex
	failures  int
	summaries map[uint64]summary
	lastLen   map[uint64]int // per conversation: length when last summarized
	stats     SummarizeStats
}

// SummarizeStats counts what a [Summarize] did.
type SummarizeStats struct {
	Summaries int  // model calls that produced a summary
	Reused    int  // compressions served by a remembered summary
	Failures  int  // failed model calls
	Thrashes  int  // refusals with ErrThrashing
	Open      bool // the circuit breaker is open
}

type summary struct {
	modelText string
	message   string
}

// maxRemembered bounds the remembered summaries.
const maxRemembered = 1024

// Stats returns the counters so far.
func (s *Summarize) Stats() SummarizeStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Open = s.failures >= orDefault(s.MaxFailures, DefaultMaxFailures)
	return st
}

// Reset closes the circuit breaker and forgets remembered summaries.
func (s *Summarize) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = 0
	s.summaries = nil
	s.lastLen = nil
}

// Compress implements [Strategy].
func (s *Summarize) Compress(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, error) {
	out, _, err := s.CompressReport(ctx, msgs, budget, counter)
	return out, err
}

// CompressReport implements [Reporter]. On [ErrCircuitOpen],
// [ErrThrashing] or a model error it returns the input unchanged with the
// error; when the summary still leaves the conversation over the budget it
// returns the summarized messages with a *[CannotFitError].
func (s *Summarize) CompressReport(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, Report, error) {
	const name = "summarize"
	if err := ctx.Err(); err != nil {
		return nil, Report{Strategy: name}, err
	}
	total := counter.CountMessages(msgs)
	if total <= budget {
		out, rep := unchanged(name, msgs, total)
		return out, rep, nil
	}
	fail := func(err error) ([]llm.Message, Report, error) {
		out, rep := unchanged(name, msgs, total)
		rep.Detail = err.Error()
		return out, rep, err
	}
	if s.Model == nil {
		return fail(errors.New("compact: Summarize has no Model"))
	}
	p := newPlan(msgs, counter, orDefault(s.KeepLast, DefaultKeepLast))
	if len(p.droppable) == 0 {
		return fail(&CannotFitError{Strategy: name, Tokens: total, Budget: budget, Reason: "nothing old enough to summarize"})
	}
	conv, prefix := p.prefixHashes()
	maxTokens := min(orDefault(s.SummaryTokens, DefaultSummaryTokens), max(budget/4, 1))

	s.mu.Lock()
	if s.failures >= orDefault(s.MaxFailures, DefaultMaxFailures) {
		s.mu.Unlock()
		return fail(ErrCircuitOpen)
	}
	// The newest remembered summary of this conversation, if it still fits.
	k0, prev := 0, summary{}
	for k := len(p.droppable); k >= 1; k-- {
		if sm, ok := s.summaries[prefix[k]]; ok {
			k0, prev = k, sm
			break
		}
	}
	if k0 > 0 {
		out, first := p.withSummary(k0, prev.message)
		after := counter.CountMessages(out)
		if after <= budget {
			s.stats.Reused++
			s.mu.Unlock()
			return out, p.report(name, total, after, out, first, fmt.Sprintf("reused the summary of %d groups", k0)), nil
		}
		if k0 == len(p.droppable) {
			// Everything that may go is summarized already.
			s.mu.Unlock()
			rep := p.report(name, total, after, out, first, fmt.Sprintf("reused the summary of %d groups", k0))
			return out, rep, &CannotFitError{Strategy: name, Tokens: after, Budget: budget, Reason: "the kept groups and the summary are too large"}
		}
	}
	if last, ok := s.lastLen[conv]; ok && len(msgs)-last < orDefault(s.ThrashWindow, DefaultThrashWindow) {
		s.stats.Thrashes++
		s.mu.Unlock()
		return fail(ErrThrashing)
	}
	s.mu.Unlock()

	m, _ := p.cut(total-budget+maxTokens, stepFor(s.Step, budget))
	m = max(m, k0+1, 1)
	m = min(m, len(p.droppable))
	text, err := s.generate(ctx, p, k0, m, prev.modelText, maxTokens/2, budget)
	s.mu.Lock()
	if err != nil {
		if ctx.Err() == nil {
			s.failures++
			s.stats.Failures++
		}
		s.mu.Unlock()
		if ctx.Err() != nil {
			return nil, Report{Strategy: name}, ctx.Err()
		}
		return fail(fmt.Errorf("compact: summarize: %w", err))
	}
	s.failures = 0
	s.stats.Summaries++
	message := p.summaryMessage(m, text, maxTokens-maxTokens/2, counter)
	if s.summaries == nil || len(s.summaries) >= maxRemembered {
		s.summaries = map[uint64]summary{}
	}
	s.summaries[prefix[m]] = summary{modelText: text, message: message}
	if s.lastLen == nil || len(s.lastLen) >= maxRemembered {
		s.lastLen = map[uint64]int{}
	}
	s.lastLen[conv] = len(msgs)
	s.mu.Unlock()

	out, first := p.withSummary(m, message)
	after := counter.CountMessages(out)
	rep := p.report(name, total, after, out, first, fmt.Sprintf("summarized %d groups", m))
	if after > budget {
		return out, rep, &CannotFitError{Strategy: name, Tokens: after, Budget: budget, Reason: "the kept groups and the summary are too large"}
	}
	return out, rep, nil
}

func (p *plan) report(name string, before, after int, out []llm.Message, first int, detail string) Report {
	return Report{
		Strategy: name, TokensBefore: before, TokensAfter: after,
		MessagesBefore: len(p.msgs), MessagesAfter: len(out),
		Changed: true, KeptPrefix: first, Detail: detail,
	}
}

// prefixHashes returns a hash identifying the conversation (its messages up
// to the first droppable group) and, for each k, a hash of the conversation
// up to the end of droppable group k-1.
func (p *plan) prefixHashes() (conv uint64, prefix []uint64) {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	firstStart := p.groups[p.droppable[0]].start
	for i := 0; i < firstStart; i++ {
		hashMessage(&h, &p.msgs[i])
	}
	conv = h.Sum64()
	prefix = make([]uint64, len(p.droppable)+1)
	prefix[0] = conv
	for k, gi := range p.droppable {
		g := p.groups[gi]
		for i := g.start; i < g.end; i++ {
			hashMessage(&h, &p.msgs[i])
		}
		prefix[k+1] = h.Sum64()
	}
	return conv, prefix
}

// withSummary returns the messages with the first m droppable groups
// replaced by one user message holding text, placed where the first of them
// was, and the index of that message.
func (p *plan) withSummary(m int, text string) (out []llm.Message, first int) {
	gone := make([]bool, len(p.groups))
	for _, k := range p.droppable[:m] {
		gone[k] = true
	}
	out = make([]llm.Message, 0, len(p.msgs))
	first = -1
	for k, g := range p.groups {
		if gone[k] {
			if first < 0 {
				first = len(out)
				out = append(out, llm.UserText(text))
			}
			continue
		}
		out = append(out, p.msgs[g.start:g.end]...)
	}
	return out, first
}

// generate asks the model to summarize droppable groups [k0, m), merging
// the previous summary of [0, k0).
func (s *Summarize) generate(ctx context.Context, p *plan, k0, m int, previous string, maxTokens, budget int) (string, error) {
	var sb strings.Builder
	if previous != "" {
		sb.WriteString("Previous summary:\n")
		sb.WriteString(previous)
		sb.WriteString("\n\nThe conversation that followed:\n")
	} else {
		sb.WriteString("The conversation:\n")
	}
	var msgs []llm.Message
	for _, gi := range p.droppable[k0:m] {
		g := p.groups[gi]
		msgs = append(msgs, p.msgs[g.start:g.end]...)
	}
	// About three bytes a token: keep the request well inside a window the
	// size of the budget.
	sb.WriteString(renderTranscript(msgs, toolNames(p.msgs), 3*budget))
	instructions := s.Instructions
	if instructions == "" {
		instructions = DefaultSummaryInstructions
	}
	resp, err := s.Model.Generate(ctx, &llm.Request{
		Messages:  []llm.Message{llm.SystemText(instructions), llm.UserText(sb.String())},
		MaxTokens: maxTokens,
		Metadata:  map[string]string{"agcore.purpose": "compact.summarize"},
	})
	if err != nil {
		return "", err
	}
	text := strings.TrimSpace(resp.Message.Text())
	if text == "" {
		return "", errors.New("the model returned an empty summary")
	}
	return text, nil
}

// summaryMessage builds the text of the summary message for droppable
// groups [0, m): the model's summary, then the user's messages verbatim
// (newest first until quoteTokens are used, shown oldest first), then the
// files the tool calls touched.
func (p *plan) summaryMessage(m int, modelText string, quoteTokens int, counter TokenCounter) string {
	var users []string
	var files []string
	seen := map[string]bool{}
	n := 0
	for _, gi := range p.droppable[:m] {
		g := p.groups[gi]
		n += g.end - g.start
		for i := g.start; i < g.end; i++ {
			msg := &p.msgs[i]
			if msg.Role == llm.RoleUser {
				if t := strings.TrimSpace(msg.Text()); t != "" {
					users = append(users, t)
				}
			}
			for _, f := range filesTouched(msg) {
				if !seen[f] && len(files) < 40 {
					seen[f] = true
					files = append(files, f)
				}
			}
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "[Summary of the earlier conversation: %d messages were replaced to save context.]\n\n%s\n", n, modelText)
	kept, used := 0, 0
	for i := len(users) - 1; i >= 0; i-- {
		c := counter.CountMessages([]llm.Message{llm.UserText(users[i])}) - counter.CountMessages(nil)
		if used+c > quoteTokens {
			break
		}
		used += c
		kept++
	}
	if len(users) > 0 {
		sb.WriteString("\nThe user's messages, verbatim:\n")
		if omitted := len(users) - kept; omitted > 0 {
			fmt.Fprintf(&sb, "(%d earlier messages omitted)\n", omitted)
		}
		for _, u := range users[len(users)-kept:] {
			sb.WriteString("> ")
			sb.WriteString(strings.ReplaceAll(u, "\n", "\n> "))
			sb.WriteString("\n")
		}
	}
	if len(files) > 0 {
		sb.WriteString("\nFiles touched: ")
		sb.WriteString(strings.Join(files, ", "))
		sb.WriteString("\n")
	}
	return sb.String()
}
