package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestTheCommittedRecordReplays replays the committed record offline: as
// recorded without drift, with changed instructions with the drift named
// for each call, and strictly with a *replay.DriftError.
func TestTheCommittedRecordReplays(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"record: 1 turn, 3 model calls by demo/scripted-demo",
		"== as recorded ==\nturn 1 answered",
		"no drift: 3 calls, every request as recorded",
		`call 1: system prompt changed: "You are a careful reader. Answer from the notes." → "Answer in French."`,
		`call 3: system prompt changed`,
		"strict replay failed at call 1: 1 difference(s)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
