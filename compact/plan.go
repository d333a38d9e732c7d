package compact

import (
	"encoding/binary"
	"hash/maphash"
	"math"

	"github.com/agcore/agcore/llm"
)

// groupKind classifies an atomic group of messages: strategies keep or
// drop whole groups, so a tool call is never separated from its results.
type groupKind uint8

const (
	groupSystem    groupKind = iota // a system message before any other
	groupUser                       // a user message that carries no results
	groupExchange                   // an assistant message with tool calls, then its results
	groupAssistant                  // an assistant message without tool calls
	groupOther                      // anything else: stray results, a late system message
)

type group struct {
	start, end int // messages [start, end)
	kind       groupKind
	tokens     int
}

// messageCosts returns the counter's count of an empty conversation and each
// message's own share. Both built-in counters are additive; for others the
// shares are what each message adds alone, and strategies check their
// result with one full count.
func messageCosts(counter TokenCounter, msgs []llm.Message) (base int, costs []int) {
	base = counter.CountMessages(nil)
	costs = make([]int, len(msgs))
	for i := range msgs {
		costs[i] = counter.CountMessages(msgs[i:i+1]) - base
	}
	return base, costs
}

func splitGroups(msgs []llm.Message, costs []int) []group {
	var gs []group
	leading := true
	for i := 0; i < len(msgs); {
		m := &msgs[i]
		g := group{start: i, end: i + 1}
		switch {
		case m.Role == llm.RoleSystem && leading:
			g.kind = groupSystem
		case m.Role == llm.RoleAssistant && m.HasToolUse():
			g.kind = groupExchange
			g.end = runEnd(msgs, i)
		case m.Role == llm.RoleAssistant:
			g.kind = groupAssistant
		case m.Role == llm.RoleUser && !isResultCarrier(m):
			g.kind = groupUser
		default:
			g.kind = groupOther
		}
		if m.Role != llm.RoleSystem {
			leading = false
		}
		for k := g.start; k < g.end; k++ {
			g.tokens += costs[k]
		}
		gs = append(gs, g)
		i = g.end
	}
	return gs
}

// plan is the shared analysis behind the group strategies.
type plan struct {
	msgs   []llm.Message
	base   int
	costs  []int
	groups []group
	total  int
	pinned []bool // per group: never dropped or summarized
	// droppable lists the other groups oldest first; cum[k] is the tokens
	// of droppable[:k].
	droppable []int
	cum       []int
}

// newPlan pins the leading system messages, the first user message, the
// last assistant message with tool calls (its thinking blocks must reach the
// provider unchanged) and the last keepLast groups.
func newPlan(msgs []llm.Message, counter TokenCounter, keepLast int) *plan {
	p := &plan{msgs: msgs}
	p.base, p.costs = messageCosts(counter, msgs)
	p.groups = splitGroups(msgs, p.costs)
	p.total = p.base
	for _, g := range p.groups {
		p.total += g.tokens
	}
	p.pinned = make([]bool, len(p.groups))
	firstUser, lastExchange := -1, -1
	for k, g := range p.groups {
		switch g.kind {
		case groupSystem:
			p.pinned[k] = true
		case groupUser:
			if firstUser < 0 {
				firstUser = k
				p.pinned[k] = true
			}
		case groupExchange:
			lastExchange = k
		}
	}
	if lastExchange >= 0 {
		p.pinned[lastExchange] = true
	}
	for k := max(0, len(p.groups)-keepLast); k < len(p.groups); k++ {
		p.pinned[k] = true
	}
	p.cum = []int{0}
	for k, g := range p.groups {
		if !p.pinned[k] {
			p.droppable = append(p.droppable, k)
			p.cum = append(p.cum, p.cum[len(p.cum)-1]+g.tokens)
		}
	}
	return p
}

// cut returns how many droppable groups (oldest first) to remove so that at
// least need tokens go. Cut points are quantized: the groups removed are
// those that end within the first multiple of step tokens of the droppable
// history that frees enough. Because the history only grows at its end,
// the same cut keeps being chosen turn after turn until the conversation
// has grown by about step tokens, so the compacted prefix stays byte-stable
// and the provider's prompt cache keeps hitting. ok is false when removing
// every droppable group is not enough.
func (p *plan) cut(need, step int) (m int, ok bool) {
	if need <= 0 {
		return 0, true
	}
	n := len(p.droppable)
	if p.cum[n] < need {
		return n, false
	}
	// Smallest m with cum[m] >= need.
	lo, hi := 1, n
	for lo < hi {
		mid := (lo + hi) / 2
		if p.cum[mid] >= need {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	m = lo
	if step > 1 {
		limit := int(math.Ceil(float64(p.cum[m])/float64(step))) * step
		for m < n && p.cum[m+1] <= limit {
			m++
		}
	}
	return m, true
}

// without returns the messages with the first m droppable groups removed and
// the index of the first message that differs from the input.
func (p *plan) without(m int) (out []llm.Message, firstChange int) {
	drop := make([]bool, len(p.groups))
	for _, k := range p.droppable[:m] {
		drop[k] = true
	}
	firstChange = len(p.msgs)
	out = make([]llm.Message, 0, len(p.msgs))
	for k, g := range p.groups {
		if drop[k] {
			firstChange = min(firstChange, g.start)
			continue
		}
		out = append(out, p.msgs[g.start:g.end]...)
	}
	return out, firstChange
}

var hashSeed = maphash.MakeSeed()

// hashMessage writes m to h. It is exhaustive over the block kinds so that a
// change in any field changes the hash.
func hashMessage(h *maphash.Hash, m *llm.Message) {
	h.WriteString(string(m.Role))
	h.WriteByte(0)
	h.WriteString(m.ToolCallID)
	if m.IsError {
		h.WriteByte(1)
	}
	hashBlocks(h, m.Content)
	h.WriteByte(0xff)
}

func hashBlocks(h *maphash.Hash, bs []llm.Block) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(bs)))
	h.Write(n[:])
	for _, b := range bs {
		if b == nil {
			h.WriteByte(0xfe)
			continue
		}
		h.WriteString(b.BlockType())
		h.WriteByte(0)
		switch b := b.(type) {
		case llm.Text:
			writeField(h, b.Text)
		case llm.Thinking:
			writeField(h, b.Text)
			writeField(h, b.Signature)
		case llm.RedactedThinking:
			writeField(h, b.Data)
		case llm.ToolUse:
			writeField(h, b.ID)
			writeField(h, b.Name)
			writeField(h, string(b.Input))
		case llm.ToolResult:
			writeField(h, b.ToolUseID)
			if b.IsError {
				h.WriteByte(1)
			}
			hashBlocks(h, b.Content)
		case llm.Image:
			writeField(h, string(b.Data))
			writeField(h, b.URL)
			writeField(h, b.MediaType)
			writeField(h, b.Detail)
		case llm.Audio:
			writeField(h, string(b.Data))
			writeField(h, b.URL)
			writeField(h, b.MediaType)
		case llm.File:
			writeField(h, string(b.Data))
			writeField(h, b.URL)
			writeField(h, b.FileID)
			writeField(h, b.MediaType)
			writeField(h, b.Name)
		case llm.Extension:
			writeField(h, b.Kind)
			writeField(h, string(b.Data))
		}
	}
}

func writeField(h *maphash.Hash, s string) {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
	h.Write(n[:])
	h.WriteString(s)
}
