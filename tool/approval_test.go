package tool_test

import (
	"errors"
	"testing"

	"github.com/agcore/agcore/tool"
)

func TestDecisionDenial(t *testing.T) {
	if err := (tool.Decision{Approved: true}).Denial("write"); err != nil {
		t.Fatalf("an approval's Denial = %v, want nil", err)
	}
	err := tool.Decision{Reason: "not today"}.Denial("write")
	var d *tool.DeniedError
	if !errors.As(err, &d) || d.Tool != "write" || d.By != "the approver" || d.Reason != "not today" {
		t.Fatalf("Denial = %#v", err)
	}
	if want := `the call to tool "write" was denied by the approver and did not run: not today`; err.Error() != want {
		t.Errorf("Denial text = %q, want %q", err, want)
	}
	if err := (tool.Decision{}).Denial("write"); err.Error() != `the call to tool "write" was denied by the approver and did not run` {
		t.Errorf("zero Decision's Denial = %q", err)
	}
}
