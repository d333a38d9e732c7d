package filestore_test

import (
	"context"
	"log/slog"
	"sync/atomic"
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
	t.Parallel()
	sessiontest.Run(t, func(t *testing.T) session.Store { return open(t, t.TempDir()) })
}

func BenchmarkStoreAppend(b *testing.B) {
	sessiontest.BenchAppend(b, func(b *testing.B) session.Store { return open(b, b.TempDir()) })
}

func BenchmarkSessionLoad(b *testing.B) {
	sessiontest.BenchLoad(b, func(b *testing.B) session.Store { return open(b, b.TempDir()) })
}

func TestCrashConsistency(t *testing.T) {
	t.Parallel()
	kills := 25
	if testing.Short() {
		kills = 5
	}
	var torn atomic.Int64
	logger := slog.New(countingHandler{&torn})
	sessiontest.Crash(t, kills, func(dir string) (session.Store, error) {
		return filestore.Open(dir, filestore.WithLogger(logger))
	})
	t.Logf("torn last lines dropped on load: %d", torn.Load())
}

// countingHandler counts the records logged through it.
type countingHandler struct{ n *atomic.Int64 }

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(context.Context, slog.Record) error {
	h.n.Add(1)
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

func BenchmarkList(b *testing.B) {
	sessiontest.BenchList(b, func(b *testing.B) session.Store { return open(b, b.TempDir()) })
}

func BenchmarkLoadView(b *testing.B) {
	sessiontest.BenchLoadView(b, func(b *testing.B) session.Store { return open(b, b.TempDir()) })
}
