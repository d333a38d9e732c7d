package openai

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// errStreamDone ends the event sequence after EventComplete.
var errStreamDone = adapter.ErrStreamDone

// blockKind is the kind of the open content block.
type blockKind uint8

const (
	kindNone blockKind = iota
	kindText
	kindThinking
	kindTool
)

// toolSlot tracks one tool call of the stream.
type toolSlot struct {
	wire    int    // the call's "index" on the wire
	block   int    // its content block index, once started
	id      string // from the first fragment that has one
	name    string
	started bool   // its BlockStart was emitted
	pending []byte // arguments that arrived before the name
}

// streamReader turns a Chat Completions event stream into llm events. It
// pulls from the body only when its queue of events is empty, so a slow
// consumer slows the reads and nothing runs in the background.
//
// Blocks are emitted one at a time: content of another kind (text, thinking,
// a tool call) closes the open block and starts a new one. A tool call's
// fragments are matched by their "index"; a fragment with a new id at an
// index already used starts a new call (servers that number every call 0).
// A call opens when its name is known; arguments that came before are held
// until then.
type streamReader struct {
	m       *Model
	dec     *sse.Decoder
	c       chunk
	asm     llm.Assembler
	q       adapter.Queue
	scratch []byte

	started   bool // EventMessageStart was emitted
	open      int  // index of the open block, -1 when none
	openKind  blockKind
	nextBlock int
	tools     []toolSlot
	refused   bool
	sawFinish bool
	finish    string
	// lastText is the index of the last text block started, -1 before
	// one; annotations cite it.
	lastText  int
	reasoning reasoningDetails // OpenRouter's, gathered (see extras.go)
}

func newStreamReader(m *Model, r io.Reader) *streamReader {
	return &streamReader{
		m:        m,
		dec:      sse.NewDecoder(r, sse.Options{MaxEventSize: m.cfg.o.MaxEvent}),
		open:     -1,
		lastText: -1,
	}
}

// Next returns the next event; errStreamDone after EventComplete. Other
// errors are either *llm.Error (in-band errors, malformed chunks) or the
// reader's own (left for the caller to classify).
func (s *streamReader) Next() (llm.Event, error) { return s.q.Next(s.pull) }

// pull reads one server-sent event and queues what it yields.
func (s *streamReader) pull() error {
	ev, err := s.dec.Next()
	if err == io.EOF {
		if s.sawFinish {
			// Some servers end without [DONE]; a finish reason is enough.
			return s.complete()
		}
		return io.ErrUnexpectedEOF
	}
	if err != nil {
		return err
	}
	data := ev.Data
	switch ev.Type {
	case "message":
	case "error":
		we, ok := adapter.ParseError(data)
		if !ok {
			we = wireError{Message: httpx.Snippet(data)}
		}
		return s.m.inBandError(we, 200)
	default:
		return nil // an event type this dialect does not define
	}
	if len(data) == 0 || data[0] != '{' {
		switch t := bytes.TrimSpace(data); string(t) {
		case "":
			return nil // an empty event (a keep-alive)
		case "[DONE]":
			return s.complete()
		}
	}
	if !parseChunkFast(data, &s.c) {
		if err := parseChunkStd(data, &s.c); err != nil {
			return s.m.malformed(fmt.Sprintf("a stream chunk is not valid JSON (%v): %.200q", err, data))
		}
	}
	return s.apply(&s.c)
}

// apply queues the events of one chunk.
func (s *streamReader) apply(c *chunk) error {
	if c.err != nil {
		return s.m.inBandError(*c.err, 200)
	}
	// A usage-only chunk (no id, no choices) can come first from some
	// OpenAI-compatible servers; it still opens the message.
	if !s.started && (len(c.id.raw) > 0 || len(c.choices) > 0 || c.usage != nil) {
		s.started = true
		s.emit(llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{ID: s.str(c.id), Model: s.str(c.model)}})
	}
	for i := range c.choices {
		ch := &c.choices[i]
		if ch.index != 0 {
			continue // only the first choice is read
		}
		r := ch.reasoningContent
		if len(r.raw) == 0 {
			r = ch.reasoning
		}
		if len(r.raw) > 0 {
			if err := s.delta(kindThinking, r); err != nil {
				return err
			}
		}
		if len(ch.content.raw) > 0 {
			if err := s.delta(kindText, ch.content); err != nil {
				return err
			}
		}
		if len(ch.refusal.raw) > 0 {
			s.refused = true
			if err := s.delta(kindText, ch.refusal); err != nil {
				return err
			}
		}
		for j := range ch.toolCalls {
			if err := s.tool(&ch.toolCalls[j]); err != nil {
				return err
			}
		}
		if len(ch.annotations) > 0 {
			s.cite(ch.annotations)
		}
		if len(ch.reasoningDetails) > 0 {
			s.reasoning.add(ch.reasoningDetails)
		}
		if len(ch.fr.raw) > 0 {
			s.sawFinish = true
			s.finish = s.str(ch.fr)
			if err := s.closeOpen(); err != nil {
				return err
			}
		}
	}
	if c.usage != nil {
		u := c.usage.usage()
		s.emit(llm.Event{Type: llm.EventUsage, Usage: &u})
	}
	return nil
}

// delta appends text or thinking, opening a block of that kind if needed.
func (s *streamReader) delta(kind blockKind, j jstr) error {
	if s.openKind != kind {
		if err := s.closeOpen(); err != nil {
			return err
		}
		var b llm.Block = llm.Text{}
		if kind == kindThinking {
			b = llm.Thinking{}
		}
		i := s.startBlock(b, kind)
		if kind == kindText {
			s.lastText = i
		}
	}
	typ := llm.EventTextDelta
	if kind == kindThinking {
		typ = llm.EventThinkingDelta
	}
	s.emit(llm.Event{Type: typ, Index: s.open, Delta: s.str(j)})
	return nil
}

func (s *streamReader) tool(tc *toolDelta) error {
	var sl *toolSlot
	for i := len(s.tools) - 1; i >= 0; i-- {
		if s.tools[i].wire == tc.index {
			sl = &s.tools[i]
			break
		}
	}
	if sl != nil && len(tc.id.raw) > 0 && sl.id != "" && sl.id != s.str(tc.id) {
		sl = nil // a new call at an index already used
	}
	if sl != nil && sl.started && len(tc.id.raw) == 0 && len(tc.name.raw) > 0 && s.argsComplete(sl) {
		// A named fragment without an id after a whole call at the same
		// index is the next call: Gemini's compatible endpoint sends each
		// call whole, with "id": "", all at index 0.
		sl = nil
	}
	if sl == nil {
		s.tools = append(s.tools, toolSlot{wire: tc.index})
		sl = &s.tools[len(s.tools)-1]
	}
	if sl.started && (s.openKind != kindTool || s.open != sl.block) {
		return s.m.malformed(fmt.Sprintf("a fragment of tool call %d (%s) arrived after other content followed the call", tc.index, sl.id))
	}
	if sl.id == "" && len(tc.id.raw) > 0 {
		sl.id = s.str(tc.id)
	}
	if !sl.started && sl.name == "" && len(tc.name.raw) > 0 {
		sl.name = s.str(tc.name)
	}
	if !sl.started {
		if sl.name == "" {
			sl.pending = s.appendStr(sl.pending, tc.args)
			return nil
		}
		if err := s.closeOpen(); err != nil {
			return err
		}
		sl.started = true
		if sl.id == "" {
			// Without an id the call could not be paired with its result
			// (Gemini's compatible endpoint sends "id": ""). The generated
			// one is in every event, the Response and the history.
			sl.id = newCallID()
		}
		tu := llm.ToolUse{ID: sl.id, Name: sl.name}
		if tc.signature != "" {
			tu.Signature, tu.Provider = tc.signature, "gemini"
		}
		sl.block = s.startBlock(tu, kindTool)
		if len(sl.pending) > 0 {
			s.emit(llm.Event{Type: llm.EventToolInputDelta, Index: sl.block, Delta: string(sl.pending)})
			sl.pending = nil
		}
	}
	if len(tc.args.raw) > 0 {
		s.emit(llm.Event{Type: llm.EventToolInputDelta, Index: sl.block, Delta: s.str(tc.args)})
	}
	return nil
}

// cite emits the citations of url_citation annotations for the last text
// block (annotations index the message's text, which is that block's on
// every server that sends them). Annotations before any text cite nothing.
func (s *streamReader) cite(anns []wireAnnotation) {
	if s.lastText < 0 {
		return
	}
	b, err := s.asm.Built(s.lastText)
	if err != nil {
		return
	}
	text, _ := b.(llm.Text)
	for _, c := range citationsOf(anns, text.Text) {
		s.emit(llm.Event{Type: llm.EventCitation, Index: s.lastText, Citation: &c})
	}
}

// argsComplete reports whether the started call's arguments so far are a
// whole JSON value.
func (s *streamReader) argsComplete(sl *toolSlot) bool {
	b, err := s.asm.Built(sl.block)
	if err != nil {
		return false
	}
	tu, ok := b.(llm.ToolUse)
	if !ok {
		return false
	}
	_, bad := tu.Malformed()
	return !bad
}

// newCallID returns a unique tool call id for a call the server sent
// without one.
func newCallID() string {
	return "call_" + rand.Text()
}

func (s *streamReader) startBlock(b llm.Block, kind blockKind) int {
	i := s.nextBlock
	s.nextBlock++
	s.open, s.openKind = i, kind
	s.emit(llm.Event{Type: llm.EventBlockStart, Index: i, Block: b})
	return i
}

// closeOpen emits BlockStop for the open block. A tool call whose arguments
// are not valid JSON is an error, except when the answer was cut off by the
// length limit: then the call gets no BlockStop and the Assembler leaves it
// out of the Response.
func (s *streamReader) closeOpen() error {
	if s.open < 0 {
		return nil
	}
	i, kind := s.open, s.openKind
	s.open, s.openKind = -1, kindNone
	b, err := s.asm.Built(i)
	if err != nil {
		if kind == kindTool && mapFinish(s.finish, false, false) == llm.FinishLength {
			return nil
		}
		return s.m.malformed(err.Error())
	}
	s.emit(llm.Event{Type: llm.EventBlockStop, Index: i, Block: b})
	return nil
}

// complete closes the stream: the last BlockStop, then EventComplete with
// the assembled Response.
func (s *streamReader) complete() error {
	if err := s.closeOpen(); err != nil {
		return err
	}
	hasTools := false
	for i := range s.tools {
		sl := &s.tools[i]
		if !sl.started {
			return s.m.malformed(fmt.Sprintf("tool call %d (%s) never got a name", sl.wire, sl.id))
		}
		hasTools = true
	}
	if !s.started {
		s.started = true
		s.emit(llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{}})
	}
	if b := s.reasoning.block(); b != nil {
		i := s.startBlock(b, kindNone)
		s.open, s.openKind = -1, kindNone
		s.emit(llm.Event{Type: llm.EventBlockStop, Index: i, Block: b})
	}
	s.asm.SetFinishReason(mapFinish(s.finish, s.refused, hasTools))
	resp, err := s.asm.Finish()
	if err != nil {
		return s.m.malformed(err.Error())
	}
	s.emit(llm.Event{Type: llm.EventComplete, Response: resp})
	s.q.Finish()
	return nil
}

// emit queues ev and records it in the Assembler.
func (s *streamReader) emit(ev llm.Event) {
	// The Assembler only rejects events for blocks never started, which
	// this reader does not produce.
	_ = s.asm.Add(ev)
	s.q.Push(ev)
}

// str turns a chunk string into a Go string (the one allocation a delta
// costs).
func (s *streamReader) str(j jstr) string {
	if !j.esc {
		return string(j.raw)
	}
	s.scratch = appendUnescaped(s.scratch[:0], j.raw)
	return string(s.scratch)
}

func (s *streamReader) appendStr(dst []byte, j jstr) []byte {
	if !j.esc {
		return append(dst, j.raw...)
	}
	return appendUnescaped(dst, j.raw)
}
