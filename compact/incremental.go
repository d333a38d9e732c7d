package compact

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync"

	"github.com/agcore/agcore/llm"
)

// DefaultLowWater is the share of the budget [Incremental] compresses to.
const DefaultLowWater = 0.75

// incrementalTuner is implemented by the strategies of this package that
// cut differently when [Incremental] holds their result between
// compressions.
type incrementalTuner interface {
	forIncremental() Strategy
}

// Incremental makes any strategy cache-friendly across requests. An agent
// keeps the whole history and compresses it again before every request;
// even a deterministic strategy then cuts at a slightly different place
// each time, and every request misses the provider's prompt cache.
// Incremental remembers, per conversation, the input it last compressed and
// the result it sent. When the next input is that input plus new messages,
// it sends the previous result plus the new messages, unchanged, for as
// long as that fits the budget, so each request extends the last one byte
// for byte. Only when it no longer fits does it run the strategy again, on
// that view (the previous result and the new messages), aiming at LowWater
// of the budget so that the conversation can grow for a while before the
// next compression.
//
// The strategies of this package know when Incremental runs them and cut
// for it: a [Pipeline] passes this on to its members, and a [Microcompact]
// with a zero Step clears every result older than its KeepRecent messages
// instead of stopping at a quantized boundary (the quantization keeps a
// stateless pipeline's requests stable; under Incremental it only leaves
// more to send afresh). Other strategies run as they are.
//
// The trade-off: between compressions, old tool results and old turns stay
// exactly as the last compression left them (newer results are not
// cleared until the next one), and each compression removes more than the
// strict minimum. In return, a long session pays full input price about
// once every (1−LowWater)×budget tokens of growth instead of on every
// request.
//
// What Incremental remembers lives, for a conversation whose requests
// carry a [State] in their context ([WithState]), in that State: an agent
// gives each run one, so that what a run compressed is stored with its
// session and the next run, in any process, starts from that view (see
// [State]). Without one, Incremental remembers in its own memory, per
// process: conversations are then told apart by their messages up to the
// first user message, and a result is extended only when the new input
// starts with exactly the previous input. Either way, a compression that
// follows an extended result works on that result plus the new messages
// (the view that was being sent), not on the whole history, so both ways
// send the same requests. An Incremental is safe for concurrent use by
// many conversations; use it through a pointer.
type Incremental struct {
	// Strategy compresses the view when needed. Required.
	Strategy Strategy
	// LowWater is the share of the budget a fresh compression aims for
	// (default [DefaultLowWater]); if the strategy cannot reach it, the
	// whole budget is used.
	LowWater float64

	mu    sync.Mutex
	convs map[uint64]*incremental
}

type incremental struct {
	inputLen  int
	inputHash uint64
	output    []llm.Message
	kept      int
}

// NewIncremental returns an Incremental over s with the default low water.
func NewIncremental(s Strategy) *Incremental { return &Incremental{Strategy: s} }

// Compress implements [Strategy].
func (c *Incremental) Compress(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, error) {
	out, _, err := c.CompressReport(ctx, msgs, budget, counter)
	return out, err
}

// CompressReport implements [Reporter]. A fresh compression's report is the
// strategy's, with its Strategy field kept; an extension's says so in
// Detail.
func (c *Incremental) CompressReport(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, Report, error) {
	const name = "incremental"
	if err := ctx.Err(); err != nil {
		return nil, Report{Strategy: name}, err
	}
	total := counter.CountMessages(msgs)
	if total <= budget {
		out, rep := unchanged(name, msgs, total)
		return out, rep, nil
	}
	st := StateFrom(ctx)
	var key uint64
	var prev *incremental
	if st != nil {
		prev = st.get()
	} else {
		key = conversationKey(msgs)
		c.mu.Lock()
		prev = c.convs[key]
		c.mu.Unlock()
	}
	remember := func(e *incremental) {
		if st != nil {
			st.set(e)
		} else {
			c.remember(key, e)
		}
	}

	var h maphash.Hash
	h.SetSeed(hashSeed)
	input, kept := msgs, len(msgs)
	if prev != nil && len(msgs) >= prev.inputLen {
		for i := range prev.inputLen {
			hashMessage(&h, &msgs[i])
		}
		if h.Sum64() == prev.inputHash {
			cand := append(append(make([]llm.Message, 0, len(prev.output)+len(msgs)-prev.inputLen), prev.output...), msgs[prev.inputLen:]...)
			for i := prev.inputLen; i < len(msgs); i++ {
				hashMessage(&h, &msgs[i])
			}
			if n := counter.CountMessages(cand); n <= budget && ValidatePairing(cand) == nil {
				remember(&incremental{inputLen: len(msgs), inputHash: h.Sum64(), output: cand, kept: prev.kept})
				return cand, Report{
					Strategy: name, TokensBefore: total, TokensAfter: n,
					MessagesBefore: len(msgs), MessagesAfter: len(cand),
					Changed: true, KeptPrefix: prev.kept,
					Detail: fmt.Sprintf("extended the previous result by %d messages", len(msgs)-prev.inputLen),
				}, nil
			}
			// The view no longer fits: compress it, the previous result
			// and the new messages, rather than the whole history.
			input, kept = cand, prev.kept
		} else {
			h.Reset()
			h.SetSeed(hashSeed)
			for i := range msgs {
				hashMessage(&h, &msgs[i])
			}
		}
	} else {
		for i := range msgs {
			hashMessage(&h, &msgs[i])
		}
	}

	if c.Strategy == nil {
		return nil, Report{Strategy: name}, fmt.Errorf("compact: Incremental has no Strategy")
	}
	strategy := c.Strategy
	if t, ok := strategy.(incrementalTuner); ok {
		strategy = t.forIncremental()
	}
	low := c.LowWater
	if low <= 0 || low > 1 {
		low = DefaultLowWater
	}
	out, rep, err := Apply(ctx, strategy, input, max(1, int(float64(budget)*low)), counter)
	if err != nil || rep.TokensAfter > budget {
		if ctx.Err() != nil {
			return nil, Report{Strategy: name}, ctx.Err()
		}
		out, rep, err = Apply(ctx, strategy, input, budget, counter)
	}
	if err != nil {
		return out, rep, err
	}
	rep.TokensBefore, rep.MessagesBefore = total, len(msgs)
	rep.KeptPrefix = min(rep.KeptPrefix, kept)
	remember(&incremental{inputLen: len(msgs), inputHash: h.Sum64(), output: out, kept: rep.KeptPrefix})
	return out, rep, nil
}

func (c *Incremental) remember(key uint64, st *incremental) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.convs == nil || len(c.convs) >= maxRemembered {
		c.convs = map[uint64]*incremental{}
	}
	c.convs[key] = st
}

// Forget drops what c remembers in its own memory, so the next call
// without a [State] compresses afresh.
func (c *Incremental) Forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.convs = nil
}

// conversationKey identifies a conversation by its messages up to and
// including the first user message.
func conversationKey(msgs []llm.Message) uint64 {
	var h maphash.Hash
	h.SetSeed(hashSeed)
	for i := range msgs {
		hashMessage(&h, &msgs[i])
		if msgs[i].Role == llm.RoleUser {
			break
		}
	}
	return h.Sum64()
}
