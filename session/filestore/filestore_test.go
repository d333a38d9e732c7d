package filestore_test

import (
	"testing"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/sessiontest"
)

func open(tb testing.TB, dir string) *filestore.Store {
	tb.Helper()
	s, err := filestore.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Store { return open(t, t.TempDir()) })
}

func BenchmarkStoreAppend(b *testing.B) {
	sessiontest.BenchAppend(b, func(b *testing.B) session.Store { return open(b, b.TempDir()) })
}

func BenchmarkSessionLoad(b *testing.B) {
	sessiontest.BenchLoad(b, func(b *testing.B) session.Store { return open(b, b.TempDir()) })
}
