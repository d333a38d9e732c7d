package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/internal/testkit/testwait"
)

// echoProvider is an OpenAI-compatible provider that streams "echo: " and
// the last user message's text, whatever it is asked, as often as asked.
func echoProvider(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		last := ""
		for _, m := range req.Messages {
			if s, ok := m.Content.(string); ok && m.Role == "user" {
				last = s
			}
		}
		s := newSSE(w)
		s.data(map[string]any{"id": "c1", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": "echo: "}}}})
		s.data(map[string]any{"id": "c1", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": last}, "finish_reason": "stop"}}})
		s.data(map[string]any{"id": "c1", "object": "chat.completion.chunk", "choices": []any{}, "usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}})
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	return testwait.CloseOnCleanup(t, srv)
}

// startServe starts agcore serve with args and returns its base URL, the
// command and its stderr so far (read by a goroutine into lines).
func (c *cli) startServe(t *testing.T, args ...string) (string, *exec.Cmd, <-chan string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	cmd := c.command(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1000)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	listening := regexp.MustCompile(`listening on (http://\S+) \((.*)\)`)
	deadline := time.NewTimer(3 * testwait.Timeout) // a loaded machine starts a big binary slowly
	defer deadline.Stop()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("agcore serve exited without saying where it listens")
			}
			if m := listening.FindStringSubmatch(line); m != nil {
				return m[1], cmd, lines
			}
			t.Logf("stderr: %s", line)
		case <-deadline.C:
			t.Fatalf("agcore serve did not say where it listens within %s", 3*testwait.Timeout)
		}
	}
}

// TestServeWithNodeSDK runs agcore serve, configured like agcore run plus
// a named agent from the config file, and drives it with OpenAI's Node SDK.
func TestServeWithNodeSDK(t *testing.T) {
	t.Parallel()
	nodeDir := os.Getenv("AGCORE_OPENAI_NODE_DIR")
	if nodeDir == "" {
		testenv.Missing(t, "the openai npm package is not installed: eval \"$(.ci/openai-node-setup.sh)\"")
	}
	provider := echoProvider(t)
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "compatible"
	c.env["OPENAI_BASE_URL"] = provider.URL + "/v1"
	c.env["AGCORE_MODEL"] = "local-model"
	c.env["AGCORE_SERVE_TOKENS"] = "node=node-secret,other=other-secret"
	writeFiles(t, c.home, map[string]string{"config.json": `{"agents": {"terse": {"system": "Be terse.", "tools": []}}}`})
	base, cmd, lines := c.startServe(t, "--store", "memory:")

	script, _ := filepath.Abs("../../serve/testdata/openai-node.mjs")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", script)
	node.Env = append(os.Environ(), "AGCORE_BASE_URL="+base+"/v1", "AGCORE_TOKEN=node-secret", "AGCORE_MODEL=agcore")
	var nodeErr strings.Builder
	node.Stderr = &nodeErr
	out, err := node.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, nodeErr.String())
	}
	var r struct {
		Models []struct{ ID string }
		Chat   struct{ Text, Finish string }
		Chat2  struct{ Text string } `json:"chatStream"`
		Resp   []struct {
			ID, Text, Previous string
		} `json:"responses"`
		Stream struct{ Text, Last string } `json:"responsesStream"`
		Branch struct{ ID, Previous, Text string }
		Errors map[string]struct{ Status int }
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(r.Models) != 2 || r.Models[0].ID != "agcore" || r.Models[1].ID != "terse" {
		t.Errorf("models %+v", r.Models)
	}
	if r.Chat.Text != "echo: hello" || r.Chat.Finish != "stop" || r.Chat2.Text != "echo: streamed" {
		t.Errorf("chat %+v %+v", r.Chat, r.Chat2)
	}
	if len(r.Resp) != 2 || r.Resp[1].Text != "echo: two" || r.Resp[1].Previous != r.Resp[0].ID || r.Stream.Text != "echo: three" || r.Stream.Last != "response.completed" {
		t.Errorf("responses %+v %+v", r.Resp, r.Stream)
	}
	if len(r.Resp) == 2 && (r.Branch.Text != "echo: branch" || r.Branch.Previous != r.Resp[0].ID || r.Branch.ID == r.Resp[1].ID || !strings.HasSuffix(r.Branch.ID, "_2")) {
		t.Errorf("a branch from the first response: %+v", r.Branch)
	}
	if r.Errors["unknownModel"].Status != 404 || r.Errors["badToken"].Status != 401 {
		t.Errorf("errors %+v", r.Errors)
	}

	// Ctrl-C drains and exits 0; the log never shows a token.
	log, err := interrupt(t, cmd, lines)
	if err != nil {
		t.Fatalf("exit: %v\n%s", err, log)
	}
	if !strings.Contains(log, "stopping") || !strings.Contains(log, "principal=node") {
		t.Errorf("stderr:\n%s", log)
	}
	if strings.Contains(log, "node-secret") || strings.Contains(log, "other-secret") {
		t.Error("the log shows a token")
	}
}

func TestServeRefusesAnOpenBindWithoutToken(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	r := c.run("", "serve", "--addr", "0.0.0.0:0", "--store", "memory:")
	if r.code != 2 || !strings.Contains(r.stderr, "not a loopback address") || !strings.Contains(r.stderr, "AGCORE_SERVE_TOKENS") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

func TestServeDemoOverHTTP(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	base, cmd, lines := c.startServe(t, "--store", "memory:")
	resp, err := http.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"agcore","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasSuffix(strings.TrimSpace(string(body)), "data: [DONE]") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	for path, want := range map[string]string{
		"/healthz": "ok", "/readyz": "ready",
		"/": "<html", "/.well-known/agent-card.json": `"name"`, "/a2a/agcore/.well-known/agent-card.json": `"name"`,
		"/api/agents": `"agcore"`,
	} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Errorf("%s: %d %.300s", path, resp.StatusCode, body)
		}
	}
	if log, err := interrupt(t, cmd, lines); err != nil {
		t.Fatalf("exit: %v\n%s", err, log)
	}
}

// interrupt sends agcore serve SIGINT (Ctrl-C) and waits, at most
// testwait.Timeout, for it to exit. It returns the rest of its stderr and
// its exit error; a server still running then fails the test.
func interrupt(t *testing.T, cmd *exec.Cmd, lines <-chan string) (string, error) {
	t.Helper()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	var rest []string
	deadline := time.NewTimer(testwait.Timeout)
	defer deadline.Stop()
	for open := true; open; {
		select {
		case line, ok := <-lines:
			if open = ok; ok {
				rest = append(rest, line)
			}
		case <-deadline.C:
			cmd.Process.Kill()
			t.Fatalf("agcore serve still ran %s after SIGINT; its stderr:\n%s", testwait.Timeout, strings.Join(rest, "\n"))
		}
	}
	return strings.Join(rest, "\n"), cmd.Wait() // stderr is closed: the process has exited
}

// endlessProvider is an OpenAI-compatible provider whose answer never
// ends: 32 KiB text deltas as fast as its client reads them, until the
// request is cancelled. sent counts the deltas.
func endlessProvider(t *testing.T, sent *atomic.Int64) *httptest.Server {
	delta := strings.Repeat("lorem ipsum ", 32<<10/12)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := newSSE(w)
		for r.Context().Err() == nil {
			s.data(map[string]any{"id": "c1", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": delta}}}})
			sent.Add(1)
		}
	}))
	return testwait.CloseOnCleanup(t, srv)
}

// TestServeStopsWithAClientThatStopsReading: a client that stops reading
// a long streamed answer (the socket buffers full, the server blocked
// writing to it) cannot keep agcore serve running after Ctrl-C: the turn
// is cancelled at --shutdown-timeout and the process exits a few seconds
// later at most.
func TestServeStopsWithAClientThatStopsReading(t *testing.T) {
	skipShort(t, "waits out a write deadline; serve's TestDrain tests hold the rule in the package")
	t.Parallel()
	var sent atomic.Int64
	provider := endlessProvider(t, &sent)
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "compatible"
	c.env["OPENAI_BASE_URL"] = provider.URL + "/v1"
	c.env["AGCORE_MODEL"] = "local-model"
	const grace = time.Second
	base, cmd, lines := c.startServe(t, "--store", "memory:", "--shutdown-timeout", grace.String())

	// A client that sends its request and never reads a byte of the answer.
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	body := `{"model":"agcore","stream":true,"messages":[{"role":"user","content":"talk forever"}]}`
	fmt.Fprintf(conn, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		strings.TrimPrefix(base, "http://"), len(body), body)

	// The provider's deltas stop once every buffer on the way is full: the
	// server is blocked writing to the client.
	last, still := int64(-1), 0
	testwait.For(t, "the answer to fill the buffers", func() bool {
		time.Sleep(100 * time.Millisecond)
		n := sent.Load()
		if n == last {
			still++
		} else {
			last, still = n, 0
		}
		return still >= 5 && n > 0
	})
	t.Logf("the provider sent %d deltas (%d MiB) before the server blocked", last, last*32/1024)

	start := time.Now()
	log, err := interrupt(t, cmd, lines) // fails the test after testwait.Timeout
	t.Logf("exited %s after SIGINT (--shutdown-timeout %s)", time.Since(start).Round(10*time.Millisecond), grace)
	if err != nil {
		t.Fatalf("exit: %v\n%s", err, log)
	}
	if !strings.Contains(log, "were cancelled") {
		t.Errorf("stderr does not say the turn was cancelled:\n%s", log)
	}
}
