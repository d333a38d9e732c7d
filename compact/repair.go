package compact

import "github.com/agcore/agcore/llm"

// InterruptedResult is the text of the error result [Repair] adds for a
// tool call that has none.
const InterruptedResult = "interrupted: no result was recorded"

// Repair returns a copy of msgs whose tool pairing is valid, and the
// problems [Check] found in msgs. It is meant for a stored session loaded
// after a crash, where a run may have stopped between a tool call and its
// result. It:
//
//   - drops tool results that answer no call of the assistant message before
//     their run (orphans), and second results for the same call;
//   - puts each exchange's results in the order of its calls;
//   - adds an error result saying [InterruptedResult] for each call that has
//     none;
//   - drops calls with an empty id and repeated call ids within a message
//     (and the message itself if nothing is left);
//   - turns ToolResult blocks nested in a user message into RoleTool
//     messages (the user's other content follows them as a user message),
//     the form the rest of agcore uses.
//
// The order rules (system first, no two assistant messages in a row) are
// reported but not repaired: no rewrite of them keeps the conversation's
// meaning. Repair never modifies msgs (the returned messages share their
// blocks with it); a valid msgs without nested results comes back as an
// equal copy.
func Repair(msgs []llm.Message) ([]llm.Message, []Problem) {
	probs := Check(msgs)
	out := make([]llm.Message, 0, len(msgs))
	for i := 0; i < len(msgs); {
		m := msgs[i]
		if m.Role != llm.RoleAssistant {
			// Outside an exchange results are orphans: keep only the
			// rest of the message.
			if rest, ok := withoutResults(m); ok {
				out = append(out, rest)
			}
			i++
			continue
		}
		end := runEnd(msgs, i)
		out = repairExchange(out, msgs, i, end)
		i = end
	}
	return out, probs
}

// withoutResults returns m without the tool results it carries, and whether
// anything is left.
func withoutResults(m llm.Message) (llm.Message, bool) {
	if m.Role == llm.RoleTool {
		return llm.Message{}, false
	}
	if !isResultCarrier(&m) {
		return m, true
	}
	rest := m
	rest.Content = nil
	for _, b := range m.Content {
		if _, ok := b.(llm.ToolResult); !ok {
			rest.Content = append(rest.Content, b)
		}
	}
	return rest, len(rest.Content) > 0
}

func repairExchange(out, msgs []llm.Message, i, end int) []llm.Message {
	a := msgs[i]
	var calls []llm.ToolUse
	seen := map[string]bool{}
	clean := a
	clean.Content = make([]llm.Block, 0, len(a.Content))
	for _, b := range a.Content {
		if u, ok := b.(llm.ToolUse); ok {
			if u.ID == "" || seen[u.ID] {
				continue
			}
			seen[u.ID] = true
			calls = append(calls, u)
		}
		clean.Content = append(clean.Content, b)
	}
	if len(clean.Content) == 0 {
		// Nothing but unusable calls: the message goes, and its results
		// become orphans.
		for k := i + 1; k < end; k++ {
			if rest, ok := withoutResults(msgs[k]); ok {
				out = append(out, rest)
			}
		}
		return out
	}
	out = append(out, clean)

	// First result for each call, as a RoleTool message.
	results := map[string]llm.Message{}
	var trailing []llm.Message
	for k := i + 1; k < end; k++ {
		r := msgs[k]
		if r.Role == llm.RoleTool {
			if seen[r.ToolCallID] {
				if _, dup := results[r.ToolCallID]; !dup {
					results[r.ToolCallID] = r
				}
			}
			continue
		}
		for _, b := range r.Content {
			tr, ok := b.(llm.ToolResult)
			if !ok || !seen[tr.ToolUseID] {
				continue
			}
			if _, dup := results[tr.ToolUseID]; !dup {
				results[tr.ToolUseID] = llm.Message{Role: llm.RoleTool, ToolCallID: tr.ToolUseID, IsError: tr.IsError, Content: tr.Content}
			}
		}
		if rest, ok := withoutResults(r); ok {
			trailing = append(trailing, rest)
		}
	}
	for _, c := range calls {
		r, ok := results[c.ID]
		if !ok {
			r = llm.ToolResultText(c.ID, InterruptedResult, true)
		}
		out = append(out, r)
	}
	return append(out, trailing...)
}
