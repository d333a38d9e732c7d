package postgres_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testenv"
	"github.com/agcore/agcore/session"
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
// and a reader loads it. Every call during the outage returns an error
// that errors.Is session.ErrUnavailable (never another kind, never a
// half-written turn); the same Store reconnects by itself once the server
// is back; retrying the failed appends with their turn ids stores every
// turn exactly once, and the session is valid.
func TestFaultServerRestart(t *testing.T) {
	serverURL(t) // the suite's server settings (and the CI rule) apply here too
	ps := startPrivateServer(t)
	s := open(t, ps.url(), postgres.WithRetries(1))
	ctx := t.Context()
	if err := s.Append(ctx, "r", session.Turn{ID: "t0", Messages: sessiontest.Conversation("t0", 4)}); err != nil {
		t.Fatal(err)
	}
	var (
		mu           sync.Mutex
		tags, failed []string
		otherErrs    []error
		okAfter      int
		restarted    bool
		loadFailures int
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				tag := fmt.Sprintf("w%d-%d", w, n)
				err := s.Append(ctx, "r", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)})
				mu.Lock()
				tags = append(tags, tag)
				switch {
				case err == nil:
					if restarted {
						okAfter++
					}
				case errors.Is(err, session.ErrUnavailable):
					failed = append(failed, tag)
				default:
					failed = append(failed, tag)
					otherErrs = append(otherErrs, err)
				}
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		})
	}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			_, err := s.Load(ctx, "r")
			if err != nil && !errors.Is(err, session.ErrUnavailable) {
				mu.Lock()
				otherErrs = append(otherErrs, fmt.Errorf("load: %w", err))
				mu.Unlock()
			} else if err != nil {
				mu.Lock()
				loadFailures++
				mu.Unlock()
			}
		}
	})
	time.Sleep(300 * time.Millisecond)
	ps.crash()
	time.Sleep(300 * time.Millisecond)
	ps.start()
	mu.Lock()
	restarted = true
	mu.Unlock()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := okAfter
		mu.Unlock()
		if n >= 10 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	for _, err := range otherErrs {
		t.Errorf("an error that is not session.ErrUnavailable: %v", err)
	}
	if okAfter < 10 {
		t.Fatalf("only %d appends succeeded after the restart: the store did not reconnect", okAfter)
	}
	if len(failed) == 0 || loadFailures == 0 {
		t.Fatalf("%d appends and %d loads failed during the outage: the test did not see it", len(failed), loadFailures)
	}
	for _, tag := range failed {
		if err := s.Append(ctx, "r", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)}); err != nil {
			t.Fatalf("retrying %s after the restart: %v", tag, err)
		}
	}
	t.Logf("%d appends, %d failed during the outage (and were retried), %d loads failed", len(tags), len(failed), loadFailures)
	checkOnce(t, s, "r", append(tags, "t0")...)
	if got, _ := s.Load(ctx, "r"); got.Turns != len(tags)+1 {
		t.Fatalf("%d turns, want %d", got.Turns, len(tags)+1)
	}
	// A store opened afresh sees the same.
	s2 := open(t, ps.url())
	checkOnce(t, s2, "r", append(tags, "t0")...)
}
