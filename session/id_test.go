package session_test

import (
	"encoding/hex"
	"errors"
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
	before := time.Now().UTC().Add(-time.Second)
	for range 1000 {
		id := session.NewID()
		if err := session.ValidateID(id); err != nil {
			t.Fatalf("NewID() = %q: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("NewID repeated %q", id)
		}
		seen[id] = true
		if strings.ToLower(id) != id {
			t.Errorf("NewID %q is not lower case (case-insensitive file systems)", id)
		}
		// The random part leads: 24 hex digits, then the time.
		random, when, ok := strings.Cut(id, "-")
		if _, err := hex.DecodeString(random); err != nil || len(random) != 24 || !ok {
			t.Fatalf("NewID %q does not start with 24 hex digits and a dash", id)
		}
		made, err := time.Parse("20060102-150405.000", when)
		if err != nil || made.Before(before.Truncate(time.Millisecond)) || made.After(time.Now().UTC().Add(time.Second)) {
			t.Fatalf("NewID %q: the time after the random part is %v, %v; want about now", id, made, err)
		}
	}
}

// TestNewIDPrefixes: a few leading characters of an id tell it from the
// others made at the same time, so "any unique prefix" is short.
func TestNewIDPrefixes(t *testing.T) {
	t.Parallel()
	const n, prefix = 1000, 10 // 40 random bits: a clash among 1000 ids has odds of about 1 in 2 million
	seen := map[string]string{}
	for range n {
		id := session.NewID()
		if other, ok := seen[id[:prefix]]; ok {
			t.Fatalf("%q and %q share their first %d characters", id, other, prefix)
		}
		seen[id[:prefix]] = id
	}
}

// TestOldIDsStayValid: ids of the earlier form (the time first) are
// still accepted.
func TestOldIDsStayValid(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"20261203-041905.196-cb55a1f0e2d34c5b6a7f8e9d", "20260105-143012.123-9f86d081884c7d65d6d4f5e2"} {
		if err := session.ValidateID(id); err != nil {
			t.Errorf("ValidateID(%q) = %v", id, err)
		}
	}
}
