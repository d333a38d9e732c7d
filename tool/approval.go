package tool

import (
	"context"
	"errors"
	"fmt"
)

// Approval's decision model lives here, in one place: which tools need
// approval ([Approvable], [NeedsApproval]), who decides ([Approver]), the
// answer ([Decision]) and what a denial is ([DeniedError], [ErrNotPending]).
// The tool loop (package middleware) asks the Approver before running such a
// call; package approval's Broker is an Approver that parks calls until a
// person decides them; the temporal module's workflow takes decisions by
// Update and turns them into results with [Decision.Denial].

// Approvable is implemented by tools that may need the user's approval
// before a call; the tool loop asks its approver when NeedsApproval is true.
type Approvable interface {
	Tool
	NeedsApproval() bool
}

// NeedsApproval reports whether t asks for approval before each call.
func NeedsApproval(t Tool) bool {
	a, ok := t.(Approvable)
	return ok && a.NeedsApproval()
}

// Approver decides whether a tool call that needs approval may run. It sees
// the call as it will run (after any tool middleware changed it).
// Implementations given to a tool loop must be safe for concurrent use: the
// calls of one batch are decided in parallel.
type Approver interface {
	Approve(ctx context.Context, call Call) (Decision, error)
}

// ApproverFunc adapts a function to [Approver].
type ApproverFunc func(ctx context.Context, call Call) (Decision, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, call Call) (Decision, error) {
	return f(ctx, call)
}

// Decision is an approver's answer. The zero value denies.
type Decision struct {
	Approved bool
	// Reason, for a denial, is told to the model.
	Reason string
	// Content, with an approval, is the decider's answer to a pending
	// decision that asks for input rather than leave to run (an MCP
	// server's form, the tool mcp.ElicitationTool): a JSON object's text,
	// which whoever takes the decision checks against the requested schema
	// (the server gets it, over the form's defaults). Empty for none; the
	// tool loop ignores it. (Text, not json.RawMessage: a Decision stays
	// comparable.)
	Content string
}

// Denial returns the error result of a call to the tool name that d
// decided: nil when d approves, else a [*DeniedError] by the approver with
// d's reason.
func (d Decision) Denial(name string) error {
	if d.Approved {
		return nil
	}
	return &DeniedError{Tool: name, By: "the approver", Reason: d.Reason}
}

// DeniedError is the error result of a tool call that was not allowed to
// run: the approver or a hook denied it. The model reads its text.
type DeniedError struct {
	Tool   string // the tool called
	By     string // who denied: "the approver", `hook "name"`
	Reason string // why, when given
}

// Error is the text the model reads: which tool, who denied it, why.
func (e *DeniedError) Error() string {
	s := fmt.Sprintf("the call to tool %q was denied by %s and did not run", e.Tool, e.By)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// ErrNotPending is matched (errors.Is) by the error of a decision for a
// call that is not waiting for one: never seen, decided already, or given
// up. approval.ErrUnknown and the temporal module's ErrUnknownCall wrap it.
var ErrNotPending = errors.New("no pending approval with this call id")
