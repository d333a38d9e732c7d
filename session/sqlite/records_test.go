package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sessiontest"
	"github.com/agcore/agcore/session/sqlite"
)

func TestRecordsContract(t *testing.T) {
	t.Parallel()
	sessiontest.RunRecords(t, func(t *testing.T) session.Records {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "agcore.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}
