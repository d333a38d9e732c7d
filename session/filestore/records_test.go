package filestore_test

import (
	"testing"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/sessiontest"
)

func TestRecordsContract(t *testing.T) {
	t.Parallel()
	sessiontest.RunRecords(t, func(t *testing.T) session.Records {
		s, err := filestore.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestRecordsSurviveReopen: records are in the directory, not the process.
func TestRecordsSurviveReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	put, err := s.PutRecord(t.Context(), "ns", session.Record{Key: "k", Value: []byte("v")})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = filestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetRecord(t.Context(), "ns", "k")
	if err != nil || string(got.Value) != "v" || got.Version != put.Version {
		t.Fatalf("after reopening: %+v, %v", got, err)
	}
	if page, err := s.List(t.Context(), session.ListOptions{}); err != nil || len(page.Sessions) != 0 {
		t.Fatalf("the records file shows in the session list: %+v, %v", page, err)
	}
}
