package compact

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agcore/agcore/llm"
)

// ProblemKind names one rule a message sequence can break.
type ProblemKind string

// The rules [Check] enforces. The pairing rules hold for every provider; the
// order rules are what Anthropic's Messages API enforces once an adapter has
// merged each run of user-side messages (user text and tool results) into
// one user turn.
const (
	// OrphanResult: a tool result that does not answer a call of the
	// assistant message right before its run of results.
	OrphanResult ProblemKind = "orphan_result"
	// DuplicateResult: a second result for the same call.
	DuplicateResult ProblemKind = "duplicate_result"
	// ResultOutOfOrder: results not in the order of their calls.
	ResultOutOfOrder ProblemKind = "result_out_of_order"
	// DanglingCall: a tool call with no result before the next message
	// that is not a result (or the end of the conversation).
	DanglingCall ProblemKind = "dangling_call"
	// DuplicateCallID: two calls with the same id in one message.
	DuplicateCallID ProblemKind = "duplicate_call_id"
	// EmptyID: a call or result without an id.
	EmptyID ProblemKind = "empty_id"

	// SystemNotFirst: a system message after a non-system message.
	SystemNotFirst ProblemKind = "system_not_first"
	// FirstNotUser: the first non-system message is an assistant message.
	FirstNotUser ProblemKind = "first_not_user"
	// ConsecutiveAssistant: an assistant message right after another.
	ConsecutiveAssistant ProblemKind = "consecutive_assistant"
)

// Pairing reports whether k is one of the tool-pairing rules (which every
// provider enforces and [Repair] fixes), as opposed to the order rules.
func (k ProblemKind) Pairing() bool {
	switch k {
	case SystemNotFirst, FirstNotUser, ConsecutiveAssistant:
		return false
	}
	return true
}

// Problem is one broken rule.
type Problem struct {
	Kind ProblemKind
	// Index is the message the problem is in; Block the content block
	// within it, or -1 for the whole message.
	Index, Block int
	// ToolID is the tool call id concerned, if any.
	ToolID string
}

// String describes the problem: "message 3 block 1: dangling_call (call_7)".
func (p Problem) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "message %d", p.Index)
	if p.Block >= 0 {
		fmt.Fprintf(&sb, " block %d", p.Block)
	}
	fmt.Fprintf(&sb, ": %s", p.Kind)
	if p.ToolID != "" {
		fmt.Fprintf(&sb, " (%s)", p.ToolID)
	}
	return sb.String()
}

// ErrInvalidMessages is matched (errors.Is) by every *[ValidationError].
var ErrInvalidMessages = errors.New("compact: invalid message sequence")

// ValidationError lists every problem [Validate] found, in message order.
type ValidationError struct {
	Problems []Problem
}

// Error lists the problems (the first eight of them).
func (e *ValidationError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "compact: %d problem(s) in message sequence: ", len(e.Problems))
	for i, p := range e.Problems {
		if i == 8 {
			fmt.Fprintf(&sb, "; and %d more", len(e.Problems)-i)
			break
		}
		if i > 0 {
			sb.WriteString("; ")
		}
		sb.WriteString(p.String())
	}
	return sb.String()
}

// Unwrap makes errors.Is(err, ErrInvalidMessages) true.
func (e *ValidationError) Unwrap() error { return ErrInvalidMessages }

// Validate checks every rule of [Check] and returns a *[ValidationError]
// listing the problems, or nil.
func Validate(msgs []llm.Message) error {
	if p := Check(msgs); len(p) > 0 {
		return &ValidationError{Problems: p}
	}
	return nil
}

// ValidatePairing checks only the tool-pairing rules, the ones OpenAI-style
// APIs enforce.
func ValidatePairing(msgs []llm.Message) error {
	var out []Problem
	for _, p := range Check(msgs) {
		if p.Kind.Pairing() {
			out = append(out, p)
		}
	}
	if len(out) > 0 {
		return &ValidationError{Problems: out}
	}
	return nil
}

// Check returns the problems of a message sequence:
//
//   - tool results (RoleTool messages, or ToolResult blocks nested in a user
//     message the Anthropic way) appear only in the run of messages right
//     after an assistant message, and answer its calls: each call exactly
//     once, in the order of the calls;
//   - every call is answered before the next message that is not a result,
//     and before the end;
//   - call ids are non-empty and unique within their message;
//   - system messages come first; the first other message is from the user
//     side; no assistant message follows another.
func Check(msgs []llm.Message) []Problem {
	var probs []Problem
	seenOther := false
	prevAssistant := false
	for i := 0; i < len(msgs); {
		m := &msgs[i]
		// Order rules.
		switch m.Role {
		case llm.RoleSystem:
			if seenOther {
				probs = append(probs, Problem{Kind: SystemNotFirst, Index: i, Block: -1})
			}
		case llm.RoleAssistant:
			if !seenOther {
				probs = append(probs, Problem{Kind: FirstNotUser, Index: i, Block: -1})
			}
			if prevAssistant {
				probs = append(probs, Problem{Kind: ConsecutiveAssistant, Index: i, Block: -1})
			}
		}
		if m.Role != llm.RoleSystem {
			seenOther = true
		}
		prevAssistant = m.Role == llm.RoleAssistant

		if m.Role != llm.RoleAssistant {
			// Results outside a run are orphans.
			for _, r := range resultsOf(m) {
				probs = append(probs, Problem{Kind: OrphanResult, Index: i, Block: r.block, ToolID: r.id})
			}
			i++
			continue
		}
		end := runEnd(msgs, i)
		probs = append(probs, checkExchange(msgs, i, end)...)
		if end > i+1 {
			prevAssistant = false // the run is user-side
		}
		i = end
	}
	slices.SortStableFunc(probs, func(a, b Problem) int {
		if a.Index != b.Index {
			return a.Index - b.Index
		}
		return a.Block - b.Block
	})
	return probs
}

// resultRef is one tool result found in a message.
type resultRef struct {
	id    string
	block int // -1 for a RoleTool message
}

// resultsOf returns the tool results a message carries: a RoleTool message
// is one result; a user message may nest ToolResult blocks.
func resultsOf(m *llm.Message) []resultRef {
	switch m.Role {
	case llm.RoleTool:
		return []resultRef{{id: m.ToolCallID, block: -1}}
	case llm.RoleUser:
		var out []resultRef
		for j, b := range m.Content {
			if r, ok := b.(llm.ToolResult); ok {
				out = append(out, resultRef{id: r.ToolUseID, block: j})
			}
		}
		return out
	}
	return nil
}

// isResultCarrier reports whether m carries tool results.
func isResultCarrier(m *llm.Message) bool {
	if m.Role == llm.RoleTool {
		return true
	}
	if m.Role == llm.RoleUser {
		for _, b := range m.Content {
			if _, ok := b.(llm.ToolResult); ok {
				return true
			}
		}
	}
	return false
}

// runEnd returns the index after the run of result carriers following the
// assistant message at i (i+1 when it has none).
func runEnd(msgs []llm.Message, i int) int {
	j := i + 1
	for j < len(msgs) && isResultCarrier(&msgs[j]) {
		j++
	}
	return j
}

func checkExchange(msgs []llm.Message, i, end int) []Problem {
	var probs []Problem
	order := map[string]int{}
	var calls []llm.ToolUse
	var callBlocks []int
	for j, b := range msgs[i].Content {
		u, ok := b.(llm.ToolUse)
		if !ok {
			continue
		}
		switch _, dup := order[u.ID]; {
		case u.ID == "":
			probs = append(probs, Problem{Kind: EmptyID, Index: i, Block: j})
			continue
		case dup:
			probs = append(probs, Problem{Kind: DuplicateCallID, Index: i, Block: j, ToolID: u.ID})
			continue
		}
		order[u.ID] = len(calls)
		calls = append(calls, u)
		callBlocks = append(callBlocks, j)
	}
	answered := make([]bool, len(calls))
	last := -1
	for k := i + 1; k < end; k++ {
		for _, r := range resultsOf(&msgs[k]) {
			pos, ok := order[r.id]
			switch {
			case r.id == "":
				probs = append(probs, Problem{Kind: EmptyID, Index: k, Block: r.block})
			case !ok:
				probs = append(probs, Problem{Kind: OrphanResult, Index: k, Block: r.block, ToolID: r.id})
			case answered[pos]:
				probs = append(probs, Problem{Kind: DuplicateResult, Index: k, Block: r.block, ToolID: r.id})
			default:
				if pos < last {
					probs = append(probs, Problem{Kind: ResultOutOfOrder, Index: k, Block: r.block, ToolID: r.id})
				}
				answered[pos] = true
				last = max(last, pos)
			}
		}
	}
	for pos, ok := range answered {
		if !ok {
			probs = append(probs, Problem{Kind: DanglingCall, Index: i, Block: callBlocks[pos], ToolID: calls[pos].ID})
		}
	}
	return probs
}
