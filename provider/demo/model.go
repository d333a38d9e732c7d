package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
)

// Name is the model's name in events, usage lines and stored sessions.
const Name = "scripted-demo"

// Label is how the CLI introduces the model wherever it shows it.
const Label = "scripted demo model (offline, not a language model)"

// Tool names the plan uses (those of package fstool).
const (
	listDir  = "list_dir"
	readFile = "read_file"
)

// Model is the scripted demo model. The zero value is ready; it is safe for
// concurrent use.
type Model struct {
	// Delay is the pause between streamed pieces of text, so that a
	// person sees the answer stream; 0 streams at once.
	Delay time.Duration

	mu   sync.Mutex
	last []llm.Message // the previous request's messages, for the prompt-cache figure
}

var _ llm.Model = (*Model)(nil)

// Info describes the model. Its window is generous: the demo never comes
// near it.
func (m *Model) Info() llm.ModelInfo {
	return llm.ModelInfo{Provider: "demo", Name: Name, ContextWindow: 128_000, MaxOutputTokens: 8_192, Structured: llm.StructuredSchema}
}

// Generate answers the request in one piece.
func (m *Model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, llm.Cancelled("demo", err)
	}
	resp := next(req)
	resp.Usage = m.usage(req, resp.Message)
	return resp, nil
}

// Stream answers the request as a stream whose text comes word by word,
// Delay apart.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for _, ev := range llm.Events(resp) {
			pieces := []llm.Event{ev}
			if ev.Type == llm.EventTextDelta || ev.Type == llm.EventThinkingDelta {
				pieces = pieces[:0]
				for _, w := range words(ev.Delta) {
					p := ev
					p.Delta = w
					pieces = append(pieces, p)
				}
			}
			for _, p := range pieces {
				if err := m.pause(ctx, p); err != nil {
					yield(llm.Event{}, err)
					return
				}
				if !yield(p, nil) {
					return
				}
			}
		}
	}
}

// pause waits Delay before a text or thinking piece.
func (m *Model) pause(ctx context.Context, ev llm.Event) error {
	if m.Delay <= 0 || (ev.Type != llm.EventTextDelta && ev.Type != llm.EventThinkingDelta) {
		if err := ctx.Err(); err != nil {
			return llm.Cancelled("demo", err)
		}
		return nil
	}
	t := time.NewTimer(m.Delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return llm.Cancelled("demo", ctx.Err())
	}
}

// usage estimates the call's tokens the way a provider would count them,
// including the input a prefix cache would have served: the messages this
// request shares, from the start, with the previous one.
func (m *Model) usage(req *llm.Request, answer llm.Message) llm.Usage {
	counter := compact.Estimator{}
	in := counter.CountMessages(req.Messages) + counter.CountTools(req.Tools)
	m.mu.Lock()
	shared := commonPrefix(m.last, req.Messages)
	m.last = append([]llm.Message(nil), req.Messages...)
	m.mu.Unlock()
	cached := 0
	if shared > 0 {
		cached = min(counter.CountMessages(req.Messages[:shared])+counter.CountTools(req.Tools), in)
	}
	return llm.Usage{InputTokens: in, CachedInputTokens: cached, OutputTokens: counter.CountMessages([]llm.Message{answer})}
}

// commonPrefix returns how many messages a and b share from the start.
func commonPrefix(a, b []llm.Message) int {
	n := 0
	for n < len(a) && n < len(b) {
		x, err1 := json.Marshal(a[n])
		y, err2 := json.Marshal(b[n])
		if err1 != nil || err2 != nil || string(x) != string(y) {
			break
		}
		n++
	}
	return n
}

// words splits s into pieces that each end after a space or newline.
func words(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexAny(s, " \n")
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// call is one tool call of the current turn and its result.
type call struct {
	use    llm.ToolUse
	result string
	isErr  bool
	done   bool
}

// next computes the answer to req: the next step of the plan, from what
// the current turn (the messages after the last user message) holds.
func next(req *llm.Request) *llm.Response {
	if resp, ok := structured(req); ok {
		return resp
	}
	last := -1
	for i, m := range req.Messages {
		if m.Role == llm.RoleUser {
			last = i
		}
	}
	turn := req.Messages[last+1:]
	var calls []*call
	byID := map[string]*call{}
	for _, m := range turn {
		switch m.Role {
		case llm.RoleAssistant:
			for _, u := range m.ToolUses() {
				c := &call{use: u}
				calls = append(calls, c)
				byID[u.ID] = c
			}
		case llm.RoleTool:
			if c := byID[m.ToolCallID]; c != nil {
				c.result, c.isErr, c.done = m.Text(), m.IsError, true
			}
		}
	}
	ids := idMaker{n: countCalls(req.Messages)}

	offered := map[string]bool{}
	for _, t := range req.Tools {
		offered[t.Name] = true
	}
	user := userText(req)
	if r := multi(req, calls, user, &ids); r != nil {
		return r
	}
	if !offered[listDir] || !offered[readFile] {
		if r := instructed(req, user); r != nil {
			return r
		}
		return answer(llm.Text{Text: "I am agcore's scripted demo model. My plan needs the read_file and list_dir tools, " +
			"and this request does not offer both, so there is nothing I can look at. Run `agcore demo` with its default tools."})
	}

	var listing *call
	var reads []*call
	for _, c := range calls {
		switch c.use.Name {
		case listDir:
			listing = c
		case readFile:
			reads = append(reads, c)
		}
	}
	switch {
	case listing == nil:
		return answer(
			llm.Thinking{Text: "The user wants an overview of the working directory. I cannot know what is in it without looking, so I will list it first, then read the files that describe the project."},
			llm.Text{Text: "I'll start by listing the working directory.\n"},
			ids.call(listDir, listArgs{Path: "."}),
		)
	case len(reads) == 0 && !listing.isErr:
		entries := parseListing(listing.result)
		picked := pickFiles(entries.files, 3)
		if len(picked) == 0 {
			return answer(llm.Text{Text: summarize(entries, nil)})
		}
		how := "."
		if len(picked) > 1 {
			how = " in parallel."
		}
		blocks := []llm.Block{llm.Text{Text: fmt.Sprintf("The directory has %s. I'll read %s%s\n", entries.count(), joinAnd(picked), how)}}
		for _, p := range picked {
			blocks = append(blocks, ids.call(readFile, readArgs{Path: p, Limit: readLimit}))
		}
		return answer(blocks...)
	}
	var entries listingInfo
	if !listing.isErr {
		entries = parseListing(listing.result)
	}
	return answer(llm.Text{Text: summarize(entries, reads)})
}

func answer(blocks ...llm.Block) *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant, Content: blocks}
	finish := llm.FinishStop
	if msg.HasToolUse() {
		finish = llm.FinishToolUse
	}
	return &llm.Response{Model: Name, Message: msg, FinishReason: finish}
}

// idMaker numbers tool calls after those already in the conversation, so
// ids stay unique across the turns of a session.
type idMaker struct{ n int }

// The arguments the plan sends, in the order the model would write them.
type (
	listArgs struct {
		Path string `json:"path"`
	}
	readArgs struct {
		Path  string `json:"path"`
		Limit int    `json:"limit"`
	}
)

// readLimit is how many lines of each file the plan reads.
const readLimit = 40

func (g *idMaker) call(name string, args any) llm.ToolUse {
	g.n++
	in, _ := json.Marshal(args)
	return llm.ToolUse{ID: fmt.Sprintf("call_%d", g.n), Name: name, Input: in}
}

func countCalls(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.ToolUses())
	}
	return n
}
