package testenv

import (
	"os"
	"testing"
)

// unsetCI removes CI for the rest of the test (t.Setenv has restored it
// by the test's end).
func unsetCI(t *testing.T) {
	t.Helper()
	if err := os.Unsetenv("CI"); err != nil {
		t.Fatal(err)
	}
}
