package main_test

import (
	"net"
	"strings"
	"sync"
	"testing"
)

// silentCollector accepts connections and never answers on them: a
// collector that hangs.
func silentCollector(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

func TestOtelFailedExportIsOneLine(t *testing.T) {
	t.Parallel()
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			c := newCLI(t)
			c.env["OTEL_EXPORTER_OTLP_PROTOCOL"] = protocol
			r := c.ok("demo", "--json", "--store", "memory:", "--otel", silentCollector(t))
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "agcore: telemetry export failed: ") {
				t.Errorf("stderr is not one line saying the export failed:\n%s", r.stderr)
			}
			if !strings.Contains(r.stdout, `"type":"done"`) {
				t.Errorf("the turn did not finish:\n%s", r.stdout)
			}
		})
	}
}
