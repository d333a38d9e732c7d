package agtemporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"go.uber.org/goleak"
)

// binary is the agcore-temporal command built once for the package's
// end-to-end tests (see TestMain).
var binary struct {
	once sync.Once
	path string
	err  error
}

func agcoreTemporal(t testing.TB) string {
	t.Helper()
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "agcore-temporal-bin")
		if err != nil {
			binary.err = err
			return
		}
		binary.path = filepath.Join(dir, "agcore-temporal")
		out, err := exec.Command("go", "build", "-o", binary.path, "./cmd/agcore-temporal").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("building agcore-temporal: %v\n%s", err, out)
		}
	})
	if binary.err != nil {
		t.Fatal(binary.err)
	}
	return binary.path
}

// TestMain removes the built command and, when every test passed, fails
// if a goroutine outlived the tests (the SDK's test environment, workers and
// clients must all have stopped).
func TestMain(m *testing.M) {
	code := m.Run()
	if binary.path != "" {
		os.RemoveAll(filepath.Dir(binary.path))
	}
	if agcoreBin.dir != "" {
		os.RemoveAll(agcoreBin.dir)
	}
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("internal/poll.runtime_pollWait")); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// freePort returns a TCP port free on 127.0.0.1 at the time of the call.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// devServer starts `temporal server start-dev` (in memory) on free ports
// and returns its frontend address and a client; both end with the test.
// A port picked free can be taken by another process before the server
// binds it (the tests run in parallel): a server that exits before it
// answers is started again on other ports, up to three times.
func devServer(t testing.TB) (string, client.Client) {
	t.Helper()
	bin := os.Getenv("AGCORE_TEMPORAL_CLI")
	if bin == "" {
		testenv.Missing(t, "AGCORE_TEMPORAL_CLI is unset: eval \"$(.ci/temporal-setup.sh)\" to run the Temporal end-to-end tests")
	}
	for attempt := 1; ; attempt++ {
		addr, cl, exited, log := startDevServer(t, bin)
		if cl != nil {
			return addr, cl
		}
		if !exited || attempt == 3 {
			t.Fatalf("the dev server did not start (attempt %d): %s", attempt, log)
		}
		t.Logf("the dev server exited before it answered (attempt %d), starting it on other ports: %.300s", attempt, log)
	}
}

// startDevServer starts one dev server and waits for it: its address and
// a client, or (cl nil) whether it exited before answering and its log.
func startDevServer(t testing.TB, bin string) (addr string, cl client.Client, exited bool, log string) {
	t.Helper()
	port := freePort(t)
	addr = fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", fmt.Sprint(port), "--http-port", fmt.Sprint(freePort(t)), "--metrics-port", fmt.Sprint(freePort(t)),
		"--log-level", "error",
		// Activities handed to the worker with the workflow task that
		// schedules them, without a trip through matching (halves a
		// three-tool turn here: 0.92 s to 0.44 s).
		"--dynamic-config-value", "system.enableActivityEagerExecution=true")
	logf, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := client.DialContext(ctx, client.Options{HostPort: addr, Logger: quietLogger(), Identity: "agcore-test"})
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			if err == nil {
				// The default namespace is registered a moment after the
				// frontend answers.
				_, err = c.WorkflowService().DescribeNamespace(ctx, describeDefault())
			}
		}
		cancel()
		if err == nil {
			t.Cleanup(c.Close)
			return addr, c, false, ""
		}
		if c != nil {
			c.Close()
		}
		select {
		case <-done:
			b, _ := os.ReadFile(logf.Name())
			return addr, nil, true, string(b)
		default:
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logf.Name())
			return addr, nil, false, fmt.Sprintf("%v\n%s", err, b)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func quietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))
}

// proc is a started agcore-temporal process.
type proc struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs agcore-temporal with args; the process is killed at the end
// of the test if still running.
func start(t testing.TB, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(agcoreTemporal(t), args...), out: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.kill() })
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// stop sends SIGTERM and waits.
func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.kill()
	}
}

// fakeModel is an OpenAI-compatible Chat Completions server playing one
// scripted reply per request.
type fakeModel struct {
	*httptest.Server
	mu      sync.Mutex
	replies []func(w http.ResponseWriter, r *http.Request)
	bodies  []string
}

func newFakeModel(t testing.TB, replies ...func(w http.ResponseWriter, r *http.Request)) *fakeModel {
	t.Helper()
	f := &fakeModel{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, string(body))
		var next func(http.ResponseWriter, *http.Request)
		if len(f.replies) > 0 {
			next, f.replies = f.replies[0], f.replies[1:]
		}
		f.mu.Unlock()
		if next == nil {
			t.Errorf("fake model: unexpected request %d", len(f.bodies))
			http.Error(w, `{"error":{"message":"no reply left","type":"server_error"}}`, http.StatusInternalServerError)
			return
		}
		next(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeModel) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

type fakeCall struct{ id, name, args string }

// sseReply streams text, then the tool calls, as Chat Completions chunks.
func sseReply(text string, calls ...fakeCall) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(delta map[string]any, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "model": "fake",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		send(map[string]any{"role": "assistant", "content": ""}, nil)
		for _, word := range strings.SplitAfter(text, " ") {
			if word != "" {
				send(map[string]any{"content": word}, nil)
			}
		}
		for i, c := range calls {
			send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": c.args}}}}, nil)
		}
		finish := "stop"
		if len(calls) > 0 {
			finish = "tool_calls"
		}
		send(map[string]any{}, finish)
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "model": "fake", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
		fmt.Fprintf(w, "data: %s\n\ndata: [DONE]\n\n", b)
	}
}

// hangReply streams a first word, signals arrived, then holds the
// connection until the client goes away (its worker was killed).
func hangReply(arrived chan<- struct{}) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"id":"x","object":"chat.completion.chunk","model":"fake","choices":[{"index":0,"delta":{"role":"assistant","content":"Partial "},"finish_reason":null}]}`+"\n\n")
		w.(http.Flusher).Flush()
		close(arrived)
		<-r.Context().Done()
	}
}

func describeDefault() *workflowservice.DescribeNamespaceRequest {
	return &workflowservice.DescribeNamespaceRequest{Namespace: "default"}
}

// devServerClient dials a running dev server.
func devServerClient(t testing.TB, addr string) (string, client.Client) {
	t.Helper()
	cl, err := client.Dial(client.Options{HostPort: addr, Logger: quietLogger(), Identity: "agcore-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return addr, cl
}
