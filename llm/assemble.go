package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Assembler builds a Response from stream events. Adapters feed it the
// events they yield and call Finish at the end, so every adapter assembles
// the same way. Text is accumulated in a builder per block, so the cost per
// delta does not grow with the answer's length. The zero value is ready.
type Assembler struct {
	resp   Response
	blocks []partialBlock
}

type partialBlock struct {
	started bool
	kind    string // block type tag
	text    strings.Builder
	sig     strings.Builder
	start   Block // ToolUse{ID, Name}, RedactedThinking, other whole blocks
	cites   []Citation
}

// Add records one event. It returns an error for a delta whose block was
// never started or whose kind does not match.
func (a *Assembler) Add(ev Event) error {
	switch ev.Type {
	case EventMessageStart:
		if ev.Response != nil {
			if ev.Response.ID != "" {
				a.resp.ID = ev.Response.ID
			}
			if ev.Response.Model != "" {
				a.resp.Model = ev.Response.Model
			}
		}
	case EventBlockStart:
		if ev.Index < 0 || ev.Index > 1<<16 {
			return fmt.Errorf("llm: block index %d out of range", ev.Index)
		}
		for len(a.blocks) <= ev.Index {
			a.blocks = append(a.blocks, partialBlock{})
		}
		p := &a.blocks[ev.Index]
		if p.started {
			return fmt.Errorf("llm: block %d started twice", ev.Index)
		}
		p.started = true
		if ev.Block == nil {
			return fmt.Errorf("llm: block %d started without a block", ev.Index)
		}
		p.kind = ev.Block.BlockType()
		p.start = ev.Block
		switch b := ev.Block.(type) {
		case Text:
			p.text.WriteString(b.Text)
			p.cites = append(p.cites, b.Citations...)
		case Thinking:
			p.text.WriteString(b.Text)
			p.sig.WriteString(b.Signature)
		case ToolUse:
			p.text.Write(b.Input)
		}
	case EventCitation:
		p, err := a.block(ev.Index)
		if err != nil {
			return err
		}
		if p.kind != TypeText || ev.Citation == nil {
			return fmt.Errorf("llm: a citation for a %s block %d", p.kind, ev.Index)
		}
		p.cites = append(p.cites, *ev.Citation)
	case EventTextDelta, EventThinkingDelta, EventSignatureDelta, EventToolInputDelta:
		p, err := a.block(ev.Index)
		if err != nil {
			return err
		}
		want := TypeText
		switch ev.Type {
		case EventThinkingDelta, EventSignatureDelta:
			want = TypeThinking
		case EventToolInputDelta:
			want = TypeToolUse
		}
		if p.kind != want {
			return fmt.Errorf("llm: %s for a %s block %d", ev.Type, p.kind, ev.Index)
		}
		if ev.Type == EventSignatureDelta {
			p.sig.WriteString(ev.Delta)
		} else {
			p.text.WriteString(ev.Delta)
		}
	case EventBlockStop:
		if _, err := a.block(ev.Index); err != nil {
			return err
		}
	case EventUsage:
		if ev.Usage != nil {
			a.resp.Usage = *ev.Usage
		}
	}
	return nil
}

func (a *Assembler) block(i int) (*partialBlock, error) {
	if i < 0 || i >= len(a.blocks) || !a.blocks[i].started {
		return nil, fmt.Errorf("llm: event for block %d that was never started", i)
	}
	return &a.blocks[i], nil
}

// SetID sets the response id.
func (a *Assembler) SetID(id string) { a.resp.ID = id }

// SetModel sets the answering model's name.
func (a *Assembler) SetModel(m string) { a.resp.Model = m }

// SetUsage replaces the usage.
func (a *Assembler) SetUsage(u Usage) { a.resp.Usage = u }

// Usage returns the usage recorded so far.
func (a *Assembler) Usage() Usage { return a.resp.Usage }

// SetFinishReason sets the finish reason.
func (a *Assembler) SetFinishReason(f FinishReason) { a.resp.FinishReason = f }

// BlockText returns the text accumulated so far for block i (for a tool
// use, its partial input).
func (a *Assembler) BlockText(i int) string {
	if i < 0 || i >= len(a.blocks) {
		return ""
	}
	return a.blocks[i].text.String()
}

// Built returns block i as it stands now (a ToolUse with the input gathered
// so far). Adapters use it to fill EventBlockStop.Block.
func (a *Assembler) Built(i int) (Block, error) {
	p, err := a.block(i)
	if err != nil {
		return nil, err
	}
	return p.build()
}

func (p *partialBlock) build() (Block, error) {
	switch s := p.start.(type) {
	case Text:
		return Text{Text: p.text.String(), Citations: p.cites}, nil
	case Thinking:
		return Thinking{Text: p.text.String(), Signature: p.sig.String(), Provider: s.Provider, ID: s.ID}, nil
	case ToolUse:
		in := strings.TrimSpace(p.text.String())
		if in == "" {
			in = "{}"
		}
		tu := ToolUse{ID: s.ID, Name: s.Name, Input: json.RawMessage(in), Signature: s.Signature, Provider: s.Provider}
		if !json.Valid([]byte(in)) {
			tu.Input = MalformedInput(s.ID, s.Name, in).Input
		}
		return tu, nil
	default:
		return p.start, nil
	}
}

// Finish builds the Response: the assistant message from every started
// block in index order. A tool call whose arguments are not valid JSON is
// kept with its text (see [ToolUse]), except when the finish reason is
// FinishLength: then the call was cut off and is dropped. If the finish
// reason was not set it is
// FinishToolUse when the message holds tool calls, else FinishStop.
func (a *Assembler) Finish() (*Response, error) {
	resp := a.resp
	resp.Message = Message{Role: RoleAssistant}
	if n := len(a.blocks); n > 0 {
		resp.Message.Content = make([]Block, 0, n)
	}
	for i := range a.blocks {
		p := &a.blocks[i]
		if !p.started {
			continue
		}
		b, err := p.build()
		if err != nil {
			return nil, err
		}
		// A response cut off by the length limit may end inside a tool
		// call's arguments; such a call was never finished, so it is
		// dropped. Malformed arguments of a finished answer stay (see
		// ToolUse): the invoker tells the model what was wrong.
		if tu, isTool := b.(ToolUse); isTool && resp.FinishReason == FinishLength {
			if _, bad := tu.Malformed(); bad {
				continue
			}
		}
		resp.Message.Content = append(resp.Message.Content, b)
	}
	if resp.FinishReason == "" {
		resp.FinishReason = FinishStop
		if resp.Message.HasToolUse() {
			resp.FinishReason = FinishToolUse
		}
	}
	return &resp, nil
}
