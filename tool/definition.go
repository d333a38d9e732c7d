package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agcore/agcore/llm"
)

// Approvable is implemented by tools that may need the user's approval
// before a call; the tool loop asks its approver when NeedsApproval is true.
type Approvable interface {
	Tool
	NeedsApproval() bool
}

// Timed is implemented by tools with their own per-call time limit, which
// overrides the invoker's default.
type Timed interface {
	Tool
	Timeout() time.Duration
}

// NeedsApproval reports whether t asks for approval before each call.
func NeedsApproval(t Tool) bool {
	a, ok := t.(Approvable)
	return ok && a.NeedsApproval()
}

// Definition returns t as a definition for a Request: its name, description
// and parameters, Func running t.Invoke, and NeedsApproval from t.
func Definition(t Tool) llm.ToolDefinition {
	return llm.ToolDefinition{
		Name:          t.Name(),
		Description:   t.Description(),
		Parameters:    t.Parameters(),
		Func:          t.Invoke,
		NeedsApproval: NeedsApproval(t),
	}
}

// Definitions is a list of tool definitions used as a tool lookup: its Get
// finds a definition by name and presents it as a [Tool]. The tool loop uses
// it over Request.Tools; a linear scan beats a map for the few tools a
// request holds.
type Definitions []llm.ToolDefinition

// Get returns the definition called name as a Tool. A definition without a
// Func (declared only) is found too; invoking it fails.
func (ds Definitions) Get(name string) (Tool, bool) {
	for i := range ds {
		if ds[i].Name == name {
			return defTool{&ds[i]}, true
		}
	}
	return nil, false
}

// defTool presents an llm.ToolDefinition as a Tool. Being one pointer, it
// fits in an interface without an allocation.
type defTool struct{ d *llm.ToolDefinition }

func (t defTool) Name() string                { return t.d.Name }
func (t defTool) Description() string         { return t.d.Description }
func (t defTool) Parameters() json.RawMessage { return t.d.ParametersOrEmpty() }
func (t defTool) NeedsApproval() bool         { return t.d.NeedsApproval }

// Invoke runs the definition's Func. A declared-only definition cannot run:
// its call is the caller's, so invoking it is a fatal error.
func (t defTool) Invoke(ctx context.Context, args json.RawMessage) (string, error) {
	if t.d.Func == nil {
		return "", Fatal(fmt.Errorf("tool %q is declared only (no Func) and cannot be invoked", t.d.Name))
	}
	return t.d.Func(ctx, args)
}

// IsDeclaredOnly reports whether t is a definition without a Func, whose
// calls the caller handles.
func IsDeclaredOnly(t Tool) bool {
	d, ok := t.(defTool)
	return ok && d.d.Func == nil
}
