package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/serve/host"
)

// sink receives a turn's updates as the endpoints show them.
type sink interface {
	text(delta string) error
	thinking(delta string) error
	// toolCall is a whole call: one the server runs, or one of the
	// client's declared tools (declared), which ends the turn.
	toolCall(call llm.ToolUse, declared bool) error
	toolResult(msg *llm.Message) error
}

// agentSink is a sink that also shows which agent produced what: the
// handoffs of a turn, and the work of its sub-agents (agent.AsTool).
type agentSink interface {
	handoff(from, to string) error
	// subAgent is an agent.UpdateSubAgent update.
	subAgent(u agent.Update) error
}

// runTurn runs one turn of a and hands its updates to s. A turn a
// spending limit stopped returns both its response and the
// *budget.ExceededError. The turn's
// context carries the approval owner (the request's principal). A sink
// error (the client went away) abandons the turn, which stores nothing.
func runTurn(ctx context.Context, a host.Agent, msgs []llm.Message, opts *agent.RunOptions, run string, s sink) (*agent.Response, error) {
	principal, _ := host.PrincipalFrom(ctx)
	return runTurnAs(ctx, principal, a, msgs, opts, run, s)
}

// runTurnAs is runTurn for a principal the caller already holds.
func runTurnAs(ctx context.Context, principal string, a host.Agent, msgs []llm.Message, opts *agent.RunOptions, run string, s sink) (*agent.Response, error) {
	ctx = approval.WithOwner(ctx, approval.Owner{Agent: a.Name, Session: sessionOf(opts), Run: run, Principal: principal})
	ctx, end := host.BeginTurn(ctx, host.Turn{Agent: a.Name, Session: sessionOf(opts), ID: run, Input: msgs})
	defer end()
	declared := make(map[string]bool, len(opts.Declared))
	for _, d := range opts.Declared {
		declared[d.Name] = true
	}
	stream := a.Agent.RunStream(ctx, msgs, opts)
	var resp *agent.Response
	for u, err := range stream.Updates() {
		if err != nil {
			if resp != nil && errors.Is(err, llm.ErrBudgetExceeded) {
				// A spending limit stopped the turn after its first
				// model call: what it did is stored (resp).
				return resp, err
			}
			return nil, err
		}
		if u.Kind == agent.UpdateFinish {
			resp = u.Response
		}
		if serr := feed(s, u, declared); serr != nil {
			return nil, serr // breaking the range abandons the run
		}
	}
	if resp == nil {
		return nil, context.Cause(ctx)
	}
	return resp, nil
}

// feed hands one update of a turn to s (the finish update is the
// caller's); declared names the client's declared tools.
func feed(s sink, u agent.Update, declared map[string]bool) error {
	switch u.Kind {
	case agent.UpdateText:
		return s.text(u.Text)
	case agent.UpdateThinking:
		return s.thinking(u.Text)
	case agent.UpdateToolCall:
		return s.toolCall(u.ToolCall, declared[u.ToolCall.Name])
	case agent.UpdateToolResult:
		return s.toolResult(u.ToolResult)
	case agent.UpdateHandoff:
		if as, ok := s.(agentSink); ok {
			return as.handoff(u.From, u.Agent)
		}
	case agent.UpdateSubAgent:
		if as, ok := s.(agentSink); ok {
			return as.subAgent(u)
		}
	}
	return nil
}

// record is the TurnHook of a server with Options.Records: it begins
// the turn in its session's record, or in a record of its own.
func (h *Handler) record(ctx context.Context, principal string, t host.Turn) (context.Context, func()) {
	key := principal + "/" + t.Session
	if t.Session == "" {
		id := t.ID
		if id == "" {
			id = newID("turn-")
		}
		key = principal + "/" + id
	}
	var hdr replay.Header
	if h.opts.RecordHeader != nil {
		hdr = h.opts.RecordHeader(t.Agent)
	}
	hdr.Meta = maps.Clone(hdr.Meta)
	if hdr.Meta == nil {
		hdr.Meta = map[string]string{}
	}
	if _, ok := hdr.Meta["agent"]; !ok {
		hdr.Meta["agent"] = t.Agent
	}
	rctx, end, err := h.opts.Records.Begin(ctx, key, hdr, t.Session, t.Input)
	if err != nil {
		if ctx.Err() == nil {
			h.log.LogAttrs(ctx, slog.LevelError, "recording a turn: the turn runs unrecorded", slog.String("agent", t.Agent), slog.String("record", h.opts.Records.File(key)), slog.String("error", err.Error()))
		}
		return ctx, func() {}
	}
	return rctx, end
}

func sessionOf(opts *agent.RunOptions) string {
	if opts.Session != nil {
		return opts.Session.ID
	}
	return opts.SessionID
}

// newID returns prefix followed by 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// errStreamClosed is what a write to a closed sse returns.
var errStreamClosed = errors.New("serve: the event stream is closed")

// sse writes server-sent events. Events written within flushEvery of the
// last flush are sent together by a timer (so a burst of deltas costs one
// write, not one per delta); the first event is flushed at once, the last
// ones go with the end of the response. A flush error (the client went away) is returned by the
// next write.
type sse struct {
	w          http.ResponseWriter
	rc         *http.ResponseController
	flushEvery time.Duration

	mu        sync.Mutex
	started   bool
	closed    bool
	lastFlush time.Time
	timer     *time.Timer
	err       error
	buf       []byte
}

func newSSE(w http.ResponseWriter, flushEvery time.Duration) *sse {
	return &sse{w: w, rc: http.NewResponseController(w), flushEvery: flushEvery}
}

// startLocked writes the header.
func (s *sse) startLocked() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

// isStarted reports whether the header is written.
func (s *sse) isStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// send writes one event (event "" writes a data line only).
func (s *sse) send(event string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.write(event, data)
}

// final writes a literal data line ("[DONE]"), the stream's last: the
// handler's return sends it with whatever is pending and the end of the
// body, in one write.
func (s *sse) final(data string) error { return s.write("", []byte(data)) }

func (s *sse) write(event string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.closed {
		return errStreamClosed
	}
	s.startLocked()
	b := s.buf[:0]
	if event != "" {
		b = append(b, "event: "...)
		b = append(b, event...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, "\n\n"...)
	s.buf = b
	if _, err := s.w.Write(b); err != nil {
		s.err = err
		return err
	}
	wait := s.flushEvery - time.Since(s.lastFlush)
	switch {
	case wait <= 0:
		return s.flushLocked()
	case s.timer == nil:
		s.timer = time.AfterFunc(wait, s.timed)
	}
	return nil
}

func (s *sse) flushLocked() error {
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.lastFlush = time.Now()
	if err := s.rc.Flush(); err != nil {
		s.err = err
		return err
	}
	return nil
}

func (s *sse) timed() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && s.timer != nil {
		s.timer = nil
		_ = s.flushLocked()
	}
}

// close stops the flush timer; nothing is written after it (a write
// returns errStreamClosed). The handler
// calls it before returning, and its return sends what is pending.
func (s *sse) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}
