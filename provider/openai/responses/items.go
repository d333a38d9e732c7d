package responses

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/internal/adapter"
)

// The per-item half of streamReader: how each event about an output item,
// and each finished item, becomes blocks.

// kindOf is the item kind of an item type.
func kindOf(typ string) itemKind {
	switch typ {
	case "message":
		return itemMessage
	case "function_call":
		return itemFunction
	case "reasoning":
		return itemReasoning
	}
	return itemOther
}

func (s *streamReader) decodeItem(raw []byte) (*wireItem, error) {
	var it wireItem
	if err := s.decode(raw, &it, "item"); err != nil {
		return nil, err
	}
	if it.Type == "" {
		return nil, s.m.malformed("an output item has no type")
	}
	return &it, nil
}

// itemAdded opens a function call's or a reasoning item's block; other
// items open theirs when their content arrives, or when they are done.
func (s *streamReader) itemAdded(o int, raw []byte) error {
	it, err := s.decodeItem(raw)
	if err != nil {
		return err
	}
	st, err := s.item(o)
	if err != nil {
		return err
	}
	if st.kind != itemNone {
		return s.m.malformed(fmt.Sprintf("output item %d was announced twice", o))
	}
	s.begin("", "")
	st.kind = kindOf(it.Type)
	switch st.kind {
	case itemFunction:
		if st.block, err = s.startBlock(s.toolUse(it), kindTool, o); err != nil {
			return err
		}
		s.delta(llm.EventToolInputDelta, argumentsText(it.Arguments))
	case itemReasoning:
		if st.block, err = s.startBlock(llm.Thinking{Provider: Provider, ID: it.ID}, kindThinking, o); err != nil {
			return err
		}
		s.delta(llm.EventThinkingDelta, reasoningText(it))
	}
	return nil
}

// toolUse is the block a function_call item opens: the call id pairs it
// with its result. An item without one gets its item id, or a new id.
func (s *streamReader) toolUse(it *wireItem) llm.ToolUse {
	id := it.CallID
	if id == "" {
		id = it.ID
	}
	if id == "" {
		id = "call_" + rand.Text()
	}
	return llm.ToolUse{ID: id, Name: it.Name}
}

// reasoningText is a reasoning item's thinking text: its summary parts
// joined by blank lines, or, for an item without a summary, its
// reasoning_text parts (open-weight models' servers send those).
func reasoningText(it *wireItem) string {
	parts := it.Summary
	if len(parts) == 0 {
		parts = it.Content
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0].Text
	}
	var sb strings.Builder
	for i, p := range parts {
		if i > 0 {
			sb.WriteString("\n\n")
		}
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// itemDone finishes output item o with its final state raw: what its
// events gave is completed from it (or, for an item no event announced,
// all of it is emitted), and its block closed. An item of a kind without
// a block of its own becomes an extension block holding the item.
func (s *streamReader) itemDone(o int, raw []byte) error {
	it, err := s.decodeItem(raw)
	if err != nil {
		return err
	}
	st, err := s.item(o)
	if err != nil {
		return err
	}
	if st.done {
		return nil
	}
	kind := kindOf(it.Type)
	if st.kind != itemNone && st.kind != kind {
		return s.m.malformed(fmt.Sprintf("output item %d changed its type to %q", o, it.Type))
	}
	s.begin("", "")
	st.kind = kind
	defer func() { st.done = true }()
	switch kind {
	case itemMessage:
		if s.open >= 0 && s.openItem == o && s.openKind == kindText {
			if p := st.textPart; p < len(it.Content) {
				s.finishPart(&it.Content[p])
			}
			if err := s.closeOpen(); err != nil {
				return err
			}
		}
		for p := st.partsDone; p < len(it.Content); p++ {
			if err := s.wholePart(st, o, p, &it.Content[p]); err != nil {
				return err
			}
		}
	case itemFunction:
		if st.block < 0 {
			if st.block, err = s.startBlock(s.toolUse(it), kindTool, o); err != nil {
				return err
			}
		}
		if s.open == st.block {
			s.fill(llm.EventToolInputDelta, argumentsText(it.Arguments))
			return s.closeOpen()
		}
	case itemReasoning:
		if st.block < 0 {
			if st.block, err = s.startBlock(llm.Thinking{Provider: Provider, ID: it.ID}, kindThinking, o); err != nil {
				return err
			}
		}
		if s.open != st.block {
			return s.m.malformed(fmt.Sprintf("reasoning item %d ended after other content followed it", o))
		}
		s.fill(llm.EventThinkingDelta, reasoningText(it))
		s.delta(llm.EventSignatureDelta, it.EncryptedContent)
		return s.closeOpen()
	default:
		var data bytes.Buffer
		if err := json.Compact(&data, raw); err != nil {
			return s.m.malformed("an output item does not decode: " + err.Error())
		}
		if _, err := s.startBlock(llm.Extension{Kind: kindPrefix + it.Type, Data: data.Bytes()}, kindOther, o); err != nil {
			return err
		}
		return s.closeOpen()
	}
	return nil
}

// finishPart completes the open text block from its finished part: the
// rest of its text, and its annotations when the part lists them.
func (s *streamReader) finishPart(p *wirePart) {
	text := p.Text
	if p.Type == "refusal" {
		text = p.Refusal
	}
	s.fill(llm.EventTextDelta, text)
	if len(p.Annotations) > 0 {
		s.anns = s.anns[:0]
		for _, a := range p.Annotations {
			s.anns = append(s.anns, a)
		}
	}
}

// wholePart emits content part p of message item o, whose events gave
// nothing: a text block with its text and citations, unless it is empty.
// Parts of other types (none are known) are left out.
func (s *streamReader) wholePart(st *itemState, o, p int, part *wirePart) error {
	if part.Type != "output_text" && part.Type != "refusal" {
		st.partsDone = p + 1
		return nil
	}
	if part.Text == "" && part.Refusal == "" && len(part.Annotations) == 0 {
		st.partsDone = p + 1
		return nil
	}
	if err := s.openText(st, o, p, part.Type == "refusal"); err != nil {
		return err
	}
	s.finishPart(part)
	return s.closeOpen()
}

// openText opens the text block of content part p of message item o.
func (s *streamReader) openText(st *itemState, o, p int, refusal bool) error {
	switch {
	case st.kind == itemNone:
		st.kind = itemMessage
	case st.kind != itemMessage:
		return s.m.malformed(fmt.Sprintf("text for output item %d, which is not a message", o))
	}
	if st.done || p < st.partsDone {
		return s.m.malformed(fmt.Sprintf("text for part %d of output item %d after the part ended", p, o))
	}
	s.begin("", "")
	var err error
	if st.block, err = s.startBlock(llm.Text{}, kindText, o); err != nil {
		return err
	}
	st.textPart = p
	if refusal {
		s.refused = true
	}
	return nil
}

// textBlock makes the text block of part p of item o the open block,
// opening it if its content had not started.
func (s *streamReader) textBlock(o, p int, refusal bool) error {
	st, err := s.item(o)
	if err != nil {
		return err
	}
	if s.open >= 0 && s.openItem == o && s.openKind == kindText && st.textPart == p {
		return nil
	}
	return s.openText(st, o, p, refusal)
}

func (s *streamReader) textDelta(o, p int, d jstr, refusal bool) error {
	if len(d.raw) == 0 {
		return nil
	}
	// The common case first: more text for the open block.
	if s.open < 0 || s.openItem != o || s.openKind != kindText || o >= len(s.items) || s.items[o].textPart != p {
		if err := s.textBlock(o, p, refusal); err != nil {
			return err
		}
	}
	s.emit(llm.Event{Type: llm.EventTextDelta, Index: s.open, Delta: s.str(d)})
	return nil
}

func (s *streamReader) textDone(o, p int, full string, refusal bool) error {
	if full == "" {
		return nil
	}
	st, err := s.item(o)
	if err != nil {
		return err
	}
	if !(s.open >= 0 && s.openItem == o && s.openKind == kindText && st.textPart == p) {
		if st.done || p < st.partsDone {
			return nil
		}
		if err := s.openText(st, o, p, refusal); err != nil {
			return err
		}
	}
	s.fill(llm.EventTextDelta, full)
	return nil
}

func (s *streamReader) annotation(o, p int, raw []byte) error {
	if raw == nil {
		return nil
	}
	st, err := s.item(o)
	if err != nil {
		return err
	}
	if st.done || p < st.partsDone {
		return nil // late: the finished part listed its annotations
	}
	if err := s.textBlock(o, p, false); err != nil {
		return err
	}
	s.anns = append(s.anns, bytes.Clone(raw))
	return nil
}

// partDone finishes content part p of message item o.
func (s *streamReader) partDone(o, p int, raw []byte) error {
	var part wirePart
	if err := s.decode(raw, &part, "part"); err != nil {
		return err
	}
	st, err := s.item(o)
	if err != nil {
		return err
	}
	if s.open >= 0 && s.openItem == o && s.openKind == kindText && st.textPart == p {
		s.finishPart(&part)
		return s.closeOpen()
	}
	if st.done || p < st.partsDone {
		return nil
	}
	return s.wholePart(st, o, p, &part)
}

func (s *streamReader) argsDelta(o int, d jstr) error {
	if len(d.raw) == 0 {
		return nil
	}
	st, err := s.item(o)
	if err != nil {
		return err
	}
	if st.kind != itemFunction || s.open != st.block || st.block < 0 {
		return s.m.malformed(fmt.Sprintf("arguments for output item %d, which is not an open function call", o))
	}
	s.emit(llm.Event{Type: llm.EventToolInputDelta, Index: s.open, Delta: s.str(d)})
	return nil
}

func (s *streamReader) argsDone(o int, full string) error {
	st, err := s.item(o)
	if err != nil {
		return err
	}
	if st.kind == itemFunction && st.block >= 0 && s.open == st.block {
		s.fill(llm.EventToolInputDelta, full)
	}
	return nil
}

// reasoningBlock checks that item o is a reasoning item whose block is
// open.
func (s *streamReader) reasoningBlock(o int) (*itemState, error) {
	st, err := s.item(o)
	if err != nil {
		return nil, err
	}
	if st.kind != itemReasoning || st.block < 0 || s.open != st.block {
		return nil, s.m.malformed(fmt.Sprintf("reasoning for output item %d, which is not an open reasoning item", o))
	}
	return st, nil
}

// summaryPart begins summary part i of a reasoning item: parts after the
// first are set apart by a blank line, as reasoningText joins them.
func (s *streamReader) summaryPart(o, i int) error {
	st, err := s.reasoningBlock(o)
	if err != nil {
		return err
	}
	s.advance(&st.summaries, i)
	return nil
}

// advance begins parts up to i, counted by n.
func (s *streamReader) advance(n *int, i int) {
	for ; *n <= i && *n < maxItems; *n++ {
		if *n > 0 {
			s.delta(llm.EventThinkingDelta, "\n\n")
		}
	}
}

// thinkingDelta appends to a reasoning item's text: to summary part i, or
// (content true) to reasoning_text part i.
func (s *streamReader) thinkingDelta(o, i int, d jstr, content bool) error {
	if len(d.raw) == 0 {
		return nil
	}
	st, err := s.reasoningBlock(o)
	if err != nil {
		return err
	}
	if content {
		s.advance(&st.contents, i)
	} else {
		s.advance(&st.summaries, i)
	}
	s.emit(llm.Event{Type: llm.EventThinkingDelta, Index: s.open, Delta: s.str(d)})
	return nil
}

// decodeResponse maps a non-streamed response body to a Response: its
// output items go through the same reader a stream's events do, so both
// paths build alike.
func (m *Model) decodeResponse(data []byte, status int) (*llm.Response, error) {
	var r wireResponse
	if err := parseResponse(data, &r); err != nil {
		return nil, m.malformed("the response is not a Responses API response: " + err.Error())
	}
	if r.Status == "" && !adapter.IsNull(r.Error) {
		// An error document in place of a response.
		we, _ := adapter.ParseError(data)
		return nil, m.inBandError(we, status)
	}
	if r.Status == "" && r.ID == "" && len(r.Output) == 0 {
		return nil, m.malformed(fmt.Sprintf("the response holds no response object: %.200q", data))
	}
	if r.Status == "" {
		r.Status = "completed"
	}
	s := &streamReader{m: m, open: -1}
	if err := s.complete(&r); err != nil {
		return nil, err
	}
	return s.final, nil
}
