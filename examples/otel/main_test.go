package main

import (
	"os"
	"testing"
)

// TestExampleRuns runs the example offline (printing the span tree), so it
// cannot rot.
func TestExampleRuns(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	stdout := os.Stdout
	os.Stdout = devnull
	defer func() { os.Stdout = stdout }()
	main()
}
