package main_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Mistakes in flags, the environment or the config file are found before
// anything is sent or stored: exit status 2, one line on stderr that says
// what to do, and no session.
func TestUsageMistakesExit2BeforeAnyRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string // in the one line
	}{
		{"a base URL that is not a URL", nil, []string{"--base-url", "notaurl"}, `--base-url "notaurl" is not a URL: give the server's address`},
		{"a base URL from the environment", map[string]string{"OPENAI_BASE_URL": "localhost:8000"}, nil, `OPENAI_BASE_URL "localhost:8000"`},
		{"a base URL with another scheme", nil, []string{"--base-url", "ftp://host/v1"}, `has the scheme "ftp"`},
		{"a store of no kind", nil, []string{"--store", "bogus:x"}, `--store "bogus:x" is not a store: give sqlite:PATH, file:DIR, memory:, postgres://… or redis://…`},
		{"a file store without a directory", nil, []string{"--store", "file:"}, `names no directory`},
		{"a root that does not exist", nil, []string{"--root", "/nonexistent-agcore-root"}, `--root "/nonexistent-agcore-root": no such directory; give an existing directory`},
		{"a root that is a file", nil, []string{"--root", "file.txt"}, `is a file, not a directory`},
		{"a timeout that is not a duration", nil, []string{"--timeout", "soon"}, `--timeout "soon" is not a duration`},
		{"an unknown provider", nil, []string{"--provider", "nosuch"}, `unknown provider "nosuch"`},
		{"an invalid session id", nil, []string{"--session", "../x"}, `--session "../x"`},
		{"--session with --continue", nil, []string{"--session", "a", "-c"}, `give one of them`},
		{"--continue without a session", nil, []string{"-c"}, `there is no session in sqlite:`},
		{"an unknown flag", nil, []string{"--frobnicate"}, `unknown flag: --frobnicate (see agcore run --help)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t) // any request fails the test
			c := newCLI(t).openai(srv, "sk-test")
			writeFiles(t, c.dir, map[string]string{"file.txt": "x"})
			for k, v := range tt.env {
				c.env[k] = v
			}
			r := c.run("", append(append([]string{"run"}, tt.args...), "hello")...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "agcore: ") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("stderr = %q, want one line with %q", r.stderr, tt.want)
			}
			if len(srv.got()) != 0 {
				t.Errorf("%d requests sent", len(srv.got()))
			}
			if regexp.MustCompile(`(?m)^session \S+$`).MatchString(r.stderr) || r.stdout != "" {
				t.Errorf("a usage mistake printed a session or an answer:\nstdout %q\nstderr %q", r.stdout, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(c.home, "agcore.db")); err == nil && tt.args[0] != "-c" {
				t.Error("a usage mistake created the session store")
			}
		})
	}
}

// With --json a usage mistake is also an error event, so a program reading
// stdout always gets one.
func TestUsageMistakeIsAnErrorEventWithJSON(t *testing.T) {
	t.Parallel()
	srv := newFake(t)
	c := newCLI(t).openai(srv, "sk-test")
	r := c.run("", "run", "--json", "--base-url", "notaurl", "hello")
	if e := last(t, events(t, r.stdout)); r.code != 2 || e.typ() != "error" || e["code"] != "invalid_request" || !strings.Contains(e["message"].(string), "is not a URL") {
		t.Errorf("exit %d, last event %v", r.code, e)
	}
}
