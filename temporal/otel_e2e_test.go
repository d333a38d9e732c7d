package agtemporal_test

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpSink is an OTLP/HTTP trace receiver that keeps every span's name
// and trace id.
type otlpSink struct {
	mu    sync.Mutex
	spans map[string]string // name → trace id (hex)
}

func newOTLPSink(t *testing.T) (*otlpSink, string) {
	s := &otlpSink{spans: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					s.spans[sp.Name] = hex.EncodeToString(sp.TraceId)
				}
			}
		}
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(nil)
	}))
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func (s *otlpSink) snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.spans))
	for k, v := range s.spans {
		out[k] = v
	}
	return out
}

// TestE2EDurableRunIsOneTrace: with --otel on agcore worker and agcore run
// --temporal, a durable turn is one trace: the client's span, Temporal's
// workflow and activity spans, and in them the GenAI chat spans of the
// model calls and the execute_tool span of the tool call.
func TestE2EDurableRunIsOneTrace(t *testing.T) {
	addr, _ := devServer(t)
	sink, url := newOTLPSink(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("traced\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	worker := startAgcore(t, "worker", "--temporal", addr, "--provider", "demo", "--store", "sqlite:"+filepath.Join(dir, "agcore.db"), "--root", dir, "--otel", url)
	run := startAgcore(t, "run", "--temporal", addr, "--otel", url, "--tools", "read_file,list_dir", "Summarize the files here")
	if code := run.wait(t, "agcore run --temporal --otel"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, run.out, run.errw)
	}
	worker.stop(t, syscall.SIGINT) // the worker flushes its spans as it stops
	var spans map[string]string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		spans = sink.snapshot()
		if has(spans, "agcore run ") && has(spans, "RunActivity:agcore.Model") && has(spans, "chat ") && has(spans, "execute_tool ") {
			break
		}
	}
	trace := ""
	for _, want := range []string{"agcore run ", "StartWorkflow:agcore.Turn.v2", "RunWorkflow:agcore.Turn.v2", "RunActivity:agcore.Model", "RunActivity:agcore.Tool", "chat ", "execute_tool "} {
		name, id := find(spans, want)
		if name == "" {
			t.Fatalf("no span %q among %v", want, spans)
		}
		if trace == "" {
			trace = id
		}
		if id != trace {
			t.Fatalf("span %q is in trace %s, the client's in %s: %v", name, id, trace, spans)
		}
	}
}

func has(spans map[string]string, prefix string) bool { n, _ := find(spans, prefix); return n != "" }

func find(spans map[string]string, prefix string) (string, string) {
	for n, id := range spans {
		if strings.HasPrefix(n, prefix) {
			return n, id
		}
	}
	return "", ""
}
