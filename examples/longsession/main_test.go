package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agcore/agcore/compact"
)

// TestLongSessionStaysInsideTheBudget runs the example at a reduced size:
// every request the model received is within the input budget, and the
// stored history, which outgrew the window several times over, validates.
func TestLongSessionStaysInsideTheBudget(t *testing.T) {
	const turns = 40
	var out bytes.Buffer
	sum, err := run(context.Background(), &out, turns)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(sum.Sent) != 2*turns {
		t.Errorf("the model received %d requests, want %d", len(sum.Sent), 2*turns)
	}
	for i, n := range sum.Sent {
		if n > sum.Budget {
			t.Errorf("request %d held %d tokens, over the budget of %d", i+1, n, sum.Budget)
		}
	}
	if err := compact.Validate(sum.Stored); err != nil {
		t.Errorf("the stored history does not validate: %v", err)
	}
	if n := compact.CounterFor(info).CountMessages(sum.Stored); n < 3*sum.Budget {
		t.Errorf("the history holds only %d tokens; the example should outgrow the budget of %d several times", n, sum.Budget)
	}
	if sum.Prefix.Requests != turns || sum.Prefix.PrefixStable == 0 {
		t.Errorf("prefix statistic %+v", sum.Prefix)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != turns+2 || !strings.HasPrefix(lines[len(lines)-1], "summary: ") {
		t.Errorf("output of %d lines, want a header, %d turns and a summary:\n%s", len(lines), turns, out.String())
	}
}
