package postgres_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if any test leaves a goroutine behind (every
// test closes the pools it opens).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
