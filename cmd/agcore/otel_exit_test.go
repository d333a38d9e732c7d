package main_test

import (
	"net"
	"strings"
	"testing"
	"time"
)

// refusedURL is a local URL whose port refuses connections (it was just
// free).
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// A collector that refuses the connection does not hold the exit: the
// spans and metrics left are tried once, not retried for the flush's
// 2 s, and the failure is one line. (Loose bound: the run itself takes
// tens of milliseconds.)
func TestOtelRefusedCollectorCostsNothingAtExit(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t)
			c.env["OTEL_EXPORTER_OTLP_PROTOCOL"] = protocol
			start := time.Now()
			r := c.ok("demo", "--json", "--store", "memory:", "--otel", refusedURL(t))
			took := time.Since(start)
			if took > 1500*time.Millisecond {
				t.Errorf("agcore took %s to run and exit with a collector refusing the connection (the flush waits for it)", took.Round(time.Millisecond))
			}
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "agcore: telemetry export failed: ") || !strings.Contains(r.stderr, "the collector at 127.0.0.1:") || !strings.Contains(r.stderr, " refused the connection\n") {
				t.Errorf("stderr is not one line saying the collector refused the connection:\n%s", r.stderr)
			}
			if !strings.Contains(r.stdout, `"type":"done"`) {
				t.Errorf("the turn did not finish:\n%s", r.stdout)
			}
			t.Logf("%s: ran and exited in %s", protocol, took.Round(time.Millisecond))
		})
	}
}
