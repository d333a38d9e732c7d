package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/internal/sse"
	"github.com/agcore/agcore/llm"
)

// maxBlocks bounds the content-block index a stream may use, so a hostile
// index cannot make the adapter allocate without limit.
const maxBlocks = 1 << 16

// streamState turns Messages API stream events into llm events and
// assembles the Response with an llm.Assembler.
type streamState struct {
	ctx       context.Context
	requestID string
	transport *httpx.Client // redacts the key from in-band errors

	asm     llm.Assembler
	blocks  []blockState
	usage   usageCounts
	finish  llm.FinishReason
	ev      wireEvent // reused for events the fast path does not take
	scratch []byte    // unescape buffer of the fast path
	// slow turns the hand-written delta decoder off (Model.slowPath), so
	// benchmarks and differential tests can compare with encoding/json.
	slow bool
	// completed is set once message_stop was handled.
	completed bool
	// held is the BlockStop of a tool call whose arguments are not valid
	// JSON, kept back until the stop reason can tell whether max_tokens
	// cut the call off (then it is dropped, never announced) or the model
	// sent it that way (then it is announced before the next block or the
	// end; the invoker answers it with an error result).
	held *llm.Event
}

// flushHeld announces a held BlockStop, unless the answer was cut off by
// max_tokens. It returns false when the consumer stopped.
func (s *streamState) flushHeld(yield func(llm.Event, error) bool) bool {
	ev := s.held
	if ev == nil {
		return true
	}
	s.held = nil
	if s.finish == llm.FinishLength {
		return true
	}
	s.asm.Add(*ev)
	return yield(*ev, nil)
}

type blockKind uint8

const (
	blockNone blockKind = iota
	blockText
	blockThinking
	blockRedacted
	blockTool
	blockExtension
)

type blockState struct {
	kind    blockKind
	stopped bool
	// tool_use: the input given at the start, when it is not "{}" (the API
	// sends {} there and the input in deltas; a non-empty one is used only
	// if no delta carries input).
	startInput json.RawMessage
	sawInput   bool
	// extension: the whole block as it started, and what deltas add.
	ext *extensionBlock
}

// run reads the stream to its end, yielding events; it returns after the
// final event, after an error was yielded, or when yield returns false.
func (s *streamState) run(dec *sse.Decoder, yield func(llm.Event, error) bool) {
	for {
		ev, err := dec.Next()
		if err != nil {
			if errors.Is(err, io.EOF) && s.ctx.Err() == nil {
				e := llm.IncompleteStream(providerName, "message_stop")
				e.StatusCode, e.RequestID = 200, s.requestID
				err = e
			} else {
				err = s.transport.Redact(httpx.TransportError(s.ctx, providerName, err))
			}
			yield(llm.Event{}, err)
			return
		}
		more, err := s.step(ev.Type, ev.Data, yield)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if !more {
			return
		}
	}
}

// malformed is the error for data that does not parse or breaks the
// protocol.
func (s *streamState) malformed(format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.KindMalformed, Provider: providerName, StatusCode: 200, RequestID: s.requestID,
		Message: fmt.Sprintf(format, args...)}
}

// step handles one SSE event. It returns false when the stream is over
// (the final event was yielded, or the consumer stopped).
func (s *streamState) step(typ string, data []byte, yield func(llm.Event, error) bool) (bool, error) {
	if !s.slow && typ != "message_start" && typ != "message_delta" && typ != "content_block_start" {
		ev, buf, ok := decodeFast(data, s.scratch)
		s.scratch = buf
		if ok {
			switch ev.typ {
			case fastDelta:
				return s.delta(ev.index, ev.kind, ev.text, yield)
			case fastBlockStop:
				return s.blockStop(ev.index, yield)
			case fastMessageStop:
				return false, s.complete(yield)
			}
			return true, nil // ping
		}
	}
	s.ev = wireEvent{}
	if err := json.Unmarshal(data, &s.ev); err != nil {
		e := s.malformed("cannot decode a %s event: %v", typ, err)
		e.Err = err
		return false, e
	}
	switch s.ev.Type {
	case "message_start":
		return s.messageStart(yield)
	case "content_block_start":
		return s.blockStart(yield)
	case "content_block_delta":
		d := &s.ev.Delta
		switch d.Type {
		case "text_delta":
			return s.delta(s.ev.Index, deltaText, d.Text, yield)
		case "thinking_delta":
			return s.delta(s.ev.Index, deltaThinking, d.Thinking, yield)
		case "input_json_delta":
			return s.delta(s.ev.Index, deltaInput, d.PartialJSON, yield)
		case "signature_delta":
			return s.delta(s.ev.Index, deltaSignature, d.Signature, yield)
		}
		b, err := s.block(s.ev.Index)
		if err != nil {
			return false, err
		}
		if b.ext != nil {
			b.ext.addOther(d)
			return true, nil
		}
		if d.Type == "citations_delta" && d.Citation != nil && b.kind == blockText {
			c := d.Citation.citation()
			ev := llm.Event{Type: llm.EventCitation, Index: s.ev.Index, Citation: &c}
			if err := s.asm.Add(ev); err != nil {
				return false, s.malformed("%v", err)
			}
			return yield(ev, nil), nil
		}
		return true, nil // unknown deltas carry nothing agcore keeps
	case "content_block_stop":
		return s.blockStop(s.ev.Index, yield)
	case "message_delta":
		if r := s.ev.Delta.StopReason; r != "" {
			s.finish = finishReason(r)
		}
		if s.ev.Usage != nil {
			s.usage.merge(s.ev.Usage)
		}
		return true, nil
	case "message_stop":
		return false, s.complete(yield)
	case "error":
		return false, s.inBandError()
	}
	return true, nil // ping and event types added later
}

func (s *streamState) messageStart(yield func(llm.Event, error) bool) (bool, error) {
	msg := s.ev.Message
	if msg == nil {
		return false, s.malformed("message_start without a message")
	}
	s.usage.merge(&msg.Usage)
	ev := llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{ID: msg.ID, Model: msg.Model}}
	if err := s.asm.Add(ev); err != nil {
		return false, s.malformed("%v", err)
	}
	return yield(ev, nil), nil
}

// block returns the state of a started block.
func (s *streamState) block(i int) (*blockState, error) {
	if i < 0 || i >= len(s.blocks) || s.blocks[i].kind == blockNone {
		return nil, s.malformed("event for content block %d, which was never started", i)
	}
	if s.blocks[i].stopped {
		return nil, s.malformed("event for content block %d after its stop", i)
	}
	return &s.blocks[i], nil
}

func (s *streamState) blockStart(yield func(llm.Event, error) bool) (bool, error) {
	i := s.ev.Index
	if i < 0 || i >= maxBlocks {
		return false, s.malformed("content block index %d out of range", i)
	}
	for len(s.blocks) <= i {
		s.blocks = append(s.blocks, blockState{})
	}
	b := &s.blocks[i]
	if b.kind != blockNone {
		return false, s.malformed("content block %d started twice", i)
	}
	if !s.flushHeld(yield) {
		return false, nil
	}
	var c wireContent
	if err := json.Unmarshal(s.ev.ContentBlock, &c); err != nil || c.Type == "" {
		return false, s.malformed("content_block_start %d has no valid content_block", i)
	}
	var block llm.Block
	switch c.Type {
	case "text":
		b.kind, block = blockText, llm.Text{Text: c.Text, Citations: citations(c.Citations)}
	case "thinking":
		b.kind, block = blockThinking, llm.Thinking{Text: c.Thinking, Signature: c.Signature}
	case "redacted_thinking":
		b.kind, block = blockRedacted, llm.RedactedThinking{Data: c.Data}
	case "tool_use":
		b.kind, block = blockTool, llm.ToolUse{ID: c.ID, Name: c.Name}
		if in := bytes.TrimSpace(c.Input); len(in) > 0 && !isEmptyObject(in) && string(in) != "null" {
			b.startInput = in
		}
	default:
		// Server-tool blocks, compaction and block types added later are
		// kept whole as extensions; they are announced at their stop, once
		// their deltas are gathered.
		b.kind = blockExtension
		b.ext = &extensionBlock{kind: c.Type, start: bytes.Clone(s.ev.ContentBlock)}
		return true, nil
	}
	ev := llm.Event{Type: llm.EventBlockStart, Index: i, Block: block}
	if err := s.asm.Add(ev); err != nil {
		return false, s.malformed("%v", err)
	}
	return yield(ev, nil), nil
}

func isEmptyObject(b []byte) bool {
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return false
	}
	return len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}

// delta handles a text, thinking, signature or tool-input delta.
func (s *streamState) delta(i int, kind deltaKind, text string, yield func(llm.Event, error) bool) (bool, error) {
	b, err := s.block(i)
	if err != nil {
		return false, err
	}
	if b.ext != nil {
		b.ext.add(kind, text)
		return true, nil
	}
	if text == "" {
		return true, nil // an empty delta (the first partial_json often is) carries nothing
	}
	var typ llm.EventType
	switch kind {
	case deltaText:
		typ = llm.EventTextDelta
	case deltaThinking:
		typ = llm.EventThinkingDelta
	case deltaSignature:
		typ = llm.EventSignatureDelta
	case deltaInput:
		typ = llm.EventToolInputDelta
		b.sawInput = true
	default:
		return true, nil
	}
	ev := llm.Event{Type: typ, Index: i, Delta: text}
	if err := s.asm.Add(ev); err != nil {
		return false, s.malformed("%v", err)
	}
	return yield(ev, nil), nil
}

func (s *streamState) blockStop(i int, yield func(llm.Event, error) bool) (bool, error) {
	b, err := s.block(i)
	if err != nil {
		return false, err
	}
	if b.kind == blockTool && !b.sawInput && b.startInput != nil {
		// The whole input came with the start and no delta followed.
		if more, err := s.delta(i, deltaInput, string(b.startInput), yield); !more || err != nil {
			return more, err
		}
	}
	b.stopped = true
	if !s.flushHeld(yield) {
		return false, nil
	}
	if b.ext != nil {
		ext := b.ext.build()
		b.ext = nil
		start := llm.Event{Type: llm.EventBlockStart, Index: i, Block: ext}
		if err := s.asm.Add(start); err != nil {
			return false, s.malformed("%v", err)
		}
		if !yield(start, nil) {
			return false, nil
		}
		stop := llm.Event{Type: llm.EventBlockStop, Index: i, Block: ext}
		s.asm.Add(stop)
		return yield(stop, nil), nil
	}
	built, err := s.asm.Built(i)
	if err != nil {
		return false, s.malformed("%v", err)
	}
	ev := llm.Event{Type: llm.EventBlockStop, Index: i, Block: built}
	if tu, ok := built.(llm.ToolUse); ok {
		if _, bad := tu.Malformed(); bad {
			// Cut off by max_tokens, or sent that way: message_delta's
			// stop reason, which comes later, tells (see held).
			s.held = &ev
			return true, nil
		}
	}
	s.asm.Add(ev)
	return yield(ev, nil), nil
}

// complete yields the usage and the final event.
func (s *streamState) complete(yield func(llm.Event, error) bool) error {
	s.completed = true
	if !s.flushHeld(yield) {
		return nil
	}
	u := s.usage.result()
	ev := llm.Event{Type: llm.EventUsage, Usage: &u}
	s.asm.Add(ev)
	if !yield(ev, nil) {
		return nil
	}
	if s.finish != "" {
		s.asm.SetFinishReason(s.finish)
	}
	resp, err := s.asm.Finish()
	if err != nil {
		return s.malformed("%v", err)
	}
	yield(llm.Event{Type: llm.EventComplete, Response: resp}, nil)
	return nil
}

// inBandError types an "error" event sent after HTTP 200.
func (s *streamState) inBandError() error {
	e := &llm.Error{Kind: llm.KindServer, Provider: providerName, StatusCode: 200, RequestID: s.requestID}
	if we := s.ev.Error; we != nil {
		e.Code, e.Message = we.Type, we.Message
		e.Kind = kindForType(we.Type, we.Message, llm.KindServer)
	}
	if e.Message == "" {
		e.Message = "error event in the stream"
	}
	s.transport.Redact(e)
	return e
}

// finishReason maps Anthropic's stop_reason.
func finishReason(r string) llm.FinishReason {
	switch r {
	case "end_turn", "stop_sequence":
		return llm.FinishStop
	case "max_tokens", "model_context_window_exceeded":
		return llm.FinishLength
	case "tool_use":
		return llm.FinishToolUse
	case "refusal":
		return llm.FinishRefusal
	case "":
		return ""
	}
	return llm.FinishUnknown // pause_turn and reasons added later
}

// usageCounts merges usage reports. Counts a report carries replace earlier
// ones (message_delta's are cumulative); iterations, when reported, are the
// billed steps and are summed instead.
type usageCounts struct {
	in, out, cacheWrite, cacheRead int
	iterations                     []wireUsageCount
}

func (u *usageCounts) merge(w *wireUsage) {
	if w.InputTokens != nil {
		u.in = *w.InputTokens
	}
	if w.OutputTokens != nil {
		u.out = *w.OutputTokens
	}
	if w.CacheCreationInputTokens != nil {
		u.cacheWrite = *w.CacheCreationInputTokens
	}
	if w.CacheReadInputTokens != nil {
		u.cacheRead = *w.CacheReadInputTokens
	}
	if len(w.Iterations) > 0 {
		u.iterations = w.Iterations
	}
}

func (u *usageCounts) result() llm.Usage {
	if len(u.iterations) > 0 {
		var r llm.Usage
		for _, it := range u.iterations {
			r.Add(usageOf(it.InputTokens, it.OutputTokens, it.CacheCreationInputTokens, it.CacheReadInputTokens))
		}
		return r
	}
	return usageOf(u.in, u.out, u.cacheWrite, u.cacheRead)
}

func usageOf(in, out, cacheWrite, cacheRead int) llm.Usage {
	return llm.Usage{
		InputTokens:         in + cacheWrite + cacheRead,
		OutputTokens:        out,
		CachedInputTokens:   cacheRead,
		CacheCreationTokens: cacheWrite,
	}
}

// extensionBlock gathers a block of a type agcore has no block for. Input
// deltas fill its "input", compaction deltas its "content".
type extensionBlock struct {
	kind    string
	start   json.RawMessage
	input   strings.Builder
	content strings.Builder
	hasText bool
}

func (e *extensionBlock) add(kind deltaKind, text string) {
	if kind == deltaInput {
		e.input.WriteString(text)
	}
}

func (e *extensionBlock) addOther(d *wireDelta) {
	var s string
	if d.Type == "compaction_delta" && json.Unmarshal(d.Content, &s) == nil {
		e.content.WriteString(s)
		e.hasText = true
	}
}

// build returns the block as an llm.Extension holding its whole JSON.
func (e *extensionBlock) build() llm.Extension {
	ext := llm.Extension{Kind: e.kind, Data: e.start}
	in := strings.TrimSpace(e.input.String())
	if in == "" && !e.hasText {
		return ext
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(e.start, &obj) != nil {
		return ext
	}
	if in != "" && json.Valid([]byte(in)) {
		obj["input"] = json.RawMessage(in)
	}
	if e.hasText {
		obj["content"], _ = httpx.MarshalJSON(e.content.String())
	}
	if data, err := httpx.MarshalJSON(obj); err == nil {
		ext.Data = data
	}
	return ext
}
