package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sessiontest"
	"github.com/agcore/agcore/session/sqlite"
)

func open(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	s, err := sqlite.Open(tb.Context(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

func TestContract(t *testing.T) {
	t.Parallel()
	sessiontest.Run(t, func(t *testing.T) session.Store {
		return open(t, filepath.Join(t.TempDir(), "sessions.db"))
	})
}

func BenchmarkStoreAppend(b *testing.B) {
	sessiontest.BenchAppend(b, func(b *testing.B) session.Store {
		return open(b, filepath.Join(b.TempDir(), "sessions.db"))
	})
}

func BenchmarkSessionLoad(b *testing.B) {
	sessiontest.BenchLoad(b, func(b *testing.B) session.Store {
		return open(b, filepath.Join(b.TempDir(), "sessions.db"))
	})
}

func BenchmarkAppendConcurrent64(b *testing.B) {
	sessiontest.BenchAppendConcurrent(b, 64, func(b *testing.B) session.Store {
		return open(b, filepath.Join(b.TempDir(), "sessions.db"))
	})
}

func TestCrashConsistency(t *testing.T) {
	t.Parallel()
	kills := 25
	if testing.Short() {
		kills = 5
	}
	sessiontest.Crash(t, kills, func(dir string) (session.Store, error) {
		return sqlite.Open(context.Background(), filepath.Join(dir, "sessions.db"))
	})
}

func BenchmarkList(b *testing.B) {
	sessiontest.BenchList(b, func(b *testing.B) session.Store {
		return open(b, filepath.Join(b.TempDir(), "sessions.db"))
	})
}

// BenchmarkLoadView loads cold (no cache), as a new process does.
func BenchmarkLoadView(b *testing.B) {
	sessiontest.BenchLoadView(b, func(b *testing.B) session.Store {
		return openWith(b, filepath.Join(b.TempDir(), "sessions.db"), sqlite.WithCacheBytes(0))
	})
}
