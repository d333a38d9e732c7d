//go:build unix

package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A user who cannot write agcore.db can still list and show its sessions.
// As root (where file modes do not stop writes) the reading command runs
// as the user nobody; otherwise the database and its directory are made
// read-only.
func TestSessionsOfADatabaseTheUserCannotWrite(t *testing.T) {
	t.Parallel()
	srv := newFake(t, openaiReply(turn{text: "Stored."}))
	c := newCLI(t).openai(srv, "sk-test")
	home, err := os.MkdirTemp("", "agcore-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(home, 0o755); os.RemoveAll(home) })
	c.home, c.env["AGCORE_HOME"], c.env["HOME"] = home, home, home
	c.ok("run", "--tools", "", "--session", "kept", "Keep this")

	db := filepath.Join(home, "agcore.db")
	if os.Geteuid() == 0 {
		os.Chmod(home, 0o755)
		os.Chmod(db, 0o644)
	} else {
		os.Chmod(db, 0o444)
		os.Chmod(home, 0o555)
	}
	for _, args := range [][]string{{"sessions", "list"}, {"sessions", "show", "kept"}} {
		cmd := c.command(t.Context(), args...)
		cmd.Dir = home
		if os.Geteuid() == 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "kept") || strings.Contains(string(out), "permission denied") {
			t.Errorf("%v as a user who cannot write the database: %v\n%s", args, err, out)
		}
	}
}
