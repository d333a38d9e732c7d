package stores_test

import (
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/session"
)

// TestEveryStoreHasRecords: what session.Open returns, and a Scoped view
// of it, reach the store's records.
func TestEveryStoreHasRecords(t *testing.T) {
	dir := t.TempDir()
	for _, u := range []string{"memory:", "file:" + filepath.Join(dir, "files"), "sqlite:" + filepath.Join(dir, "a.db")} {
		st, err := session.Open(t.Context(), u)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []session.Store{st, session.Scoped(st, "alice")} {
			r, ok := session.RecordsOf(s)
			if !ok {
				t.Fatalf("%s: no records", u)
			}
			if _, err := r.PutRecord(t.Context(), "ns", session.Record{Key: "k", Value: []byte("v")}); err != nil {
				t.Fatalf("%s: %v", u, err)
			}
		}
		st.Close()
	}
}
