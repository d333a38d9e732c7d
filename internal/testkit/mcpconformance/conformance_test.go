package mcpconformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
)

// dirEnv names the directory .ci/mcp-conformance-setup.sh installs the
// suite into. When it is set, a missing suite fails the tests; when it is
// not, the default place is tried and the tests skip if nothing is there.
const dirEnv = "AGCORE_MCP_CONFORMANCE_DIR"

// suite returns node and the suite's entry script, or skips.
func suite(t *testing.T) (node, entry string) {
	t.Helper()
	dir, required := os.LookupEnv(dirEnv)
	if !required {
		dir = filepath.Join("..", "..", "..", ".ci", "mcp-conformance")
	}
	entry, _ = filepath.Abs(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"))
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(entry)
	}
	if err != nil {
		msg := fmt.Sprintf("the MCP conformance suite is not available (%v); run `eval \"$(.ci/mcp-conformance-setup.sh)\"` to install it", err)
		if required {
			t.Fatalf("%s is set but %s", dirEnv, msg)
		}
		testenv.Missing(t, "%s", msg)
	}
	return node, entry
}

// scenarios lists the suite's scenarios of a kind ("Client" or "Server").
func scenarios(t *testing.T, node, entry, kind string) []string {
	t.Helper()
	out, err := exec.Command(node, entry, "list").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list: %v\n%s", err, out)
	}
	var list []string
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, kind+" scenarios"):
			in = true
		case strings.HasSuffix(line, "scenarios (test against a server):") || strings.HasSuffix(line, "scenarios (test against a client):"):
			in = false
		case in && strings.HasPrefix(line, "  - "):
			list = append(list, strings.TrimPrefix(line, "  - "))
		}
	}
	if len(list) == 0 {
		t.Fatalf("no %s scenarios in:\n%s", kind, out)
	}
	return list
}

// expected reads expected-failures.txt: suite → scenario → reason.
func expected(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile("expected-failures.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	line := regexp.MustCompile(`^(client|run|server) (\S+): (\S.*)$`)
	for i, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("expected-failures.txt:%d: want \"SUITE SCENARIO: REASON\", got %q", i+1, l)
		}
		if out[m[1]] == nil {
			out[m[1]] = map[string]string{}
		}
		out[m[1]][m[2]] = m[3]
	}
	return out
}

var passedLine = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed`)

// play runs one scenario and reports whether every check passed.
func play(ctx context.Context, node string, args, env []string) (bool, string) {
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	m := passedLine.FindStringSubmatch(string(out))
	return err == nil && m != nil && m[3] == "0", string(out)
}

// tally runs the scenarios (a few at a time: each starts node and servers)
// and checks each result against the expected failures of the suite.
func tally(t *testing.T, name string, list []string, want map[string]string, run func(ctx context.Context, scenario string) (bool, string)) {
	t.Helper()
	for s := range want {
		if !slices.Contains(list, s) {
			t.Errorf("expected-failures.txt lists %s %s, which this suite version does not have", name, s)
		}
	}
	var mu sync.Mutex
	passed := 0
	sem := make(chan struct{}, 3)
	t.Run(name, func(t *testing.T) {
		for _, s := range list {
			t.Run(strings.ReplaceAll(s, "/", "_"), func(t *testing.T) {
				t.Parallel()
				sem <- struct{}{}
				defer func() { <-sem }()
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				ok, out := run(ctx, s)
				reason, listed := want[s]
				if !ok && !listed {
					// Some scenarios time what the client does (sse-retry:
					// the reconnection after the server's retry delay);
					// on a loaded machine they get one more try.
					t.Logf("%s failed; trying it again:\n%s", s, tailLines(out, 20))
					ok, out = run(ctx, s)
				}
				switch {
				case ok && listed:
					t.Errorf("%s passes: remove it from expected-failures.txt (%s)", s, reason)
				case !ok && !listed:
					t.Errorf("%s fails:\n%s", s, tailLines(out, 60))
				case !ok:
					t.Logf("%s fails as expected: %s", s, reason)
				}
				if ok {
					mu.Lock()
					passed++
					mu.Unlock()
				}
			})
		}
	})
	t.Logf("%s: %d/%d scenarios pass", name, passed, len(list))
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// build builds a package of this module into dir.
func build(t *testing.T, dir, pkg, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// The suite's client scenarios against the mcp package (the driver).
func TestClientScenarios(t *testing.T) {
	node, entry := suite(t)
	list := scenarios(t, node, entry, "Client")
	driver := build(t, t.TempDir(), "./client", "client")
	tally(t, "client", list, expected(t)["client"], func(ctx context.Context, s string) (bool, string) {
		return play(ctx, node, []string{entry, "client", "--command", driver, "--scenario", s}, nil)
	})
}

// The suite's client scenarios against agcore run --mcp-url, its model a
// scripted one (fakeModel), after agcore mcp login for the OAuth ones.
func TestRunClientScenarios(t *testing.T) {
	node, entry := suite(t)
	list := scenarios(t, node, entry, "Client")
	dir := t.TempDir()
	driver := build(t, dir, "./client", "client")
	agcore := build(t, dir, "../../../cmd/agcore", "agcore")
	model := httptest.NewServer(http.HandlerFunc(fakeModel))
	defer model.Close()
	env := []string{"AGCORE_BIN=" + agcore, "OPENAI_BASE_URL=" + model.URL + "/v1", "OPENAI_API_KEY=sk-conformance", "AGCORE_RETRIES=0"}
	tally(t, "run", list, expected(t)["run"], func(ctx context.Context, s string) (bool, string) {
		return play(ctx, node, []string{entry, "client", "--command", driver, "--scenario", s}, env)
	})
}

// The suite's server scenarios against agcore mcp serve --http.
func TestServerScenarios(t *testing.T) {
	node, entry := suite(t)
	list := scenarios(t, node, entry, "Server")
	agcore := build(t, t.TempDir(), "../../../cmd/agcore", "agcore")
	model := httptest.NewServer(http.HandlerFunc(scriptedModel))
	defer model.Close()
	url := startServe(t, agcore, model.URL)
	tally(t, "server", list, expected(t)["server"], func(ctx context.Context, s string) (bool, string) {
		return play(ctx, node, []string{entry, "server", "--url", url, "--scenario", s}, nil)
	})
}

// startServe starts agcore mcp serve --http on a free port of 127.0.0.1
// with the test config (testdata/config.json: agents, prompts and
// resources carrying the suite's fixture names), their model scripted by
// scriptedModel at modelURL, and returns its endpoint.
func startServe(t *testing.T, agcore, modelURL string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(agcore, "mcp", "serve", "--config", filepath.Join("testdata", "config.json"), "--root", filepath.Join("testdata", "root"), "--store", "memory:", "--http", addr)
	cmd.Env = append(os.Environ(), "AGCORE_HOME="+t.TempDir(), "OPENAI_BASE_URL="+modelURL+"/v1", "OPENAI_API_KEY=sk-conformance", "AGCORE_RETRIES=0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "listening on") {
			go func() {
				for sc.Scan() {
				}
			}()
			return "http://" + addr + "/mcp"
		}
	}
	t.Fatal("agcore mcp serve did not start")
	return ""
}

// fakeModel is an OpenAI Chat Completions server whose model calls the
// first MCP tool offered (add_numbers with 5 and 3) until a tool result is
// in the conversation, then answers.
func fakeModel(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	_ = json.NewDecoder(r.Body).Decode(&req)
	called := slices.ContainsFunc(req.Messages, func(m struct {
		Role string `json:"role"`
	}) bool {
		return m.Role == "tool"
	})
	tool := ""
	for _, t := range req.Tools {
		if strings.HasPrefix(t.Function.Name, "mcp__") {
			tool = t.Function.Name
			break
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o-mini",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if tool == "" || called {
		send(chunk(map[string]any{"role": "assistant", "content": "Done."}, nil))
		send(chunk(map[string]any{}, "stop"))
	} else {
		args := "{}"
		if strings.HasSuffix(tool, "__add_numbers") {
			args = `{"a":5,"b":3}`
		}
		send(chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
			"function": map[string]any{"name": tool, "arguments": args}}}}, nil))
		send(chunk(map[string]any{}, "tool_calls"))
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}
