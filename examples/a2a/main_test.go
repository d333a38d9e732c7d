package main

import (
	"strings"
	"testing"
)

// TestExampleRuns runs the example offline, so it cannot rot.
func TestExampleRuns(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"agent \"deployer\"", "answer: Hello!", "state: input-required", "deploy({})", "answer: Done: version 42 is live."} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
}
