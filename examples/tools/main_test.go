package main

import (
	"os"
	"testing"
)

// TestExampleRuns runs the example offline, so it cannot rot.
func TestExampleRuns(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	stdin, stdout := os.Stdin, os.Stdout
	os.Stdin, os.Stdout = devnull, devnull
	defer func() { os.Stdin, os.Stdout = stdin, stdout }()
	main()
}
