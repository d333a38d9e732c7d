package sqlite_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sessiontest"
	"github.com/agcore/agcore/session/sqlite"
)

// rawDB opens the database file directly, beside the store.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestDurabilitySettings(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	if err := s.Append(t.Context(), "x", session.Turn{ID: "1", Messages: []llm.Message{llm.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
	var mode string
	var version int
	db := rawDB(t, path)
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != sqlite.SchemaVersion {
		t.Errorf("user_version = %d, %v; want %d", version, err, sqlite.SchemaVersion)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err) // fi is nil
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("database file mode %v; want 0600", fi.Mode().Perm())
	}
}

func TestReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	want := sessiontest.Conversation("r", 8)
	if err := s.Append(t.Context(), "keep", session.Turn{ID: "1", Messages: want, Hashes: []uint64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, path) // migrations are a no-op on a current schema
	got, err := s2.Load(t.Context(), "keep")
	if err != nil || len(got.Messages) != 8 || len(got.Hashes) != 2 {
		t.Fatalf("after reopen: %v, %+v", err, got)
	}
	if err := s2.Append(t.Context(), "keep", session.Turn{ID: "1", Messages: want}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s2.Load(t.Context(), "keep"); got.Turns != 1 {
		t.Errorf("a retried turn after reopen was stored again: %d turns", got.Turns)
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := rawDB(t, path)
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, sqlite.SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := sqlite.Open(t.Context(), path); err == nil || !strings.Contains(err.Error(), "newer") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of a newer schema: err = %v, want a refusal", err)
	}
}

func TestAwkwardPath(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a dir with spaces?#%")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "my sessions?.db")
	s := open(t, path)
	if err := s.Append(t.Context(), "x", session.Turn{ID: "1", Messages: []llm.Message{llm.UserText("hi")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the given path: %v", err)
	}
	if s.Path() != path {
		t.Errorf("Path() = %q, want %q", s.Path(), path)
	}
}

// Two stores on one file stand in for two processes: SQLite's locking and
// the busy timeout keep every append.
func TestTwoStoresOneFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.db")
	stores := []*sqlite.Store{open(t, path), open(t, path)}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i, s := range stores {
		for g := range 3 {
			wg.Go(func() {
				for n := range 10 {
					tag := fmt.Sprintf("s%d-g%d-%d", i, g, n)
					if err := s.Append(t.Context(), "shared", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 2)}); err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := stores[0].Load(t.Context(), "shared")
	if err != nil || got.Turns != 60 || len(got.Messages) != 120 {
		t.Fatalf("Load = %v, %d turns, %d messages; want 60, 120", err, got.Turns, len(got.Messages))
	}
}
