package session_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/session"
)

// FuzzValidateID feeds arbitrary ids: every id ValidateID accepts is one
// plain file name, so a store that joins it to its directory (with any
// suffix) names a file directly inside that directory, never above it,
// never absolute, never through a separator or a NUL byte.
func FuzzValidateID(f *testing.F) {
	for _, s := range []string{"a", "..", ".", "../x", "/etc/passwd", `a\b`, "a\x00b", "C:", "a..b", "...", ".hidden", "x/", "é", session.NewID()} {
		f.Add(s)
	}
	root := filepath.Join(string(filepath.Separator)+"store", "dir")
	f.Fuzz(func(t *testing.T, id string) {
		if session.ValidateID(id) != nil {
			return
		}
		if !filepath.IsLocal(id) || strings.ContainsAny(id, `/\:`+"\x00") || filepath.Base(id) != id || len(id) > session.MaxIDLen {
			t.Fatalf("ValidateID accepted %q, which is not a plain file name", id)
		}
		for _, suffix := range []string{"", ".jsonl", ".meta.json"} {
			if p := filepath.Join(root, id+suffix); filepath.Dir(p) != root {
				t.Fatalf("ValidateID accepted %q, which names %s outside %s", id, p, root)
			}
		}
	})
}
