package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// ErrNoResult is wrapped by the error result of a call to a replayed tool
// the record has no result for.
var ErrNoResult = errors.New("replay: no recorded result for this tool call")

// recordedResult is one tool call's result as recorded.
type recordedResult struct {
	name    string
	output  string
	isError bool
}

// results indexes the record's tool results by call id, and by tool name
// in call order: the tool lines first, then the tool-result messages of
// the recorded requests for calls without a line.
func (rec *Record) results() (map[string]recordedResult, map[string][]recordedResult) {
	byID := map[string]recordedResult{}
	var order []string
	for _, t := range rec.Tools {
		if _, dup := byID[t.ID]; !dup {
			order = append(order, t.ID)
		}
		byID[t.ID] = recordedResult{name: t.Name, output: t.Output, isError: t.IsError}
	}
	names := map[string]string{} // call id → tool name, from the responses
	for _, c := range rec.Calls {
		if c.Response == nil {
			continue
		}
		for _, u := range c.Response.Message.ToolUses() {
			if _, ok := names[u.ID]; !ok {
				names[u.ID] = u.Name
			}
		}
	}
	for _, c := range rec.Calls {
		for _, m := range c.Request.Messages {
			if m.Role != llm.RoleTool {
				continue
			}
			if _, ok := byID[m.ToolCallID]; ok {
				continue
			}
			byID[m.ToolCallID] = recordedResult{name: names[m.ToolCallID], output: m.Text(), isError: m.IsError}
			order = append(order, m.ToolCallID)
		}
	}
	byName := map[string][]recordedResult{}
	for _, id := range order {
		r := byID[id]
		byName[r.name] = append(byName[r.name], r)
	}
	return byID, byName
}

// ToolMiddleware returns the tool middleware (for
// agent.Config.ToolMiddleware) that answers the calls of the named tools
// with their recorded results instead of running them: the result of the
// call with the same tool_call_id, else the next unused recorded result of
// that tool, in order. A call the record has no result for gets an error
// result wrapping ErrNoResult. Calls to other tools run for real.
func (rec *Record) ToolMiddleware(names ...string) tool.Middleware {
	byID, byName := rec.results()
	var mu sync.Mutex
	used := map[string]int{} // per tool: how many results were taken by order
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call tool.Call) (string, error) {
			if !slices.Contains(names, call.Name) {
				return next(ctx, call)
			}
			r, ok := byID[call.ID]
			if !ok || r.name != call.Name && r.name != "" {
				mu.Lock()
				list := byName[call.Name]
				if i := used[call.Name]; i < len(list) {
					r, ok = list[i], true
					used[call.Name] = i + 1
				} else {
					ok = false
				}
				mu.Unlock()
			}
			if !ok {
				return "", fmt.Errorf("%w (tool %q, call %s)", ErrNoResult, call.Name, call.ID)
			}
			if r.isError {
				return "", errors.New(r.output)
			}
			return r.output, nil
		}
	}
}

// StandIns returns a tool for each tool the record's requests defined
// that has is false for (a tool the current configuration lacks), with
// the recorded name, description and parameters. A stand-in never runs:
// give its name to [Record.ToolMiddleware] so its calls are answered from
// the record; run alone, it answers with an error wrapping ErrNoResult.
func (rec *Record) StandIns(has func(name string) bool) []tool.Tool {
	var out []tool.Tool
	seen := map[string]bool{}
	for _, c := range rec.Calls {
		for _, d := range c.Request.Tools {
			if seen[d.Name] || (has != nil && has(d.Name)) {
				continue
			}
			seen[d.Name] = true
			out = append(out, standIn{d})
		}
	}
	return out
}

// ToolNames returns the names of the tools the record's requests defined,
// in the order they first appear.
func (rec *Record) ToolNames() []string {
	var out []string
	for _, c := range rec.Calls {
		for _, d := range c.Request.Tools {
			if !slices.Contains(out, d.Name) {
				out = append(out, d.Name)
			}
		}
	}
	return out
}

// standIn is a recorded tool definition as a tool.Tool.
type standIn struct{ d llm.ToolDefinition }

func (s standIn) Name() string                { return s.d.Name }
func (s standIn) Description() string         { return s.d.Description }
func (s standIn) Parameters() json.RawMessage { return s.d.Parameters }
func (s standIn) Invoke(context.Context, json.RawMessage) (string, error) {
	return "", fmt.Errorf("%w (tool %q is only in the record)", ErrNoResult, s.d.Name)
}
