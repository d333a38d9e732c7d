package session_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/session"
)

func TestValidateID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id string
		ok bool
	}{
		{"a", true},
		{"abc-DEF_123.txt", true},
		{".hidden", true},
		{"a..b", true},
		{"...", true},
		{strings.Repeat("x", session.MaxIDLen), true},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"/abs", false},
		{"a/b", false},
		{`a\b`, false},
		{"C:", false},
		{"a\x00b", false},
		{"a b", false},
		{"tab\t", false},
		{"é", false},
		{"a%2fb", false},
		{strings.Repeat("x", session.MaxIDLen+1), false},
	}
	for _, tc := range tests {
		err := session.ValidateID(tc.id)
		if tc.ok && err != nil {
			t.Errorf("ValidateID(%q) = %v, want ok", tc.id, err)
		}
		if !tc.ok && !errors.Is(err, session.ErrInvalidID) {
			t.Errorf("ValidateID(%q) = %v, want ErrInvalidID", tc.id, err)
		}
	}
}

func TestNewID(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	var ids []string
	for range 1000 {
		id := session.NewID()
		if err := session.ValidateID(id); err != nil {
			t.Fatalf("NewID() = %q: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	// Ids sort by time: one made later sorts after.
	time.Sleep(2 * time.Millisecond)
	later := session.NewID()
	if slices.Max(ids) >= later {
		t.Errorf("NewID %q made later sorts before %q", later, slices.Max(ids))
	}
	if strings.ToLower(later) != later {
		t.Errorf("NewID %q is not lower case (case-insensitive file systems)", later)
	}
}
