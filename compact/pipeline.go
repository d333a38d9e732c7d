package compact

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agcore/agcore/llm"
)

// Pipeline tries its strategies in order, cheapest first, and stops as soon
// as the conversation fits. Each strategy works on the result of the ones
// before it: a strategy that freed some tokens but not enough (a
// [CannotFitError] with messages) hands its progress on; one that failed
// outright (a model error, [ErrCircuitOpen], [ErrThrashing]) is skipped.
//
// The usual order is [Microcompact] (free, and the conversation's shape is
// kept), [Summarize] (one model call, keeps the gist), [Truncate] (free,
// but what it drops is gone): see [DefaultPipeline].
type Pipeline []Strategy

// DefaultPipeline returns microcompact, then summarization by summarizer
// (left out when nil), then truncation, each with its defaults. An agent
// that compresses before every request should wrap it in [NewIncremental],
// under which the microcompact step clears every old result (see
// [Microcompact]).
func DefaultPipeline(summarizer llm.Model) Pipeline {
	p := Pipeline{Microcompact{}}
	if summarizer != nil {
		p = append(p, &Summarize{Model: summarizer})
	}
	return append(p, Truncate{})
}

// Compress implements [Strategy].
func (p Pipeline) Compress(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, error) {
	out, _, err := p.CompressReport(ctx, msgs, budget, counter)
	return out, err
}

// CompressReport implements [Reporter]. The report's Steps hold each
// strategy that ran. When no strategy makes the conversation fit, it
// returns the best result with a *[CannotFitError] whose Reason lists what
// each strategy said.
func (p Pipeline) CompressReport(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, Report, error) {
	const name = "pipeline"
	if err := ctx.Err(); err != nil {
		return nil, Report{Strategy: name}, err
	}
	total := counter.CountMessages(msgs)
	out, rep := unchanged(name, msgs, total)
	if total <= budget {
		return out, rep, nil
	}
	cur := out
	// kept[i] says whether cur[i] is still msgs[i] unchanged, for the
	// prefix the whole pipeline keeps.
	kept := len(msgs)
	var reasons []string
	for _, s := range p {
		next, r, err := Apply(ctx, s, cur, budget, counter)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, Report{Strategy: name}, ctxErr
		}
		rep.Steps = append(rep.Steps, r)
		if next != nil && (err == nil || errors.Is(err, ErrCannotFit)) && r.Changed {
			kept = min(kept, r.KeptPrefix)
			cur = next
		}
		if err == nil {
			break
		}
		reasons = append(reasons, fmt.Sprintf("%s: %v", r.Strategy, err))
	}
	after := counter.CountMessages(cur)
	rep.TokensAfter = after
	rep.MessagesAfter = len(cur)
	rep.Changed = kept < len(msgs) || len(cur) != len(msgs)
	rep.KeptPrefix = kept
	var details []string
	for _, s := range rep.Steps {
		if s.Detail != "" {
			details = append(details, s.Strategy+": "+s.Detail)
		}
	}
	rep.Detail = strings.Join(details, "; ")
	if after > budget {
		return cur, rep, &CannotFitError{Strategy: name, Tokens: after, Budget: budget, Reason: strings.Join(reasons, "; ")}
	}
	return cur, rep, nil
}

// forIncremental tunes each strategy of p for [Incremental].
func (p Pipeline) forIncremental() Strategy {
	q := make(Pipeline, len(p))
	for i, s := range p {
		if t, ok := s.(incrementalTuner); ok {
			s = t.forIncremental()
		}
		q[i] = s
	}
	return q
}
