package responses

import (
	"bytes"
	"encoding/json"
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
	kindOther
)

// itemKind is the kind of an output item.
type itemKind uint8

const (
	itemNone itemKind = iota
	itemMessage
	itemFunction
	itemReasoning
	itemOther
)

// maxItems bounds the output index an event may name.
const maxItems = 1 << 12

// itemState is what the reader knows of one output item.
type itemState struct {
	kind      itemKind
	done      bool // its output_item.done was applied
	block     int  // its latest block, -1 before the first
	textPart  int  // message: the content index of its latest text block, -1 before the first
	partsDone int  // message: content parts below this index are finished
	summaries int  // reasoning: summary parts begun
	contents  int  // reasoning: reasoning_text parts begun
}

// streamReader turns Responses stream events, or the output of a whole
// response, into llm events. For a stream it pulls from the body only when
// its queue of events is empty, so a slow consumer slows the reads and
// nothing runs in the background.
//
// Output items map to blocks in output order: a message's output_text and
// refusal parts to text blocks, a function_call to a tool-use block, a
// reasoning item to a thinking block, anything else to an extension block
// emitted whole when the item is done. One block is open at a time.
type streamReader struct {
	m       *Model
	dec     *sse.Decoder // nil when reading a whole response
	keep    bool         // queue the events (a stream) or only assemble them
	ev      event
	asm     llm.Assembler
	q       adapter.Queue
	scratch []byte
	typBuf  []byte

	started   bool
	open      int // the open block, -1 when none
	openKind  blockKind
	openItem  int      // the output index of the open block's item
	anns      [][]byte // the open text block's annotations
	nextBlock int
	items     []itemState
	refused   bool
	finish    llm.FinishReason // set once the response ended
	final     *llm.Response
}

func newStreamReader(m *Model, r io.Reader) *streamReader {
	return &streamReader{
		m:    m,
		dec:  sse.NewDecoder(r, sse.Options{MaxEventSize: m.cfg.o.MaxEvent}),
		keep: true,
		open: -1,
	}
}

// Next returns the next event; errStreamDone after EventComplete. Other
// errors are *llm.Error (in-band errors, malformed events, a stream cut
// short) or the reader's own (left for the caller to classify).
func (s *streamReader) Next() (llm.Event, error) { return s.q.Next(s.pull) }

// pull reads one server-sent event and queues what it yields.
func (s *streamReader) pull() error {
	ev, err := s.dec.Next()
	if err == io.EOF {
		return llm.IncompleteStream(errProvider, "response.completed")
	}
	if err != nil {
		return err
	}
	data := ev.Data
	if ev.Type == "error" {
		return s.streamError(data)
	}
	if len(data) == 0 || data[0] != '{' {
		switch t := bytes.TrimSpace(data); {
		case len(t) == 0:
			return nil // an empty event (a keep-alive)
		case string(t) == "[DONE]":
			// Not part of this API; a server that sends it anyway has
			// ended without its final event.
			return llm.IncompleteStream(errProvider, "response.completed")
		case t[0] != '{':
			return s.m.malformed(fmt.Sprintf("a stream event is not a JSON object: %.200q", data))
		}
	}
	if !parseEventFast(data, &s.ev) {
		if err := parseEventStd(data, &s.ev); err != nil {
			return s.m.malformed(fmt.Sprintf("a stream event is not valid JSON (%v): %.200q", err, data))
		}
	}
	return s.handle(ev.Type, data)
}

// handle applies one parsed event.
func (s *streamReader) handle(sseType string, data []byte) error {
	e := &s.ev
	typ := e.typ.raw
	if e.typ.esc {
		s.typBuf = appendUnescaped(s.typBuf[:0], typ)
		typ = s.typBuf
	}
	if len(typ) == 0 {
		typ = append(s.typBuf[:0], sseType...)
	}
	switch string(typ) {
	case "response.output_text.delta":
		return s.textDelta(e.outputIndex, e.contentIndex, e.delta, false)
	case "response.reasoning_summary_text.delta":
		return s.thinkingDelta(e.outputIndex, e.summaryIndex, e.delta, false)
	case "response.function_call_arguments.delta":
		return s.argsDelta(e.outputIndex, e.delta)
	case "response.refusal.delta":
		return s.textDelta(e.outputIndex, e.contentIndex, e.delta, true)
	case "response.reasoning_text.delta":
		return s.thinkingDelta(e.outputIndex, e.contentIndex, e.delta, true)
	case "response.created", "response.in_progress", "response.queued":
		if s.started {
			return nil // the id and model are known
		}
		var r wireResponse
		if err := s.decodeResponse(e.response, &r); err != nil {
			return err
		}
		s.begin(r.ID, r.Model)
		return nil
	case "response.output_item.added":
		return s.itemAdded(e.outputIndex, e.item)
	case "response.output_item.done":
		return s.itemDone(e.outputIndex, e.item)
	case "response.content_part.done":
		return s.partDone(e.outputIndex, e.contentIndex, e.part)
	case "response.output_text.done":
		return s.textDone(e.outputIndex, e.contentIndex, s.str(e.text), false)
	case "response.refusal.done":
		return s.textDone(e.outputIndex, e.contentIndex, s.str(e.refusal), true)
	case "response.output_text.annotation.added":
		return s.annotation(e.outputIndex, e.contentIndex, e.annotation)
	case "response.function_call_arguments.done":
		return s.argsDone(e.outputIndex, s.str(e.arguments))
	case "response.reasoning_summary_part.added":
		return s.summaryPart(e.outputIndex, e.summaryIndex)
	case "response.completed", "response.incomplete":
		var r wireResponse
		if err := s.decodeResponse(e.response, &r); err != nil {
			return err
		}
		if r.Status == "" {
			r.Status = "completed"
			if string(typ) == "response.incomplete" {
				r.Status = "incomplete"
			}
		}
		return s.complete(&r)
	case "response.failed":
		var r wireResponse
		if err := s.decodeResponse(e.response, &r); err != nil {
			return err
		}
		return s.failed(&r)
	case "error":
		return s.streamError(data)
	}
	// Every other event (content_part.added, progress of built-in tools,
	// the .done events of summaries, ...) repeats what other events carry.
	return nil
}

// decode reads a nested object of an event; a missing one is an error.
func (s *streamReader) decode(raw []byte, v any, what string) error {
	if raw == nil {
		return s.m.malformed(fmt.Sprintf("a stream event lacks its %s", what))
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return s.m.malformed(fmt.Sprintf("a stream event's %s does not decode: %v", what, err))
	}
	return nil
}

// decodeResponse reads the response object of a lifecycle event.
func (s *streamReader) decodeResponse(raw []byte, r *wireResponse) error {
	if raw == nil {
		return s.m.malformed("a stream event lacks its response")
	}
	if err := parseResponse(raw, r); err != nil {
		return s.m.malformed("a stream event's response does not decode: " + err.Error())
	}
	return nil
}

// streamError is the error of an error event.
func (s *streamReader) streamError(data []byte) error {
	we, ok := adapter.ParseError(data)
	if !ok {
		we = wireError{Message: httpx.Snippet(data)}
	}
	return s.m.inBandError(we, 200)
}

// failed is the error of a failed response.
func (s *streamReader) failed(r *wireResponse) error {
	we := wireError{Message: "the response failed"}
	if !adapter.IsNull(r.Error) {
		we = adapter.ErrorValue(bytes.TrimSpace(r.Error))
	}
	return s.m.inBandError(we, 200)
}

// begin emits EventMessageStart, once.
func (s *streamReader) begin(id, model string) {
	if s.started {
		return
	}
	s.started = true
	s.emit(llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{ID: id, Model: model}})
}

// complete ends the answer: the output items the events left unfinished
// (or never announced) from the final response, the last BlockStop, the
// usage, and EventComplete with the assembled Response.
func (s *streamReader) complete(r *wireResponse) error {
	if r.Status == "failed" {
		return s.failed(r)
	}
	s.begin(r.ID, r.Model)
	for i, raw := range r.Output {
		if i < len(s.items) && s.items[i].done {
			continue
		}
		if err := s.itemDone(i, raw); err != nil {
			return err
		}
	}
	reason := ""
	if r.IncompleteDetails != nil {
		reason = r.IncompleteDetails.Reason
	}
	s.finish = finishReason(r.Status, reason, s.refused)
	if err := s.closeOpen(); err != nil {
		return err
	}
	if r.Usage != nil {
		u := r.Usage.usage()
		s.emit(llm.Event{Type: llm.EventUsage, Usage: &u})
	}
	if r.ID != "" {
		s.asm.SetID(r.ID)
	}
	if r.Model != "" {
		s.asm.SetModel(r.Model)
	}
	s.asm.SetFinishReason(s.finish)
	resp, err := s.asm.Finish()
	if err != nil {
		return s.m.malformed(err.Error())
	}
	s.final = resp
	s.emit(llm.Event{Type: llm.EventComplete, Response: resp})
	s.q.Finish()
	return nil
}

// startBlock opens block b for output item item, closing the open one
// first.
func (s *streamReader) startBlock(b llm.Block, kind blockKind, item int) (int, error) {
	if err := s.closeOpen(); err != nil {
		return 0, err
	}
	i := s.nextBlock
	s.nextBlock++
	s.open, s.openKind, s.openItem = i, kind, item
	s.anns = s.anns[:0]
	s.emit(llm.Event{Type: llm.EventBlockStart, Index: i, Block: b})
	return i, nil
}

// closeOpen emits the open block's citations (a text block) and its
// BlockStop. A tool call whose arguments are not JSON, in an answer cut off
// by the length limit, gets no BlockStop: it was never finished, and the
// Assembler leaves it out.
func (s *streamReader) closeOpen() error {
	if s.open < 0 {
		return nil
	}
	i, kind := s.open, s.openKind
	s.open, s.openKind = -1, kindNone
	if kind == kindText {
		if st := &s.items[s.openItem]; st.kind == itemMessage && st.partsDone <= st.textPart {
			st.partsDone = st.textPart + 1
		}
		if len(s.anns) > 0 {
			anns := make([]json.RawMessage, len(s.anns))
			for j, a := range s.anns {
				anns[j] = a
			}
			cs := citations(s.asm.BlockText(i), anns)
			for j := range cs {
				s.emit(llm.Event{Type: llm.EventCitation, Index: i, Citation: &cs[j]})
			}
			s.anns = s.anns[:0]
		}
	}
	b, err := s.asm.Built(i)
	if err != nil {
		return s.m.malformed(err.Error())
	}
	if tu, ok := b.(llm.ToolUse); ok && s.finish == llm.FinishLength {
		if _, bad := tu.Malformed(); bad {
			return nil
		}
	}
	s.emit(llm.Event{Type: llm.EventBlockStop, Index: i, Block: b})
	return nil
}

// emit queues ev and records it in the Assembler.
func (s *streamReader) emit(ev llm.Event) {
	// The Assembler only rejects events for blocks never started, which
	// this reader does not produce.
	_ = s.asm.Add(ev)
	if s.keep {
		s.q.Push(ev)
	}
}

// delta emits text of the open block, of the event type typ.
func (s *streamReader) delta(typ llm.EventType, text string) {
	if text != "" {
		s.emit(llm.Event{Type: typ, Index: s.open, Delta: text})
	}
}

// fill emits what full, the whole text of the open block as a .done event
// or the finished item gives it, adds to what the deltas gave: its rest,
// when they gave a prefix of it (nothing, when they gave it all or when
// they disagree).
func (s *streamReader) fill(typ llm.EventType, full string) {
	cur := s.asm.BlockText(s.open)
	if len(full) > len(cur) && full[:len(cur)] == cur {
		s.delta(typ, full[len(cur):])
	}
}

// str turns an event string into a Go string (the one allocation a delta
// costs).
func (s *streamReader) str(j jstr) string {
	if !j.esc {
		return string(j.raw)
	}
	s.scratch = appendUnescaped(s.scratch[:0], j.raw)
	return string(s.scratch)
}

// item returns the state of output item i.
func (s *streamReader) item(i int) (*itemState, error) {
	if i < 0 || i >= maxItems {
		return nil, s.m.malformed(fmt.Sprintf("an event names output item %d", i))
	}
	for len(s.items) <= i {
		s.items = append(s.items, itemState{block: -1, textPart: -1})
	}
	return &s.items[i], nil
}
