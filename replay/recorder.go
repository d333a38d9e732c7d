package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// Recorder writes a record as a run goes: the header when made, then a
// line per turn, model call and tool result as each ends. It is safe for
// concurrent use; calls are numbered in the order they start. Writing
// errors are kept and returned by [Recorder.Err] and [Recorder.Close]; they
// never fail a call.
type Recorder struct {
	mu      sync.Mutex
	enc     *encoder
	closer  io.Closer
	err     error
	calls   int
	turns   int
	turn    int             // the current turn
	pending *pendingTurn    // a turn whose line waits for its first request
	seen    map[string]bool // sessions that have had a turn
	rec     *Record         // kept in memory too when not nil
	header  Header
	marked  bool   // Turn was called: turns are not inferred
	waiting []Call // ended calls waiting for an earlier one to end
	written int    // calls written
}

// pendingTurn is a marked turn not yet written: its history comes from
// its first request.
type pendingTurn struct {
	t Turn
}

// NewRecorder returns a recorder writing to w, after writing h (Version
// and, when empty, Agcore and Created are filled in).
func NewRecorder(w io.Writer, h Header) (*Recorder, error) {
	h.Version = Version
	if h.Agcore == "" {
		h.Agcore = agcoreVersion()
	}
	if h.Created.IsZero() {
		h.Created = time.Now().UTC().Truncate(time.Second)
	}
	r := &Recorder{enc: newEncoder(w), seen: map[string]bool{}, header: h}
	if err := r.enc.header(h); err != nil {
		return nil, err
	}
	return r, nil
}

// Create returns a recorder writing to a new file at path (an existing one
// is replaced), readable by its owner only (mode 0600: a record holds the
// whole conversation and every tool's output); Close closes it.
func Create(path string, h Header) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err == nil {
		// An existing file keeps its mode under O_CREATE: narrow it.
		err = f.Chmod(0o600)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	r, err := NewRecorder(f, h)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// Memory returns a recorder that keeps the record in memory only
// (returned by [Recorder.Record]).
func Memory(h Header) *Recorder {
	r, _ := NewRecorder(io.Discard, h)
	r.rec = &Record{Header: r.header}
	return r
}

// Record returns the record a [Memory] recorder kept, or nil.
func (r *Recorder) Record() *Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rec == nil {
		return nil
	}
	return &Record{Header: r.rec.Header, Turns: slices.Clone(r.rec.Turns), Calls: slices.Clone(r.rec.Calls), Tools: slices.Clone(r.rec.Tools)}
}

// Turn marks the start of a turn: the caller's input messages, on session
// (its id; "" for a run without one). The calls and tool results that
// follow belong to it. A replay runs each marked turn with its input; the
// first turn of a session also keeps the history its first request sent
// before the input. A recorder whose Turn is never called infers the
// turns from the requests (a request that ends with a user message and
// is not a summarizer's starts one, its trailing user messages the
// input): each gets the history it sent and a session of its own.
func (r *Recorder) Turn(session string, input []llm.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.marked = true
	r.flushTurn(nil)
	r.turns++
	r.turn = r.turns
	r.pending = &pendingTurn{t: Turn{N: r.turns, Session: session, Input: append([]llm.Message(nil), input...)}}
}

// flushTurn writes the pending turn, its history taken from req when it
// is its session's first turn. r.mu is held.
func (r *Recorder) flushTurn(req *llm.Request) {
	p := r.pending
	if p == nil {
		return
	}
	r.pending = nil
	if !r.seen[p.t.Session] && req != nil {
		p.t.History = historyOf(req.Messages, len(p.t.Input))
	}
	if p.t.Session != "" {
		r.seen[p.t.Session] = true
	}
	if r.rec != nil {
		r.rec.Turns = append(r.rec.Turns, p.t)
	}
	r.keep(r.enc.turn(p.t))
}

// infer starts a turn at req when it is the first call of an agent's run,
// for a recorder whose user never marks turns: a request that ends with
// a user message (a later step of the tool loop ends with tool results)
// and is not a summarizer's (Metadata "agcore.purpose"). The caller's
// input is taken to be the trailing user messages; the turn gets a
// session of its own ("turn-N"), seeded with the history req sent, so a
// replay rebuilds each turn's request whether or not the runs shared a
// session. r.mu is held.
func (r *Recorder) infer(req *llm.Request) {
	msgs := req.Messages
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != llm.RoleUser || req.Metadata["agcore.purpose"] != "" {
		return
	}
	first := len(msgs)
	for first > 0 && msgs[first-1].Role == llm.RoleUser {
		first--
	}
	r.turns++
	r.turn = r.turns
	t := Turn{N: r.turns, Session: fmt.Sprintf("turn-%d", r.turns), Input: append([]llm.Message(nil), msgs[first:]...)}
	t.History = historyOf(msgs, len(t.Input))
	r.seen[t.Session] = true
	r.pending = &pendingTurn{t: t}
}

// historyOf returns the messages of a turn's first request between its
// system message and the input's n messages.
func historyOf(msgs []llm.Message, n int) []llm.Message {
	start := 0
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		start = 1
	}
	end := len(msgs) - n
	if end <= start {
		return nil
	}
	return append([]llm.Message(nil), msgs[start:end]...)
}

func (r *Recorder) keep(err error) {
	if err != nil && r.err == nil {
		r.err = err
	}
}

// start numbers a call and keeps a copy of its request.
func (r *Recorder) start(req *llm.Request) (int, int, *llm.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.marked && r.pending == nil {
		r.infer(req)
	}
	r.flushTurn(req)
	r.calls++
	return r.calls, r.turn, req.Clone()
}

// finish writes a call's line. Calls are written in the order they end;
// a reader needs them in the order they started, so a call that ends
// before an earlier one waits for it.
func (r *Recorder) finish(c Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = append(r.waiting, c)
	for {
		i := -1
		for j, w := range r.waiting {
			if w.N == r.written+1 {
				i = j
				break
			}
		}
		if i < 0 {
			return
		}
		w := r.waiting[i]
		r.waiting = append(r.waiting[:i], r.waiting[i+1:]...)
		r.written++
		if r.rec != nil {
			r.rec.Calls = append(r.rec.Calls, w)
		}
		r.keep(r.enc.call(w))
	}
}

// Middleware returns the model middleware that records each call (for
// agent.Config.Middleware: below hooks and telemetry, above retries, so a
// call is recorded once, as its last attempt was sent, with what it
// finally returned). Its type is middleware.Middleware's.
func (r *Recorder) Middleware() func(llm.Model) llm.Model {
	return func(next llm.Model) llm.Model { return &recording{Model: next, r: r} }
}

// ToolMiddleware returns the tool middleware that records each tool
// call's result (for agent.Config.ToolMiddleware).
func (r *Recorder) ToolMiddleware() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call tool.Call) (string, error) {
			out, err := next(ctx, call)
			if err != nil && tool.IsFatal(err) {
				return out, err
			}
			res := ToolResult{ID: call.ID, Name: call.Name, Input: json.RawMessage(append([]byte(nil), call.Input...)), Output: out}
			if err != nil {
				res.Output, res.IsError = err.Error(), true
			}
			r.mu.Lock()
			res.Turn = r.turn
			if r.rec != nil {
				r.rec.Tools = append(r.rec.Tools, res)
			}
			r.keep(r.enc.tool(res))
			r.mu.Unlock()
			return out, err
		}
	}
}

// Err returns the first writing error, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Close writes a marked turn that made no call, closes the file of a
// recorder made by Create and returns the first writing error.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flushTurn(nil)
	for _, w := range r.waiting { // calls that never ended
		r.keep(r.enc.call(w))
	}
	r.waiting = nil
	if r.closer != nil {
		r.keep(r.closer.Close())
		r.closer = nil
	}
	return r.err
}

// recording is the recorder's model middleware.
type recording struct {
	llm.Model
	r *Recorder
}

func (m *recording) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.wrap(ctx, req, llm.Next{Model: m.Model, Blocking: true}))
}

func (m *recording) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return m.wrap(ctx, req, llm.Next{Model: m.Model})
}

// wrap records one call, for both calls: its request when it starts, its
// response or error when it ends (a stream left before its end as
// abandoned).
func (m *recording) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		n, turn, sent := m.r.start(req)
		c := Call{N: n, Turn: turn, Request: sent}
		defer func() {
			if c.Response == nil && c.Err == nil {
				c.Err = llm.Cancelled("", errAbandoned)
			}
			m.r.finish(c)
		}()
		for ev, err := range next.Stream(ctx, req) {
			switch {
			case err != nil:
				c.Err = errorOf(err)
			case ev.Type == llm.EventComplete:
				c.Response = ev.Response
			}
			if !yield(ev, err) {
				return
			}
			if err != nil {
				return
			}
		}
	}
}

// errAbandoned marks a call whose caller stopped reading its stream.
var errAbandoned = errors.New("replay: the stream was abandoned before its end")
