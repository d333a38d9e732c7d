package reliability

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/faultserver"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/sqlite"
	"github.com/agcore/agcore/tool"
)

// canaryKey is a unique fake API key: it must reach the server's headers
// and nowhere else.
func canaryKey(*testing.T) string {
	var b [16]byte
	rand.Read(b[:])
	return "sk-canary-" + hex.EncodeToString(b[:])
}

// canaryFaults are answers that tempt a leak: the server echoes the key in
// error messages, as some proxies and servers do.
func canaryFaults(key string) []faultserver.Step {
	return []faultserver.Step{
		{Fault: faultserver.Status, Status: 401, Message: "Incorrect API key provided: " + key},
		{Fault: faultserver.InBandError, Message: "overloaded for key " + key},
		{Fault: faultserver.Status, Status: 400, Message: "invalid request from " + key},
	}
}

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestCanaryKeyNeverLeaks runs good turns and failing turns whose error
// bodies echo the key through both adapters (blocking and streaming), the
// tool loop, retries, the logging middleware at debug level with contents,
// the agent, and both durable stores; the key must appear in no log line,
// error text (at any depth of its chain), response, update, stored byte or
// request body, while it does reach the server in the auth header.
func TestCanaryKeyNeverLeaks(t *testing.T) {
	key := canaryKey(t)
	srv := faultserver.New()
	defer srv.Close()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	fstore, err := filestore.Open(filepath.Join(dir, "files"))
	if err != nil {
		t.Fatal(err)
	}
	defer fstore.Close()
	sstore, err := sqlite.Open(t.Context(), filepath.Join(dir, "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sstore.Close()

	var outputs []string // everything the library handed back to the caller
	record := func(v any) {
		b, _ := json.Marshal(v)
		outputs = append(outputs, string(b), fmt.Sprintf("%+v", v))
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	var calls []faultserver.Call
	for _, col := range columns {
		model := newAdapter(adapterConfig{format: col.format, base: baseURL(srv, col.format), key: key, client: &http.Client{Transport: tr}})
		if !col.stream {
			model = blocking(model)
		}
		logCfg := middleware.LogConfig{Logger: logger, Level: slog.LevelDebug, Contents: true}
		pipe := built{adapter: model, clock: &fakeClock{}, attempts: 2,
			mws:     []middleware.Middleware{middleware.Logging(logCfg)},
			toolMWs: []tool.Middleware{middleware.ToolLogging(logCfg)},
			onError: func(_ context.Context, err error) { record(errorTexts(err)) },
		}
		for _, store := range []session.Store{fstore, sstore} {
			a := newAgent(pipe, store, logger)
			sid := fmt.Sprintf("canary-%s-%v-%T", col.format, col.stream, store)
			sid = strings.NewReplacer("*", "", "/", "-").Replace(sid)

			srv.Enqueue(faultserver.Step{Reply: toolCalls("c")}, faultserver.Step{Reply: faultserver.Reply{Text: "fine", Chunks: 2}})
			resp, err := runTurn(t.Context(), a, sid, "hello", col.stream)
			if err != nil {
				t.Fatalf("%s: good turn: %v", col, err)
			}
			record(resp)
			for _, fault := range canaryFaults(key) {
				srv.Enqueue(fault, fault) // the first is retried when retryable
				_, err := runTurn(t.Context(), a, sid, "again", col.stream)
				if err == nil {
					t.Fatalf("%s: a turn against %v succeeded", col, fault.Fault)
				}
				record(errorTexts(err))
				calls = append(calls, srv.Calls()...)
				srv.Reset()
			}
		}
	}

	sent := 0
	for _, c := range calls {
		if c.Header.Get("Authorization") == "Bearer "+key || c.Header.Get("X-Api-Key") == key || c.Header.Get("X-Goog-Api-Key") == key {
			sent++
		}
		if bytes.Contains(c.Body, []byte(key)) {
			t.Errorf("a request body holds the key")
		}
	}
	if sent != len(calls) || sent == 0 {
		t.Fatalf("the key reached the server in %d of %d requests", sent, len(calls))
	}
	if sent == 0 {
		t.Fatal("the key never reached the server: the canary proves nothing")
	}
	checkNoCanary(t, key, "the logs", logs.String())
	checkNoCanary(t, key, "errors, responses and OnError", strings.Join(outputs, "\n"))
	checkNoCanaryFiles(t, key, dir)
	if !strings.Contains(logs.String(), "model call") {
		t.Fatal("the logging middleware logged nothing: the canary proves nothing")
	}
}

// errorTexts is every way err can be printed, at every depth of its chain.
func errorTexts(err error) []string {
	var out []string
	for e := err; e != nil; e = errors.Unwrap(e) {
		out = append(out, e.Error(), fmt.Sprintf("%+v", e), fmt.Sprintf("%#v", e))
		var le *llm.Error
		if errors.As(e, &le) {
			out = append(out, le.Message, le.Code)
		}
	}
	return out
}

func checkNoCanary(t *testing.T, key, where, text string) {
	t.Helper()
	if i := strings.Index(text, key); i >= 0 {
		t.Errorf("the API key appears in %s: …%s…", where, text[max(0, i-200):min(len(text), i+len(key)+50)])
	}
	// A prefix of the key is a leak too (a truncated message).
	if strings.Contains(text, key[:len(key)-6]) {
		t.Errorf("a prefix of the API key appears in %s", where)
	}
}

// checkNoCanaryFiles greps every file under dir for the key.
func checkNoCanaryFiles(t *testing.T, key, dir string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		checkNoCanary(t, key, "file "+strings.TrimPrefix(p, dir), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("no file under %s: the canary proves nothing", dir)
	}
}

// deadline is a context for one CLI run.
func deadline(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), time.Minute)
}
