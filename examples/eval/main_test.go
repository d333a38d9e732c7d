package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestEvalOffline runs the example: every case passes as recorded; with
// changed instructions the record's case drifts and fails, the demo's
// cases still pass.
func TestEvalOffline(t *testing.T) {
	var out bytes.Buffer
	rep, err := run(context.Background(), &out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	if !rep.OK() || len(rep.Cases) != 3 {
		t.Fatalf("as recorded: %d passed, %d failed\n%s", rep.Passed, rep.Failed, got)
	}
	for _, want := range []string{
		"== as recorded ==",
		"3 of 3 cases passed",
		"== instructions changed ==",
		"recorded-summary  FAIL drift",
		`recorded-summary: no_drift 0.00 < 1.00: drift: call 1: system prompt changed: "You are a careful reader. Answer from the notes." → "Answer in French."`,
		"2 of 3 cases passed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
