package serve

import (
	"bytes"
	"container/list"
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/internal/jsonw"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/runlog"
)

// responseObject is the Responses API's Response.
type responseObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Model              string            `json:"model"`
	Output             []*outputItem     `json:"output"`
	Usage              *responseUsage    `json:"usage"`
	Error              *responseError    `json:"error"`
	IncompleteDetails  any               `json:"incomplete_details"`
	Instructions       *string           `json:"instructions"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Conversation       *conversationRef  `json:"conversation,omitempty"`
	Store              bool              `json:"store"`
	Background         bool              `json:"background"`
	ParallelToolCalls  bool              `json:"parallel_tool_calls"`
	ToolChoice         string            `json:"tool_choice"`
	Tools              []any             `json:"tools"`
	Metadata           map[string]string `json:"metadata"`
	Temperature        *float64          `json:"temperature"`
	Text               struct {
		Format struct {
			Type string `json:"type"`
		} `json:"format"`
	} `json:"text"`
}

type conversationRef struct {
	ID string `json:"id"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type responseUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
	// Budget extends the object: what is left of the turn's spending
	// limits (run, session, the principal's quota), when it has any.
	Budget *budget.Remaining `json:"budget,omitempty"`
}

func responseUsageOf(u llm.Usage) *responseUsage {
	r := &responseUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
	r.InputTokensDetails.CachedTokens = u.CachedInputTokens
	r.OutputTokensDetails.ReasoningTokens = u.ReasoningTokens
	return r
}

// outputItem is one output item: a message, a reasoning item, a function
// call or a function call's output.
type outputItem struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Status    string         `json:"status,omitempty"`
	Role      string         `json:"role,omitempty"`
	Content   *[]contentOut  `json:"content,omitempty"`
	Summary   *[]summaryPart `json:"summary,omitempty"`
	CallID    string         `json:"call_id,omitempty"`
	Name      string         `json:"name,omitempty"`
	Arguments *string        `json:"arguments,omitempty"`
	Output    *string        `json:"output,omitempty"`
	// Agent (agcore's extension) names the agent that produced the item,
	// in a turn that handed off or ran sub-agents; ParentCallID is, for a
	// sub-agent's item, the id of the function call that ran it.
	Agent        string `json:"agent,omitempty"`
	ParentCallID string `json:"parent_call_id,omitempty"`
}

type contentOut struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations"`
	Logprobs    []any  `json:"logprobs"`
}

type summaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// respSink builds the response's output from a turn's updates and, when
// streaming, sends the Responses event family as it goes.
type respSink struct {
	obj *responseObject
	sse *sse
	log *runlog.Writer // a background turn's events
	// attached is a background turn's own client, while it stays.
	attached *attachedClient
	seq      int
	open     int    // index of the open message or reasoning item, -1 for none
	buf      []byte // the open item's text
	agent    string // the agent answering, once the turn has handed off
	// collect, when set, receives the events instead of a stream or a
	// log (a turn run elsewhere: ResponseEvents); ids, when set, makes
	// the items' ids instead of newID (deterministic there).
	collect func(runlog.Event)
	ids     func(prefix string) string
	// enc is the buffer a stream's events are encoded in, reused; js
	// encodes the events built as maps into jsBuf.
	enc   []byte
	js    *json.Encoder
	jsBuf bytes.Buffer
}

// newID returns a new id for an item: newID's, or the sink's own.
func (s *respSink) newID(prefix string) string {
	if s.ids != nil {
		return s.ids(prefix)
	}
	return newID(prefix)
}

// add appends an item to the output, marked with the agent answering.
func (s *respSink) add(it *outputItem) int {
	if it.Agent == "" {
		it.Agent = s.agent
	}
	s.obj.Output = append(s.obj.Output, it)
	return len(s.obj.Output) - 1
}

// streams reports whether s sends its events anywhere.
func (s *respSink) streams() bool { return s.sse != nil || s.log != nil || s.collect != nil }

// emit sends one event with its type and sequence number, its fields
// encoded once (as encoding/json's Marshal does); without a stream it
// does nothing.
func (s *respSink) emit(typ string, fields map[string]any) error {
	if !s.streams() {
		return nil
	}
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	if s.js == nil {
		s.js = json.NewEncoder(&s.jsBuf)
	}
	s.jsBuf.Reset()
	if err := s.js.Encode(fields); err != nil {
		return err
	}
	data := bytes.TrimSuffix(s.jsBuf.Bytes(), []byte{'\n'})
	return s.put(typ, func(b []byte) []byte { return append(b, data...) })
}

// emitResponse sends an event whose field is the response, body: the
// response object already encoded (not encoded again, nor compacted).
func (s *respSink) emitResponse(typ string, body []byte) error {
	if !s.streams() {
		return nil
	}
	seq := int64(s.seq)
	return s.put(typ, func(b []byte) []byte { return appendResponseEvent(b, typ, seq, body) })
}

// put sends the event s.seq of type typ, whose data (JSON, holding that
// number) enc appends to the slice it is given. It is encoded once: into
// the event log's buffer for a background turn, whose bytes its attached
// client gets as they are; into a buffer reused from event to event for a
// stream; into its own slice for a collector, which keeps it.
func (s *respSink) put(typ string, enc func([]byte) []byte) error {
	seq := s.seq
	s.seq++
	switch {
	case s.collect != nil:
		s.collect(runlog.Event{Seq: int64(seq), Type: typ, Data: enc(nil)})
		return nil
	case s.log != nil:
		data := s.log.AppendFunc(int64(seq), typ, enc)
		if data == nil { // the log is closed (not while the turn runs)
			s.enc = enc(s.enc[:0])
			data = s.enc
		}
		s.attached.send(typ, data)
		return nil
	}
	s.enc = enc(s.enc[:0])
	return s.sse.write(typ, s.enc)
}

// delta sends a text or reasoning delta of the open item, encoded by
// hand (the events of a turn are mostly these): the members in the
// order encoding/json gives a map's, the strings as internal/jsonw
// writes them.
func (s *respSink) delta(typ, delta string) error {
	if !s.streams() {
		return nil
	}
	id, idx, seq := s.obj.Output[s.open].ID, int64(s.open), int64(s.seq)
	reasoning := typ == "response.reasoning_summary_text.delta"
	return s.put(typ, func(b []byte) []byte {
		if !reasoning {
			b = append(b, `{"content_index":0,"delta":`...)
		} else {
			b = append(b, `{"delta":`...)
		}
		b = jsonw.AppendString(b, delta)
		b = append(b, `,"item_id":`...)
		b = jsonw.AppendString(b, id)
		if !reasoning {
			b = append(b, `,"logprobs":[]`...)
		}
		b = append(b, `,"output_index":`...)
		b = strconv.AppendInt(b, idx, 10)
		b = append(b, `,"sequence_number":`...)
		b = strconv.AppendInt(b, seq, 10)
		if reasoning {
			b = append(b, `,"summary_index":0`...)
		}
		b = append(b, `,"type":"`...)
		b = append(b, typ...) // an ASCII word
		return append(b, `"}`...)
	})
}

// openItem starts an item of typ ("message" or "reasoning") unless one is
// open already.
func (s *respSink) openItem(typ string) error {
	if s.open >= 0 && s.obj.Output[s.open].Type == typ {
		return nil
	}
	if err := s.close(); err != nil {
		return err
	}
	it := &outputItem{Type: typ, Status: "in_progress"}
	idx := s.add(it)
	s.open, s.buf = idx, s.buf[:0]
	if typ == "message" {
		it.ID, it.Role, it.Content = s.newID("msg_"), "assistant", &[]contentOut{}
		if err := s.emit("response.output_item.added", map[string]any{"output_index": idx, "item": it}); err != nil {
			return err
		}
		return s.emit("response.content_part.added", map[string]any{"item_id": it.ID, "output_index": idx, "content_index": 0,
			"part": contentOut{Type: "output_text", Annotations: []any{}, Logprobs: []any{}}})
	}
	it.ID, it.Summary, it.Status = s.newID("rs_"), &[]summaryPart{}, ""
	if err := s.emit("response.output_item.added", map[string]any{"output_index": idx, "item": it}); err != nil {
		return err
	}
	return s.emit("response.reasoning_summary_part.added", map[string]any{"item_id": it.ID, "output_index": idx, "summary_index": 0,
		"part": summaryPart{Type: "summary_text"}})
}

// close finishes the open item, if any.
func (s *respSink) close() error {
	if s.open < 0 {
		return nil
	}
	idx, it := s.open, s.obj.Output[s.open]
	s.open = -1
	text := string(s.buf)
	if it.Type == "message" {
		part := contentOut{Type: "output_text", Text: text, Annotations: []any{}, Logprobs: []any{}}
		*it.Content = append(*it.Content, part)
		it.Status = "completed"
		if err := s.emit("response.output_text.done", map[string]any{"item_id": it.ID, "output_index": idx, "content_index": 0, "text": text, "logprobs": []any{}}); err != nil {
			return err
		}
		if err := s.emit("response.content_part.done", map[string]any{"item_id": it.ID, "output_index": idx, "content_index": 0, "part": part}); err != nil {
			return err
		}
		return s.emit("response.output_item.done", map[string]any{"output_index": idx, "item": it})
	}
	part := summaryPart{Type: "summary_text", Text: text}
	*it.Summary = append(*it.Summary, part)
	if err := s.emit("response.reasoning_summary_text.done", map[string]any{"item_id": it.ID, "output_index": idx, "summary_index": 0, "text": text}); err != nil {
		return err
	}
	if err := s.emit("response.reasoning_summary_part.done", map[string]any{"item_id": it.ID, "output_index": idx, "summary_index": 0, "part": part}); err != nil {
		return err
	}
	return s.emit("response.output_item.done", map[string]any{"output_index": idx, "item": it})
}

func (s *respSink) text(delta string) error {
	if err := s.openItem("message"); err != nil {
		return err
	}
	s.buf = append(s.buf, delta...)
	return s.delta("response.output_text.delta", delta)
}

// thinking is shown as a reasoning item's summary text.
func (s *respSink) thinking(delta string) error {
	if err := s.openItem("reasoning"); err != nil {
		return err
	}
	s.buf = append(s.buf, delta...)
	return s.delta("response.reasoning_summary_text.delta", delta)
}

// toolCall adds a function_call item: completed for a call the server
// runs (its function_call_output follows), in progress for one of the
// client's declared tools, which the client answers in its next request.
func (s *respSink) toolCall(call llm.ToolUse, declared bool) error {
	_ = declared // both are complete calls; only the server's get an output item
	return s.callItem(call, "", "")
}

// callItem adds a completed function_call item; agent and parent are set
// for a sub-agent's call.
func (s *respSink) callItem(call llm.ToolUse, agent, parent string) error {
	if err := s.close(); err != nil {
		return err
	}
	args := string(call.InputOrEmpty())
	it := &outputItem{Type: "function_call", ID: s.newID("fc_"), CallID: call.ID, Name: call.Name, Arguments: &args, Status: "in_progress",
		Agent: agent, ParentCallID: parent}
	idx := s.add(it)
	if err := s.emit("response.output_item.added", map[string]any{"output_index": idx, "item": it}); err != nil {
		return err
	}
	if err := s.emit("response.function_call_arguments.done", map[string]any{"item_id": it.ID, "output_index": idx, "name": call.Name, "arguments": args}); err != nil {
		return err
	}
	it.Status = "completed"
	return s.emit("response.output_item.done", map[string]any{"output_index": idx, "item": it})
}

func (s *respSink) toolResult(m *llm.Message) error {
	return s.resultItem(m, "", "")
}

// resultItem adds a function_call_output item; agent and parent are set
// for a sub-agent's tool result.
func (s *respSink) resultItem(m *llm.Message, agent, parent string) error {
	if err := s.close(); err != nil {
		return err
	}
	out := m.Text()
	it := &outputItem{Type: "function_call_output", ID: s.newID("fco_"), CallID: m.ToolCallID, Output: &out, Status: "completed",
		Agent: agent, ParentCallID: parent}
	idx := s.add(it)
	if err := s.emit("response.output_item.added", map[string]any{"output_index": idx, "item": it}); err != nil {
		return err
	}
	return s.emit("response.output_item.done", map[string]any{"output_index": idx, "item": it})
}

// handoff marks the items after it with the agent taking over, and those
// before it, not yet marked, with the agent handing over.
func (s *respSink) handoff(from, to string) error {
	if err := s.close(); err != nil {
		return err
	}
	for _, it := range s.obj.Output {
		if it.Agent == "" {
			it.Agent = from
		}
	}
	s.agent = to
	return nil
}

// subAgent shows a sub-agent's tool calls and results as completed
// function_call and function_call_output items marked with the sub-agent
// and the call that ran it. (Its answer is the output of that call; its
// text is not repeated as a message, which clients would take for the
// turn's answer.)
func (s *respSink) subAgent(u agent.Update) error {
	for u.Kind == agent.UpdateSubAgent && u.Sub != nil {
		parent, sub := u.ToolCall.ID, u.Sub
		switch sub.Kind {
		case agent.UpdateToolCall:
			return s.callItem(sub.ToolCall, sub.Agent, parent)
		case agent.UpdateToolResult:
			return s.resultItem(sub.ToolResult, sub.Agent, parent)
		}
		u = *sub // a sub-agent's own sub-agent
	}
	return nil
}

// sessionLocks serializes the Responses turns of one session in this
// process, so that each gets the next turn number.
type sessionLocks struct {
	mu sync.Mutex
	m  map[string]*sessionLock
}

type sessionLock struct {
	ch   chan struct{} // a one-slot semaphore
	refs int
}

// lock waits for the session's lock, or for ctx's end (the error).
func (l *sessionLocks) lock(ctx context.Context, id string) (unlock func(), err error) {
	l.mu.Lock()
	if l.m == nil {
		l.m = make(map[string]*sessionLock)
	}
	e := l.m[id]
	if e == nil {
		e = &sessionLock{ch: make(chan struct{}, 1)}
		l.m[id] = e
	}
	e.refs++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.m, id)
		}
		l.mu.Unlock()
	}
	select {
	case e.ch <- struct{}{}:
	case <-ctx.Done():
		release()
		return nil, context.Cause(ctx)
	}
	return func() { <-e.ch; release() }, nil
}

// recentResponses keeps the last completed stored responses for GET
// /v1/responses/{id}.
type recentResponses struct {
	mu    sync.Mutex
	max   int
	order *list.List // of string ids, newest first
	m     map[string]recentEntry
}

type recentEntry struct {
	principal string
	obj       *responseObject
	elem      *list.Element
}

const recentMax = 1024

func (c *recentResponses) put(id, principal string, obj *responseObject) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m, c.order, c.max = make(map[string]recentEntry), list.New(), recentMax
	}
	if e, ok := c.m[id]; ok {
		c.order.Remove(e.elem)
	}
	c.m[id] = recentEntry{principal: principal, obj: obj, elem: c.order.PushFront(id)}
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.m, last.Value.(string))
	}
}

func (c *recentResponses) get(id, principal string) (*responseObject, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	if !ok || e.principal != principal {
		return nil, false
	}
	return e.obj, true
}
