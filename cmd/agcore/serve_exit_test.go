package main_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// An idle agcore serve exits at once on SIGTERM, whatever its clients
// hold open while no turn runs: a keep-alive connection between requests,
// and a connection that has not sent its request yet (browsers and HTTP
// clients open them ahead; the HTTP server's shutdown waits 5 s for
// those, the drain grace cut it at 2 s). Loose bound: well under the 2 s
// grace; measured in tens of milliseconds.
func TestIdleServeExitsAtOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGTERM")
	}
	t.Parallel()
	for _, held := range []string{"nothing", "a keep-alive connection", "a connection with no request yet"} {
		t.Run(held, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t)
			c.env["AGCORE_PROVIDER"] = "demo"
			base, cmd, lines := c.startServe(t, "--store", "memory:")
			u, _ := url.Parse(base)
			switch held {
			case "a keep-alive connection":
				client := &http.Client{Transport: &http.Transport{}}
				resp, err := client.Get(base + "/readyz")
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				t.Cleanup(client.CloseIdleConnections)
			case "a connection with no request yet":
				conn, err := net.Dial("tcp", u.Host)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { conn.Close() })
				time.Sleep(100 * time.Millisecond) // accepted by the server
			}
			start := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			var log []string
			for line := range lines {
				log = append(log, line)
			}
			err := cmd.Wait()
			took := time.Since(start)
			if err != nil {
				t.Fatalf("exit: %v\n%s", err, strings.Join(log, "\n"))
			}
			if took > time.Second {
				t.Errorf("an idle agcore serve holding %s took %s to exit on SIGTERM", held, took.Round(time.Millisecond))
			}
			t.Logf("holding %s: exited %s after SIGTERM", held, took.Round(time.Millisecond))
		})
	}
}
