package postgres_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/session/postgres"
	"github.com/agcore/agcore/session/sessiontest"
)

// privateServer is a PostgreSQL cluster of the test's own, in a temporary
// directory on a free port, so that restarting it cannot disturb the other
// packages' tests, which share the machine's server.
type privateServer struct {
	t    *testing.T
	bin  string // the directory of initdb and pg_ctl
	data string
	port int
	as   string // run the server as this user ("" for the current one)
}

// pgBinDir finds initdb and pg_ctl: on PATH, or in Debian's
// /usr/lib/postgresql/VERSION/bin.
func pgBinDir() string {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i]
		}
	}
	return ""
}

func startPrivateServer(t *testing.T) *privateServer {
	t.Helper()
	bin := pgBinDir()
	if bin == "" {
		testenv.Missing(t, "initdb and pg_ctl were not found (on PATH or in /usr/lib/postgresql/*/bin): install PostgreSQL's server package to run the restart test")
	}
	ps := &privateServer{t: t, bin: bin}
	// PostgreSQL refuses to run as root: as root, the cluster belongs to
	// the postgres user.
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			testenv.Missing(t, "running as root with no postgres user to run a private PostgreSQL server as")
		}
		ps.as = "postgres"
	}
	dir, err := os.MkdirTemp("", "agcore-pg-restart-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ps.data = filepath.Join(dir, "data")
	if ps.as != "" {
		if out, err := exec.Command("chown", ps.as, dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v: %s", err, out)
		}
	}
	ps.run("initdb", "-D", ps.data, "-A", "trust", "-U", "agcore", "--no-sync")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ps.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	ps.start()
	t.Cleanup(func() { ps.run("pg_ctl", "-D", ps.data, "-m", "immediate", "-w", "stop") })
	return ps
}

func (ps *privateServer) run(name string, args ...string) {
	ps.t.Helper()
	var cmd *exec.Cmd
	if ps.as != "" {
		cmd = exec.Command("runuser", append([]string{"-u", ps.as, "--", filepath.Join(ps.bin, name)}, args...)...)
	} else {
		cmd = exec.Command(filepath.Join(ps.bin, name), args...)
	}
	cmd.Dir = os.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		ps.t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func (ps *privateServer) start() {
	ps.t.Helper()
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=on -c synchronous_commit=on", ps.port, filepath.Dir(ps.data))
	ps.run("pg_ctl", "-D", ps.data, "-o", opts, "-l", filepath.Join(filepath.Dir(ps.data), "log"), "-w", "start")
}

// crash stops the server the way a power cut or an OOM kill would
// (immediate mode: no checkpoint; the next start replays the WAL).
func (ps *privateServer) crash() { ps.run("pg_ctl", "-D", ps.data, "-m", "immediate", "-w", "stop") }

func (ps *privateServer) url() string {
	return "postgres://agcore@127.0.0.1:" + strconv.Itoa(ps.port) + "/postgres?sslmode=disable&connect_timeout=2"
}

// The server crashes and restarts while two writers append to one session
// and a reader loads it (sessiontest.Outage): every call during the outage
// fails with session.ErrUnavailable, never a half-written turn; the same
// Store reconnects by itself; every acknowledged turn survived (WAL replay);
// retrying the failed appends stores every turn exactly once; and a store
// opened afresh sees the same session.
func TestFaultServerRestart(t *testing.T) {
	serverURL(t) // the suite's server settings (and the CI rule) apply here too
	ps := startPrivateServer(t)
	s := open(t, ps.url(), postgres.WithRetries(1))
	n, failed, loads := sessiontest.Outage(t, s, "r", true, func() {
		ps.crash()
		time.Sleep(300 * time.Millisecond)
		ps.start()
	})
	t.Logf("%d appends, %d failed during the outage (and were retried), %d loads failed", n, failed, loads)
	fresh, err := open(t, ps.url()).Load(t.Context(), "r")
	if err != nil || fresh.Turns != n+1 {
		t.Fatalf("a store opened afresh: %v, %d turns; want %d", err, fresh.Turns, n+1)
	}
}
