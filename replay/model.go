package replay

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"

	"github.com/agcore/agcore/llm"
)

// ErrExhausted is wrapped by the error of a call made after every recorded
// call was replayed.
var ErrExhausted = errors.New("replay: no recorded call left")

// Options configure a replaying [Model]. The zero value is lenient and
// reports drift only through [Model.Drifts].
type Options struct {
	// Strict fails a call whose request differs from the recorded one
	// with a *DriftError (errors.Is(err, ErrDrift)) instead of answering.
	Strict bool
	// OnDrift, when set, is told of each call whose request differs from
	// the recorded one, as it is made (in both modes).
	OnDrift func(Drift)
	// Info, when set, is what the model reports as its Info; nil means the
	// record's header (so the budget policy sees the limits it saw).
	Info *llm.ModelInfo
}

// Model is an llm.Model that answers call N with the record's call N: its
// response as an event stream (message start, each block with its deltas,
// usage, completion), or its error. It compares each request with the
// recorded one ([Diff]). It is safe for concurrent use; calls take the
// recorded calls in the order they arrive.
type Model struct {
	rec  *Record
	opts Options
	info llm.ModelInfo

	mu       sync.Mutex
	next     int
	drifts   []Drift
	requests []*llm.Request
}

var _ llm.Model = (*Model)(nil)

// NewModel returns a model replaying rec's calls.
func NewModel(rec *Record, opts Options) *Model {
	m := &Model{rec: rec, opts: opts, info: rec.Header.Info()}
	if opts.Info != nil {
		m.info = *opts.Info
	}
	return m
}

// Info returns Options.Info, or the record's model.
func (m *Model) Info() llm.ModelInfo { return m.info }

// Drifts returns the drift found so far, one entry per call that drifted,
// in call order; with Finish's entry for the calls never made.
func (m *Model) Drifts() []Drift {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Drift(nil), m.drifts...)
}

// Requests returns the requests the model received, in order.
func (m *Model) Requests() []*llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*llm.Request(nil), m.requests...)
}

// Calls returns how many calls the model received; Remaining how many
// recorded calls it has not answered.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// Remaining returns how many recorded calls were not replayed yet.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.rec.Calls) - m.next
}

// Finish records, as drift of kind CallMissing, the recorded calls the
// replay never made (a replay that ended early), and returns it; nil
// when every call was made.
func (m *Model) Finish() *Drift {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.next >= len(m.rec.Calls) {
		return nil
	}
	d := Drift{Call: m.next + 1, Turn: m.rec.Calls[m.next].Turn}
	for _, c := range m.rec.Calls[m.next:] {
		d.Differences = append(d.Differences, Difference{Kind: CallMissing, Message: -1, Block: -1, Recorded: fmt.Sprintf("call %d", c.N)})
	}
	m.next = len(m.rec.Calls)
	m.drifts = append(m.drifts, d)
	if m.opts.OnDrift != nil {
		m.opts.OnDrift(d)
	}
	return &d
}

// take compares req with the next recorded call and returns that call,
// or the error the call must fail with.
func (m *Model) take(req *llm.Request) (*Call, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req.Clone())
	n := len(m.requests)
	if m.next >= len(m.rec.Calls) {
		d := Drift{Call: n, Differences: []Difference{{Kind: CallAdded, Message: -1, Block: -1, Replayed: fmt.Sprintf("call %d", n)}}}
		m.drifts = append(m.drifts, d)
		m.mu.Unlock()
		if m.opts.OnDrift != nil {
			m.opts.OnDrift(d)
		}
		if m.opts.Strict {
			return nil, &DriftError{Drift: d}
		}
		return nil, fmt.Errorf("%w: call %d, the record has %d", ErrExhausted, n, len(m.rec.Calls))
	}
	c := &m.rec.Calls[m.next]
	m.next++
	m.mu.Unlock()

	diffs := Diff(c.Request, req)
	if len(diffs) == 0 {
		return c, nil
	}
	d := Drift{Call: c.N, Turn: c.Turn, Differences: diffs}
	m.mu.Lock()
	m.drifts = append(m.drifts, d)
	m.mu.Unlock()
	if m.opts.OnDrift != nil {
		m.opts.OnDrift(d)
	}
	if m.opts.Strict {
		return nil, &DriftError{Drift: d}
	}
	return c, nil
}

// answer returns the recorded call's response (a copy) or error.
func answer(c *Call) (*llm.Response, error) {
	if c.Err != nil {
		e := *c.Err
		return nil, &e
	}
	if c.Response == nil {
		return nil, fmt.Errorf("replay: call %d has no recorded response", c.N)
	}
	r := *c.Response
	r.Message = r.Message.Clone()
	return &r, nil
}

// Generate answers with the next recorded call.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, llm.Cancelled("replay", err)
	}
	c, err := m.take(req)
	if err != nil {
		return nil, err
	}
	return answer(c)
}

// Stream answers with the next recorded call as an event stream.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, llm.Cancelled("replay", err))
			return
		}
		c, err := m.take(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		resp, err := answer(c)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for _, ev := range llm.Events(resp) {
			if err := ctx.Err(); err != nil {
				yield(llm.Event{}, llm.Cancelled("replay", err))
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}
