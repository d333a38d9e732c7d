package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testenv"
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
	t.Cleanup(srv.Close)
	return srv
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
	for line := range lines {
		if m := listening.FindStringSubmatch(line); m != nil {
			return m[1], cmd, lines
		}
		t.Logf("stderr: %s", line)
	}
	t.Fatal("agcore serve never said where it listens")
	return "", nil, nil
}

// TestServeWithNodeSDK runs agcore serve, configured like agcore run plus
// a named agent from the config file, and drives it with OpenAI's Node SDK.
func TestServeWithNodeSDK(t *testing.T) {
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
	if r.Errors["unknownModel"].Status != 404 || r.Errors["older"].Status != 409 || r.Errors["badToken"].Status != 401 {
		t.Errorf("errors %+v", r.Errors)
	}

	// Ctrl-C drains and exits 0; the log never shows a token.
	cmd.Process.Signal(os.Interrupt)
	var rest []string
	for line := range lines {
		rest = append(rest, line)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v\n%s", err, strings.Join(rest, "\n"))
	}
	log := strings.Join(rest, "\n")
	if !strings.Contains(log, "stopping") || !strings.Contains(log, "principal=node") {
		t.Errorf("stderr:\n%s", log)
	}
	if strings.Contains(log, "node-secret") || strings.Contains(log, "other-secret") {
		t.Error("the log shows a token")
	}
}

func TestServeRefusesAnOpenBindWithoutToken(t *testing.T) {
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	r := c.run("", "serve", "--addr", "0.0.0.0:0", "--store", "memory:")
	if r.code != 2 || !strings.Contains(r.stderr, "not a loopback address") || !strings.Contains(r.stderr, "AGCORE_SERVE_TOKENS") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
}

func TestServeDemoOverHTTP(t *testing.T) {
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	base, cmd, lines := c.startServe(t, "--store", "memory:")
	go func() {
		for range lines {
		}
	}()
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
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}
