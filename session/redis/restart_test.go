package redis_test

import (
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/session/redis"
	"github.com/agcore/agcore/session/sessiontest"
)

// privateRedis is a redis-server of the test's own on a free port, with
// append-only persistence fsynced on every write (the durable setting the
// README recommends for sessions), so that killing it cannot disturb the
// other packages' tests, which share the machine's server.
type privateRedis struct {
	t    *testing.T
	dir  string
	port int
	cmd  *exec.Cmd
}

func startPrivateRedis(t *testing.T) *privateRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		testenv.Missing(t, "redis-server is not on PATH: install Redis to run the restart test")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pr := &privateRedis{t: t, dir: t.TempDir(), port: l.Addr().(*net.TCPAddr).Port}
	l.Close()
	pr.start()
	t.Cleanup(func() { pr.kill() })
	return pr
}

func (pr *privateRedis) start() {
	pr.t.Helper()
	pr.cmd = exec.Command("redis-server", "--port", strconv.Itoa(pr.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", pr.dir)
	if err := pr.cmd.Start(); err != nil {
		pr.t.Fatal(err)
	}
	for range 500 {
		c, err := net.Dial("tcp", pr.addr())
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	pr.t.Fatal("the private redis-server never listened")
}

// kill stops the server as a crash would (SIGKILL: nothing flushed but
// what appendfsync always already wrote).
func (pr *privateRedis) kill() {
	if pr.cmd != nil && pr.cmd.Process != nil {
		pr.cmd.Process.Kill()
		pr.cmd.Wait()
		pr.cmd = nil
	}
}

func (pr *privateRedis) addr() string { return "127.0.0.1:" + strconv.Itoa(pr.port) }

// The server is killed and restarted while two writers append to one
// session and a reader loads it (sessiontest.Outage): every call during the
// outage fails with session.ErrUnavailable; the same Store reconnects by
// itself; every acknowledged turn survived (replayed from the append-only
// file); retrying the failed appends stores every turn exactly once.
func TestFaultServerRestart(t *testing.T) {
	serverURL(t) // the suite's server settings (and the CI rule) apply here too
	pr := startPrivateRedis(t)
	s, err := redis.Open(t.Context(), "redis://"+pr.addr()+"/0?dial_timeout=1s&max_retries=1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, failed, loads := sessiontest.Outage(t, s, "r", true, func() {
		pr.kill()
		// Longer than the client's own dial retries (go-redis tries a dial
		// several times before it gives up), so calls do fail.
		time.Sleep(2 * time.Second)
		pr.start()
	})
	t.Logf("%d appends, %d failed during the outage (and were retried), %d loads failed", n, failed, loads)
}
