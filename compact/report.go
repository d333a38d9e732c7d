package compact

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/agcore/agcore/llm"
)

// ErrCannotFit is matched (errors.Is) by every *[CannotFitError].
var ErrCannotFit = errors.New("compact: messages cannot fit the budget")

// CannotFitError says a strategy could not bring the messages under the
// budget. The strategy still returns its best result alongside the error
// (a [Pipeline] hands it to the next strategy); Tokens is that result's
// count.
type CannotFitError struct {
	Strategy string
	Tokens   int
	Budget   int
	Reason   string
}

// Error says which strategy could not fit how many tokens into what budget.
func (e *CannotFitError) Error() string {
	s := fmt.Sprintf("compact: %s: %d tokens do not fit the budget of %d", e.Strategy, e.Tokens, e.Budget)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Unwrap makes errors.Is(err, ErrCannotFit) true.
func (e *CannotFitError) Unwrap() error { return ErrCannotFit }

// Report says what a compression did. Strategies that implement [Reporter]
// fill it themselves; [Apply] builds it for any other.
type Report struct {
	Strategy     string
	TokensBefore int
	TokensAfter  int
	// MessagesBefore and MessagesAfter count messages.
	MessagesBefore, MessagesAfter int
	// Changed is false when the output equals the input.
	Changed bool
	// KeptPrefix is how many leading messages of the input the output
	// repeats unchanged. A provider's prompt cache can serve a request up
	// to the first changed message, so this is the part of the previously
	// sent conversation whose cache survives.
	KeptPrefix int
	// Detail says in words what was done ("cleared 12 tool results").
	Detail string
	// Steps holds the reports of a pipeline's strategies, in order.
	Steps []Report
}

// Freed returns the tokens the compression saved.
func (r Report) Freed() int { return r.TokensBefore - r.TokensAfter }

// BreaksPrefix reports whether the output changed any of the first sent
// messages of the input, the ones the previous request already contained:
// when it does, the provider's prompt cache misses from that message on.
func (r Report) BreaksPrefix(sent int) bool { return r.Changed && r.KeptPrefix < sent }

// Reporter is a [Strategy] that reports what it did. Every strategy in this
// package implements it.
type Reporter interface {
	Strategy
	// CompressReport is Compress with a report. On error the messages, when
	// not nil, are the strategy's best effort.
	CompressReport(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, Report, error)
}

// Apply runs s and reports what it did: through [Reporter] when s
// implements it, otherwise by comparing the output with the input.
func Apply(ctx context.Context, s Strategy, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, Report, error) {
	if r, ok := s.(Reporter); ok {
		return r.CompressReport(ctx, msgs, budget, counter)
	}
	before := counter.CountMessages(msgs)
	out, err := s.Compress(ctx, msgs, budget, counter)
	rep := Report{Strategy: fmt.Sprintf("%T", s), TokensBefore: before, MessagesBefore: len(msgs)}
	if out == nil && err != nil {
		rep.TokensAfter = before
		rep.MessagesAfter = len(msgs)
		rep.KeptPrefix = len(msgs)
		return nil, rep, err
	}
	rep.TokensAfter = counter.CountMessages(out)
	rep.MessagesAfter = len(out)
	rep.KeptPrefix = commonPrefix(msgs, out)
	rep.Changed = rep.KeptPrefix != len(msgs) || len(out) != len(msgs)
	return out, rep, err
}

// commonPrefix returns how many leading messages a and b share.
func commonPrefix(a, b []llm.Message) int {
	n := min(len(a), len(b))
	for i := range n {
		if !reflect.DeepEqual(a[i], b[i]) {
			return i
		}
	}
	return n
}

// unchanged is the report and result of a strategy that had nothing to do.
func unchanged(name string, msgs []llm.Message, tokens int) ([]llm.Message, Report) {
	return append([]llm.Message(nil), msgs...), Report{
		Strategy: name, TokensBefore: tokens, TokensAfter: tokens,
		MessagesBefore: len(msgs), MessagesAfter: len(msgs), KeptPrefix: len(msgs),
	}
}
