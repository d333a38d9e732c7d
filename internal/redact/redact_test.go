package redact

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"memory:", "memory:"},
		{"sqlite:/home/me/a b@c.db", "sqlite:/home/me/a b@c.db"},
		{"file:./sessions", "file:./sessions"},
		{"redis://127.0.0.1:6379/13", "redis://127.0.0.1:6379/13"},
		{"redis://:s3cret@127.0.0.1:6379/13", "redis://:xxxxx@127.0.0.1:6379/13"},
		{"postgres://root:p%40ss@db:5432/test?sslmode=disable", "postgres://root:xxxxx@db:5432/test?sslmode=disable"},
		{"postgres://root@db/test?password=hunter2&sslmode=disable", "postgres://root@db/test?password=xxxxx&sslmode=disable"},
		{"postgres://u:pw@h:notaport/x", "postgres://…"},
		{"postgres://h:notaport/x?password=pw", "postgres://…"},
		{"http://[::1", "http://[::1"},
		{"https://", "https://"},
		{"https:///v1", "https:///v1"},
		{" https://gw.example", " https://gw.example"},
		{"https://u:pw@proxy.example/v1", "https://u:xxxxx@proxy.example/v1"},
	} {
		if got := URL(tc.in); got != tc.want {
			t.Errorf("URL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestBase(t *testing.T) {
	if got := Base("https://u:pw@proxy.example/v1?token=t0k#x"); got != "https://u:xxxxx@proxy.example/v1?…" {
		t.Errorf("Base = %q", got)
	}
}

// A password is hidden in a text however it was written in the URL.
func TestSecretsText(t *testing.T) {
	for _, raw := range []string{
		"postgres://u:p%40ss%2Fw@h/db",
		"postgres://u:p%40ss%2Fw@h:notaport/db",
		"redis://h/0?password=p%40ss%2Fw",
	} {
		sec := Secrets(raw)
		msg := Text("failed: p@ss/w, p%40ss%2Fw in "+raw, sec)
		if strings.Contains(msg, "p@ss") || strings.Contains(msg, "p%40ss") {
			t.Errorf("%s: %q (secrets %q)", raw, msg, sec)
		}
	}
	if s := Secrets("memory:"); s != nil {
		t.Errorf("Secrets(memory:) = %q", s)
	}
}

// TestOneMask fails when production code of the module hides a secret with
// a mask of its own: every redaction goes through this package, so a
// reader sees one mask ([Mask]) whatever hid the secret.
func TestOneMask(t *testing.T) {
	root := filepath.Join("..", "..")
	others := []string{`"[redacted]"`, `"REDACTED"`, `"[REDACTED]"`, `"***"`, `"<redacted>"`}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "node_modules" || (strings.HasPrefix(n, ".") && path != root) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range others {
			if strings.Contains(string(b), m) {
				t.Errorf("%s masks with %s: use internal/redact (Text, URL, Base; the mask %q)", path, m, Mask)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
