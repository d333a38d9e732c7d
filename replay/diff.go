package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/agcore/agcore/llm"
)

// Kind names a category of difference between a recorded request and a
// replayed one.
type Kind string

// The kinds of difference [Diff] finds.
const (
	// SystemChanged: the system prompt (the request's system message)
	// differs, or one of the two requests has none.
	SystemChanged Kind = "system_changed"
	// MessageChanged: message Message differs in its role, or in block
	// Block (its kind or its content), or in its number of blocks.
	MessageChanged Kind = "message_changed"
	// MessageAdded: the replayed request has message Message, the recorded
	// one ends before it.
	MessageAdded Kind = "message_added"
	// MessageRemoved: the recorded request had message Message, the
	// replayed one ends before it.
	MessageRemoved Kind = "message_removed"
	// ToolResultChanged: the result of tool call ToolCallID (tool Tool),
	// message Message, differs.
	ToolResultChanged Kind = "tool_result_changed"
	// ToolAdded, ToolRemoved, ToolChanged: tool Tool was added to the
	// definitions, removed from them, or its description or parameters
	// changed; ToolsReordered: the same tools in another order.
	ToolAdded      Kind = "tool_added"
	ToolRemoved    Kind = "tool_removed"
	ToolChanged    Kind = "tool_changed"
	ToolsReordered Kind = "tools_reordered"
	// CompactionMoved: the requests end with the same messages but begin
	// differently where the budget policy cut the history: a summary or
	// a dropped part replaced another number of messages (Recorded and
	// Replayed say how many messages preceded the shared ones).
	CompactionMoved Kind = "compaction_moved"
	// ParameterChanged: parameter Parameter (model, max_tokens,
	// temperature, top_p, stop, tool_choice, response_format, reasoning,
	// extra, metadata) changed.
	ParameterChanged Kind = "parameter_changed"
	// CallAdded: the replay made a model call the record does not have;
	// CallMissing: a recorded call the replay never made.
	CallAdded   Kind = "call_added"
	CallMissing Kind = "call_missing"
)

// Difference is one way a replayed request differs from the recorded one.
// Message and Block are indexes into Request.Messages and a message's
// Content (-1 when they do not apply).
type Difference struct {
	Kind       Kind
	Message    int
	Block      int
	ToolCallID string // ToolResultChanged
	Tool       string // ToolResultChanged, ToolAdded, ToolRemoved, ToolChanged
	Parameter  string // ParameterChanged
	// Recorded and Replayed describe the two sides, shortened.
	Recorded, Replayed string
}

// String describes the difference in one line, in the message model's
// terms.
func (d Difference) String() string {
	var s string
	switch d.Kind {
	case SystemChanged:
		s = "system prompt changed"
	case MessageChanged:
		s = fmt.Sprintf("message %d differs", d.Message)
		if d.Block >= 0 {
			s = fmt.Sprintf("message %d, block %d differs", d.Message, d.Block)
		}
	case MessageAdded:
		s = fmt.Sprintf("message %d added", d.Message)
	case MessageRemoved:
		s = fmt.Sprintf("message %d removed", d.Message)
	case ToolResultChanged:
		s = fmt.Sprintf("message %d: tool result of call %s (%s) differs", d.Message, d.ToolCallID, d.Tool)
	case ToolAdded:
		s = fmt.Sprintf("tool %s added to the definitions", d.Tool)
	case ToolRemoved:
		s = fmt.Sprintf("tool %s removed from the definitions", d.Tool)
	case ToolChanged:
		s = fmt.Sprintf("tool %s changed in the definitions", d.Tool)
	case ToolsReordered:
		s = "tool definitions reordered"
	case CompactionMoved:
		s = "compaction cut moved"
	case ParameterChanged:
		s = fmt.Sprintf("parameter %s changed", d.Parameter)
	case CallAdded:
		s = "model call not in the record"
	case CallMissing:
		s = "recorded model call not made"
	default:
		s = string(d.Kind)
	}
	switch {
	case d.Kind == MessageAdded || d.Kind == CallAdded:
		s += ": " + d.Replayed
	case d.Kind == MessageRemoved || d.Kind == CallMissing:
		s += ": " + d.Recorded
	case d.Recorded != "" || d.Replayed != "":
		s += ": " + orNone(d.Recorded) + " → " + orNone(d.Replayed)
	}
	return s
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Drift is the differences of one replayed call.
type Drift struct {
	Call        int // the call's number, from 1
	Turn        int // its recorded turn (0 when none was marked)
	Differences []Difference
}

// String lists the differences, one a line, each prefixed with the call.
func (d Drift) String() string {
	var sb strings.Builder
	for i, x := range d.Differences {
		if i > 0 {
			sb.WriteByte('\n')
		}
		fmt.Fprintf(&sb, "call %d: %s", d.Call, x)
	}
	return sb.String()
}

// ErrDrift is matched (errors.Is) by every *DriftError.
var ErrDrift = errors.New("replay: the replayed request differs from the recorded one")

// DriftError fails a strict replay's call whose request differs from the
// recorded one; it lists the differences.
type DriftError struct{ Drift }

// Error names the call and its differences.
func (e *DriftError) Error() string {
	return fmt.Sprintf("replay: call %d drifted from the record (%d differences):\n%s", e.Call, len(e.Differences), e.Drift.String())
}

// Is reports whether target is ErrDrift.
func (e *DriftError) Is(target error) bool { return target == ErrDrift }

// Diff returns how replayed differs from recorded, in the message model's
// terms, or nil when they are the same request.
func Diff(recorded, replayed *llm.Request) []Difference {
	var out []Difference
	out = diffMessages(out, recorded.Messages, replayed.Messages)
	out = diffTools(out, recorded.Tools, replayed.Tools)
	out = diffParams(out, recorded, replayed)
	return out
}

func diffMessages(out []Difference, rec, rep []llm.Message) []Difference {
	rs, rr := systemOf(rec), systemOf(rep)
	if rs != nil || rr != nil {
		if rs == nil || rr == nil || !rs.Equal(*rr) {
			out = append(out, Difference{Kind: SystemChanged, Message: 0, Block: -1, Recorded: textOf(rs), Replayed: textOf(rr)})
		}
	}
	hr, hp := 0, 0
	if rs != nil {
		hr = 1
	}
	if rr != nil {
		hp = 1
	}
	a, b := rec[hr:], rep[hp:]
	// A common tail after different beginnings of different lengths is
	// the budget policy cutting the history elsewhere.
	tail := 0
	for tail < len(a) && tail < len(b) && a[len(a)-1-tail].Equal(b[len(b)-1-tail]) {
		tail++
	}
	if tail > 0 && len(a) != len(b) && tail < max(len(a), len(b)) {
		ca, cb := a[:len(a)-tail], b[:len(b)-tail]
		if compacted(ca) || compacted(cb) || len(ca) == 0 || len(cb) == 0 || endsWith(ca, cb) || endsWith(cb, ca) {
			return append(out, Difference{Kind: CompactionMoved, Message: hp, Block: -1,
				Recorded: fmt.Sprintf("%s before the last %s", messages(len(ca)), messages(tail)),
				Replayed: fmt.Sprintf("%s before the last %s", messages(len(cb)), messages(tail))})
		}
	}
	n := min(len(a), len(b))
	for i := range n {
		out = diffMessage(out, b[:i], hp+i, a[i], b[i])
	}
	for i := n; i < len(b); i++ {
		out = append(out, Difference{Kind: MessageAdded, Message: hp + i, Block: -1, Replayed: describeMessage(b[i])})
	}
	for i := n; i < len(a); i++ {
		out = append(out, Difference{Kind: MessageRemoved, Message: hp + i, Block: -1, Recorded: describeMessage(a[i])})
	}
	return out
}

// messages writes "1 message", "n messages".
func messages(n int) string {
	if n == 1 {
		return "1 message"
	}
	return strconv.Itoa(n) + " messages"
}

// endsWith reports whether long ends with short (more of the history
// was kept on one side).
func endsWith(long, short []llm.Message) bool {
	if len(short) > len(long) {
		return false
	}
	off := len(long) - len(short)
	for i := range short {
		if !long[off+i].Equal(short[i]) {
			return false
		}
	}
	return true
}

// summaryMark opens the message compact's summarizer puts in place of the
// history it replaced.
const summaryMark = "[Summary of the earlier conversation"

// compacted reports whether msgs begins with a compaction's summary.
func compacted(msgs []llm.Message) bool {
	return len(msgs) > 0 && strings.HasPrefix(msgs[0].Text(), summaryMark)
}

func systemOf(msgs []llm.Message) *llm.Message {
	if len(msgs) > 0 && msgs[0].Role == llm.RoleSystem {
		return &msgs[0]
	}
	return nil
}

func textOf(m *llm.Message) string {
	if m == nil {
		return ""
	}
	return quote(m.Text())
}

// quote returns s quoted and, when long, cut.
func quote(s string) string {
	const most = 60
	if r := []rune(s); len(r) > most {
		s = string(r[:most]) + "…"
	}
	return strconv.Quote(s)
}

func describeMessage(m llm.Message) string {
	kinds := make([]string, len(m.Content))
	for i, b := range m.Content {
		kinds[i] = b.BlockType()
	}
	s := string(m.Role) + " [" + strings.Join(kinds, ", ") + "]"
	if m.Role == llm.RoleTool {
		s += " for " + m.ToolCallID
	}
	return s
}

func describeBlock(b llm.Block) string {
	switch b := b.(type) {
	case llm.Text:
		return "text " + quote(b.Text)
	case llm.Thinking:
		return "thinking " + quote(b.Text) + signed(b.Signature)
	case llm.ToolUse:
		return "tool_use " + b.Name + " " + quote(string(b.Input)) + signed(b.Signature)
	}
	raw, _ := llm.MarshalBlock(b)
	return b.BlockType() + " " + quote(string(raw))
}

// signed describes a signature: its length and first bytes, never whole.
func signed(sig string) string {
	if sig == "" {
		return ""
	}
	return fmt.Sprintf(" (signature %d bytes, %.8q)", len(sig), sig)
}

func diffMessage(out []Difference, before []llm.Message, i int, a, b llm.Message) []Difference {
	if a.Equal(b) {
		return out
	}
	if a.Role != b.Role {
		return append(out, Difference{Kind: MessageChanged, Message: i, Block: -1, Recorded: describeMessage(a), Replayed: describeMessage(b)})
	}
	if a.Role == llm.RoleTool && a.ToolCallID == b.ToolCallID {
		return append(out, Difference{Kind: ToolResultChanged, Message: i, Block: -1, ToolCallID: a.ToolCallID, Tool: toolName(before, a.ToolCallID),
			Recorded: quote(resultText(a)), Replayed: quote(resultText(b))})
	}
	if a.ToolCallID != b.ToolCallID || a.IsError != b.IsError {
		return append(out, Difference{Kind: MessageChanged, Message: i, Block: -1, Recorded: describeMessage(a), Replayed: describeMessage(b)})
	}
	if len(a.Content) != len(b.Content) {
		return append(out, Difference{Kind: MessageChanged, Message: i, Block: -1,
			Recorded: fmt.Sprintf("%d blocks", len(a.Content)), Replayed: fmt.Sprintf("%d blocks", len(b.Content))})
	}
	for j := range a.Content {
		x, y := llm.Message{Content: a.Content[j : j+1]}, llm.Message{Content: b.Content[j : j+1]}
		if !x.Equal(y) {
			out = append(out, Difference{Kind: MessageChanged, Message: i, Block: j, Recorded: describeBlock(a.Content[j]), Replayed: describeBlock(b.Content[j])})
		}
	}
	return out
}

// toolName returns the name of the tool call id in msgs (a tool-result
// message does not name its tool), or "?".
func toolName(msgs []llm.Message, id string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, u := range msgs[i].ToolUses() {
			if u.ID == id {
				return u.Name
			}
		}
	}
	return "?"
}

func resultText(m llm.Message) string {
	s := m.Text()
	if m.IsError {
		s = "error: " + s
	}
	return s
}

func diffTools(out []Difference, rec, rep []llm.ToolDefinition) []Difference {
	find := func(ds []llm.ToolDefinition, name string) (llm.ToolDefinition, bool) {
		for _, d := range ds {
			if d.Name == name {
				return d, true
			}
		}
		return llm.ToolDefinition{}, false
	}
	var common []string
	for _, d := range rec {
		o, ok := find(rep, d.Name)
		if !ok {
			out = append(out, Difference{Kind: ToolRemoved, Message: -1, Block: -1, Tool: d.Name})
			continue
		}
		common = append(common, d.Name)
		switch {
		case d.Description != o.Description:
			out = append(out, Difference{Kind: ToolChanged, Message: -1, Block: -1, Tool: d.Name, Recorded: "description " + quote(d.Description), Replayed: "description " + quote(o.Description)})
		case !jsonEqual(d.Parameters, o.Parameters):
			out = append(out, Difference{Kind: ToolChanged, Message: -1, Block: -1, Tool: d.Name, Recorded: "parameters " + quote(string(d.Parameters)), Replayed: "parameters " + quote(string(o.Parameters))})
		}
	}
	var order []string
	for _, d := range rep {
		if _, ok := find(rec, d.Name); !ok {
			out = append(out, Difference{Kind: ToolAdded, Message: -1, Block: -1, Tool: d.Name})
			continue
		}
		order = append(order, d.Name)
	}
	if !slices.Equal(common, order) {
		out = append(out, Difference{Kind: ToolsReordered, Message: -1, Block: -1, Recorded: strings.Join(common, ", "), Replayed: strings.Join(order, ", ")})
	}
	return out
}

// jsonEqual compares two JSON texts byte for byte, an empty one being
// the empty object schema's absence.
func jsonEqual(a, b json.RawMessage) bool { return bytes.Equal(a, b) }

func diffParams(out []Difference, a, b *llm.Request) []Difference {
	param := func(name, x, y string) {
		if x != y {
			out = append(out, Difference{Kind: ParameterChanged, Message: -1, Block: -1, Parameter: name, Recorded: x, Replayed: y})
		}
	}
	param("model", a.Model, b.Model)
	param("max_tokens", intText(a.MaxTokens), intText(b.MaxTokens))
	param("temperature", floatText(a.Temperature), floatText(b.Temperature))
	param("top_p", floatText(a.TopP), floatText(b.TopP))
	param("stop", strings.Join(a.StopSequences, ", "), strings.Join(b.StopSequences, ", "))
	param("tool_choice", choiceText(a.ToolChoice), choiceText(b.ToolChoice))
	ja, jb := requestOf(a, nil, len(a.Messages)), requestOf(b, nil, len(b.Messages))
	param("response_format", jsonText(ja.ResponseFormat), jsonText(jb.ResponseFormat))
	param("reasoning", jsonText(ja.Reasoning), jsonText(jb.Reasoning))
	param("extra", jsonText(ja.Extra), jsonText(jb.Extra))
	param("metadata", jsonText(a.Metadata), jsonText(b.Metadata))
	return out
}

func intText(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

func floatText(f *float64) string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

func choiceText(c llm.ToolChoice) string {
	if c.Mode == llm.ToolChoiceTool {
		return "tool " + c.Name
	}
	return string(c.Mode)
}

// jsonText returns v's JSON, "" for nothing.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" || string(b) == "{}" {
		return ""
	}
	return string(b)
}
