package tool

import (
	"time"

	"github.com/agcore/agcore/llm"
)

// Timed is implemented by tools with their own per-call time limit, which
// overrides the invoker's default.
type Timed interface {
	Tool
	Timeout() time.Duration
}

// Definition returns t's wire description for a Request: its name,
// description and parameters. The tool itself stays with the caller; the
// tool loop runs it by name.
func Definition(t Tool) llm.ToolDefinition {
	return llm.ToolDefinition{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters()}
}

// Definitions returns the wire descriptions of tools, in order (nil for no
// tools).
func Definitions(tools []Tool) []llm.ToolDefinition {
	if len(tools) == 0 {
		return nil
	}
	out := make([]llm.ToolDefinition, len(tools))
	for i, t := range tools {
		out[i] = Definition(t)
	}
	return out
}

// Find returns the tool called name among tools (the first, when two share
// it). A linear scan: a request holds few tools, and no map is built.
func Find(tools []Tool, name string) (Tool, bool) {
	for _, t := range tools {
		if t.Name() == name {
			return t, true
		}
	}
	return nil, false
}

// Merge returns the tools of every group in order, skipping a tool whose
// name an earlier one already took, so the first group wins a name. It
// returns the first group itself when the others add nothing.
func Merge(groups ...[]Tool) []Tool {
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	if n == 0 {
		return nil
	}
	if len(groups[0]) == n {
		return groups[0]
	}
	out := make([]Tool, 0, n)
	seen := make(map[string]struct{}, n)
	for _, g := range groups {
		for _, t := range g {
			name := t.Name()
			if _, dup := seen[name]; dup {
				continue
			}
			seen[name] = struct{}{}
			out = append(out, t)
		}
	}
	return out
}
