package compact

import (
	"context"
	"fmt"

	"github.com/agcore/agcore/llm"
)

// DefaultKeepLast is how many groups at the end [Truncate] and [Summarize]
// keep verbatim by default.
const DefaultKeepLast = 4

// Truncate drops whole groups of messages, oldest first, until the
// conversation fits. A group is atomic: an assistant message with tool
// calls together with its results, or one user message, or one plain
// assistant message, so a call is never separated from its result. It always
// keeps the leading system messages, the first user message (usually the
// task), the last assistant message with tool calls (whose thinking blocks
// a provider may require) and the last KeepLast groups.
//
// Dropping starts right after the first user message, so the system prompt
// and the task stay a cached prefix; what follows them changes. To make that
// happen rarely, cut points are quantized (see Step): the same groups keep
// being dropped turn after turn until the conversation has grown by about
// Step tokens, so the compacted conversation stays byte-stable between
// cuts. The price is dropping up to Step tokens more than strictly needed.
//
// The zero value uses the defaults. A Truncate is stateless and safe for
// concurrent use.
type Truncate struct {
	// KeepLast is how many groups at the end are always kept (default
	// [DefaultKeepLast]).
	KeepLast int
	// Step is the cut granularity in tokens (default: a fifth of the
	// budget); 1 drops exactly as little as needed.
	Step int
}

// Compress implements [Strategy].
func (t Truncate) Compress(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, error) {
	out, _, err := t.CompressReport(ctx, msgs, budget, counter)
	return out, err
}

// CompressReport implements [Reporter]. When the kept groups alone exceed
// the budget it returns them with a *[CannotFitError].
func (t Truncate) CompressReport(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, Report, error) {
	const name = "truncate"
	if err := ctx.Err(); err != nil {
		return nil, Report{Strategy: name}, err
	}
	p := newPlan(msgs, counter, orDefault(t.KeepLast, DefaultKeepLast))
	total := counter.CountMessages(msgs)
	if total <= budget {
		out, rep := unchanged(name, msgs, total)
		return out, rep, nil
	}
	// The plan's total is the sum of per-message shares; correct for a
	// counter that is not exactly additive.
	need := total - budget
	m, ok := p.cut(need, stepFor(t.Step, budget))
	out, first := p.without(m)
	after := counter.CountMessages(out)
	for ok && after > budget && m < len(p.droppable) {
		m++ // a non-additive counter: drop one more group
		out, first = p.without(m)
		after = counter.CountMessages(out)
	}
	rep := Report{
		Strategy: name, TokensBefore: total, TokensAfter: after,
		MessagesBefore: len(msgs), MessagesAfter: len(out),
		Changed: m > 0, KeptPrefix: first,
		Detail: fmt.Sprintf("dropped %d of %d groups (%d messages)", m, len(p.groups), len(msgs)-len(out)),
	}
	if after > budget {
		return out, rep, &CannotFitError{Strategy: name, Tokens: after, Budget: budget, Reason: "the kept groups alone are too large"}
	}
	return out, rep, nil
}

func stepFor(step, budget int) int {
	if step > 0 {
		return step
	}
	return max(1, budget/5)
}
