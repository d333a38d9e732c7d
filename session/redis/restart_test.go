package redis_test

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testenv"
	"github.com/agcore/agcore/session"
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
// session and a reader loads it. Every call during the outage returns an
// error that errors.Is session.ErrUnavailable; the same Store reconnects
// by itself; retrying the failed appends with their turn ids stores every
// turn exactly once, and the session (replayed from the append-only file)
// is valid and holds every turn that was acknowledged.
func TestFaultServerRestart(t *testing.T) {
	serverURL(t) // the suite's server settings (and the CI rule) apply here too
	pr := startPrivateRedis(t)
	u := "redis://" + pr.addr() + "/0?dial_timeout=1s&max_retries=1"
	s, err := redis.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	if err := s.Append(ctx, "r", session.Turn{ID: "t0", Messages: sessiontest.Conversation("t0", 4)}); err != nil {
		t.Fatal(err)
	}
	var (
		mu                  sync.Mutex
		tags, failed, acked []string
		otherErrs           []error
		okAfter, loadFailed int
		restarted           bool
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
					acked = append(acked, tag)
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
			if _, err := s.Load(ctx, "r"); err != nil {
				mu.Lock()
				if errors.Is(err, session.ErrUnavailable) {
					loadFailed++
				} else {
					otherErrs = append(otherErrs, fmt.Errorf("load: %w", err))
				}
				mu.Unlock()
			}
		}
	})
	time.Sleep(300 * time.Millisecond)
	pr.kill()
	// Longer than the client's own dial retries (go-redis tries a dial
	// several times before it gives up), so calls do fail.
	time.Sleep(2 * time.Second)
	pr.start()
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
	if len(failed) == 0 || loadFailed == 0 {
		t.Fatalf("%d appends and %d loads failed during the outage: the test did not see it", len(failed), loadFailed)
	}
	// Every acknowledged turn survived the kill (appendfsync always).
	got, err := s.Load(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for i := 0; i < len(got.Messages); i += 4 {
		have[tagOf(got.Messages[i].Text())] = true
	}
	for _, tag := range acked {
		if !have[tag] {
			t.Errorf("acknowledged turn %s was lost in the restart", tag)
		}
	}
	for _, tag := range failed {
		if err := s.Append(ctx, "r", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)}); err != nil {
			t.Fatalf("retrying %s after the restart: %v", tag, err)
		}
	}
	t.Logf("%d appends, %d failed during the outage (and were retried), %d loads failed", len(tags), len(failed), loadFailed)
	got, err = s.Load(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if got.Turns != len(tags)+1 || len(got.Messages) != 4*got.Turns {
		t.Fatalf("%d turns, %d messages; want %d turns of 4", got.Turns, len(got.Messages), len(tags)+1)
	}
	seen := map[string]int{}
	for i := 0; i < len(got.Messages); i += 4 {
		seen[tagOf(got.Messages[i].Text())]++
	}
	for _, tag := range append(tags, "t0") {
		if seen[tag] != 1 {
			t.Errorf("turn %s stored %d times, want once", tag, seen[tag])
		}
	}
}

// tagOf returns the tag sessiontest.Conversation writes at the start of a
// turn's first message: "[TAG 0] ...".
func tagOf(text string) string {
	tag, _, _ := strings.Cut(strings.TrimPrefix(text, "["), " ")
	return tag
}
