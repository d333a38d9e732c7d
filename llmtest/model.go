package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/agcore/agcore/llm"
)

// ErrNoStep is wrapped by the error of a call made after every step was
// played.
var ErrNoStep = errors.New("llmtest: no scripted step left")

// DefaultChunkSize is the most bytes a streamed text, thinking or
// tool-input delta holds unless [Model.WithChunkSize] says otherwise.
const DefaultChunkSize = 8

// Model is a scripted [llm.Model]: each Generate or Stream call plays the
// next [Step]. It is safe for concurrent use; concurrent calls take steps in
// the order they arrive. The zero value is a model with no steps.
type Model struct {
	mu        sync.Mutex
	steps     []Step
	next      int
	requests  []*llm.Request
	extra     []string // calls that found no step left
	info      llm.ModelInfo
	infoSet   bool
	chunkSize int
}

var _ llm.Model = (*Model)(nil)

// New returns a model that plays steps in order. It needs no testing.TB, so
// examples and benchmarks can use it; tests add [Model.Verify].
func New(steps ...Step) *Model {
	return &Model{steps: steps}
}

// Verify registers a cleanup on t that fails the test if a step was never
// played or a call found no step left. It returns m.
func (m *Model) Verify(t testing.TB) *Model {
	t.Helper()
	t.Cleanup(func() {
		t.Helper()
		m.mu.Lock()
		defer m.mu.Unlock()
		if unused := len(m.steps) - m.next; unused > 0 {
			t.Errorf("llmtest: %d of %d scripted steps never used (the first unused is step %d)", unused, len(m.steps), m.next+1)
		}
		for _, e := range m.extra {
			t.Errorf("llmtest: %s", e)
		}
	})
	return m
}

// Add appends steps to the script.
func (m *Model) Add(steps ...Step) *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.steps = append(m.steps, steps...)
	return m
}

// WithInfo sets what Info returns and returns m.
func (m *Model) WithInfo(info llm.ModelInfo) *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.info, m.infoSet = info, true
	return m
}

// WithChunkSize sets the most bytes one streamed delta holds (at least 1;
// a delta never splits a UTF-8 character) and returns m.
func (m *Model) WithChunkSize(n int) *Model {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.chunkSize = max(n, 1)
	return m
}

// Info returns the info set with WithInfo, or {Provider: "llmtest", Name:
// "scripted"}.
func (m *Model) Info() llm.ModelInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.infoSet {
		return m.info
	}
	return llm.ModelInfo{Provider: "llmtest", Name: "scripted"}
}

// Requests returns deep copies of the requests received so far, in the
// order the calls took their steps.
func (m *Model) Requests() []*llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*llm.Request, len(m.requests))
	for i, r := range m.requests {
		out[i] = cloneRequest(r)
	}
	return out
}

// Calls returns how many calls the model received.
func (m *Model) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

// Remaining returns how many steps are left to play.
func (m *Model) Remaining() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.steps) - m.next
}

// take records req and returns the next step and the call's number (from 1).
func (m *Model) take(req *llm.Request) (Step, int, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, cloneRequest(req))
	n := len(m.requests)
	name := m.info.Name
	if !m.infoSet {
		name = "scripted"
	}
	if m.next >= len(m.steps) {
		msg := fmt.Sprintf("call %d found no step left (script has %d)", n, len(m.steps))
		m.extra = append(m.extra, msg)
		return Step{}, n, name, fmt.Errorf("%w: %s", ErrNoStep, msg)
	}
	s := m.steps[m.next]
	m.next++
	return s, n, name, nil
}

// play runs step s and returns its response with defaults filled in.
func play(ctx context.Context, s Step, req *llm.Request, n int, model string) (*llm.Response, error) {
	var resp *llm.Response
	switch {
	case s.hang:
		<-ctx.Done()
		return nil, llm.Cancelled("llmtest", ctx.Err())
	case s.fn != nil:
		r, err := s.fn(ctx, cloneRequest(req))
		if err != nil {
			return nil, err
		}
		if r == nil {
			return nil, fmt.Errorf("llmtest: step %d's function returned no response", n)
		}
		resp = cloneResponse(r)
	case s.resp != nil:
		resp = cloneResponse(s.resp)
	default:
		if s.err != nil {
			return nil, s.err
		}
		resp = &llm.Response{Message: llm.Message{Role: llm.RoleAssistant}}
	}
	if resp.ID == "" {
		resp.ID = fmt.Sprintf("msg_%d", n)
	}
	if resp.Model == "" {
		resp.Model = model
	}
	if resp.Message.Role == "" {
		resp.Message.Role = llm.RoleAssistant
	}
	if resp.FinishReason == "" {
		resp.FinishReason = llm.FinishStop
		if resp.Message.HasToolUse() {
			resp.FinishReason = llm.FinishToolUse
		}
	}
	return resp, nil
}

// Generate plays the next step.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, llm.Cancelled("llmtest", err)
	}
	s, n, model, err := m.take(req)
	if err != nil {
		return nil, err
	}
	if s.err != nil && s.failAfter >= 0 {
		return nil, s.err
	}
	return play(ctx, s, req, n, model)
}

// Stream plays the next step as events with small deltas: the events of
// [llm.Events] with every text, thinking, signature and tool-input delta cut
// into pieces. The step is taken when ranging starts. A cancelled context
// ends the stream with a cancelled error.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, llm.Cancelled("llmtest", err))
			return
		}
		s, n, model, err := m.take(req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		m.mu.Lock()
		chunk := m.chunkSize
		m.mu.Unlock()
		if chunk <= 0 {
			chunk = DefaultChunkSize
		}
		if s.err != nil && s.failAfter == 0 {
			yield(llm.Event{}, s.err)
			return
		}
		resp, err := play(ctx, s, req, n, model)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		sent := 0
		for _, ev := range llm.Events(resp) {
			for _, piece := range split(ev, chunk) {
				// A FailAfter past the last delta fails in place of the
				// completion: a stream never errs after EventComplete.
				if s.err != nil && (sent == s.failAfter || piece.Type == llm.EventComplete) {
					yield(llm.Event{}, s.err)
					return
				}
				if err := ctx.Err(); err != nil {
					yield(llm.Event{}, llm.Cancelled("llmtest", err))
					return
				}
				if !yield(piece, nil) {
					return
				}
				sent++
			}
		}
	}
}

// split cuts a delta event into deltas of at most n bytes on UTF-8
// boundaries; other events are returned alone.
func split(ev llm.Event, n int) []llm.Event {
	switch ev.Type {
	case llm.EventTextDelta, llm.EventThinkingDelta, llm.EventSignatureDelta, llm.EventToolInputDelta:
	default:
		return []llm.Event{ev}
	}
	if len(ev.Delta) <= n {
		return []llm.Event{ev}
	}
	out := make([]llm.Event, 0, len(ev.Delta)/n+1)
	d := ev.Delta
	for len(d) > 0 {
		cut := min(n, len(d))
		for cut < len(d) && cut > 0 && !utf8.RuneStart(d[cut]) {
			cut--
		}
		if cut == 0 { // one rune longer than n
			_, cut = utf8.DecodeRuneInString(d)
		}
		p := ev
		p.Delta = d[:cut]
		out = append(out, p)
		d = d[cut:]
	}
	return out
}

// cloneRequest deep-copies r: messages, their blocks' byte slices, tools
// and maps, so later changes by the caller do not show in the record.
func cloneRequest(r *llm.Request) *llm.Request {
	if r == nil {
		return &llm.Request{}
	}
	c := r.Clone()
	for i := range c.Messages {
		c.Messages[i] = cloneMessage(c.Messages[i])
	}
	for i := range c.Tools {
		c.Tools[i].Parameters = cloneRaw(c.Tools[i].Parameters)
	}
	if r.Messages == nil {
		c.Messages = nil
	}
	if r.Tools == nil {
		c.Tools = nil
	}
	if r.StopSequences == nil {
		c.StopSequences = nil
	}
	if r.Temperature != nil {
		v := *r.Temperature
		c.Temperature = &v
	}
	if r.TopP != nil {
		v := *r.TopP
		c.TopP = &v
	}
	if r.ResponseFormat != nil {
		f := *r.ResponseFormat
		f.Schema = cloneRaw(f.Schema)
		c.ResponseFormat = &f
	}
	if r.Reasoning != nil {
		v := *r.Reasoning
		c.Reasoning = &v
	}
	return c
}

func cloneResponse(r *llm.Response) *llm.Response {
	if r == nil {
		return nil
	}
	c := *r
	c.Message = cloneMessage(r.Message)
	if r.Transcript != nil {
		c.Transcript = make([]llm.Message, len(r.Transcript))
		for i, m := range r.Transcript {
			c.Transcript[i] = cloneMessage(m)
		}
	}
	return &c
}

func cloneMessage(m llm.Message) llm.Message {
	m = m.Clone()
	for i, b := range m.Content {
		m.Content[i] = cloneBlock(b)
	}
	return m
}

func cloneBlock(b llm.Block) llm.Block {
	switch b := b.(type) {
	case llm.ToolUse:
		b.Input = cloneRaw(b.Input)
		return b
	case llm.Image:
		b.Data = cloneBytes(b.Data)
		return b
	case llm.Audio:
		b.Data = cloneBytes(b.Data)
		return b
	case llm.File:
		b.Data = cloneBytes(b.Data)
		return b
	case llm.Extension:
		b.Data = cloneRaw(b.Data)
		return b
	case llm.ToolResult:
		if b.Content != nil {
			c := make([]llm.Block, len(b.Content))
			for i, x := range b.Content {
				c[i] = cloneBlock(x)
			}
			b.Content = c
		}
		return b
	default:
		return b
	}
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}
