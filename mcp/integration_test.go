package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverDirEnv names the directory .ci/mcp-setup.sh installs the npm MCP
// server into. When it is set, a missing server fails the tests; when it is
// not, they look in the default place and skip if nothing is there.
const serverDirEnv = "AGCORE_MCP_SERVER_DIR"

// everything returns node and the entry script of
// @modelcontextprotocol/server-everything, or skips the test.
func everything(t *testing.T) (node, entry string) {
	t.Helper()
	dir, required := os.LookupEnv(serverDirEnv)
	if !required {
		dir = filepath.Join("..", ".ci", "mcp-server")
	}
	entry = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(entry)
	}
	if err != nil {
		msg := fmt.Sprintf("the npm MCP server is not available (%v); run `eval \"$(.ci/mcp-setup.sh)\"` to install it", err)
		if required {
			t.Fatalf("%s is set but %s", serverDirEnv, msg)
		}
		testenv.Missing(t, "%s", msg)
	}
	return node, entry
}

func TestIntegrationNpmServerOverStdio(t *testing.T) {
	node, entry := everything(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Connect(ctx, Server{Command: node, Args: []string{entry, "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "everything" {
		t.Errorf("the server's name is %q, want everything (derived from its package)", c.Name())
	}
	t.Logf("tools: %s", strings.Join(names(c.Tools()), " "))

	tests := []struct {
		tool string
		args string
		want string // a substring of the result
	}{
		{"mcp__everything__echo", `{"message":"hello from agcore"}`, "Echo: hello from agcore"},
		{"mcp__everything__get-sum", `{"a":2,"b":3}`, "The sum of 2 and 3 is 5."},
		{"mcp__everything__get-tiny-image", `{}`, "[image: image/png, "},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			out, err := toolByName(t, c, tt.tool).Invoke(ctx, json.RawMessage(tt.args))
			if err != nil || !strings.Contains(out, tt.want) {
				t.Errorf("got %q, %v; want %q", out, err, tt.want)
			}
		})
	}

	t.Run("through the tool loop's invoker", func(t *testing.T) {
		var reg tool.Registry
		if err := reg.Register(c.Tools()...); err != nil {
			t.Fatal(err)
		}
		msgs, err := (&tool.Invoker{}).Invoke(ctx, reg.Get, []llm.ToolUse{
			{ID: "call_1", Name: "mcp__everything__echo", Input: json.RawMessage(`{"message":"one"}`)},
			{ID: "call_2", Name: "mcp__everything__echo", Input: json.RawMessage(`{"message":7}`)},
		})
		if err != nil {
			t.Fatal(err)
		}
		if msgs[0].IsError || msgs[0].Text() != "Echo: one" || msgs[0].ToolCallID != "call_1" {
			t.Errorf("first result: %+v", msgs[0])
		}
		if !msgs[1].IsError {
			t.Errorf("arguments the server rejects are not an error result: %q", msgs[1].Text())
		}
	})

	pid := c.cmd.Process.Pid
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	waitGone(t, "node", pid)
}

// everythingHTTP starts the npm server over streamable HTTP on a free port
// of 127.0.0.1 and returns its endpoint; it is stopped when the test ends.
func everythingHTTP(t *testing.T) string {
	t.Helper()
	node, entry := everything(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()

	var logs syncBuffer
	cmd := exec.Command(node, entry, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if conn, err := net.Dial("tcp", addr); err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the HTTP server did not listen on %s; its output:\n%s", addr, logs.String())
		}
	}
	return "http://" + addr + "/mcp"
}

func TestIntegrationNpmServerOverStreamableHTTP(t *testing.T) {
	endpoint := everythingHTTP(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Connect(ctx, Server{Name: "everything", URL: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := toolByName(t, c, "mcp__everything__echo").Invoke(ctx, json.RawMessage(`{"message":"over HTTP"}`))
	if err != nil || out != "Echo: over HTTP" {
		t.Errorf("echo: %q, %v", out, err)
	}
}

// The server's own request (elicitation/create) arrives over the
// standalone stream and is answered: declined when nobody can answer, so
// the call returns instead of hanging, or answered by the Elicitor.
func TestIntegrationElicitationIsAnsweredNeverHangs(t *testing.T) {
	endpoint := everythingHTTP(t)
	accept := func(_ context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
		if server != "everything" || req.Message == "" {
			return nil, fmt.Errorf("elicitation from %q: %+v", server, req)
		}
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada Lovelace"}}, nil
	}
	tests := []struct {
		name       string
		elicit     Elicitor
		want       string // in the result
		wantNotice bool   // a notice says nobody could answer
	}{
		{"nobody can answer: declined", nil, "decline", true},
		{"the elicitor answers", accept, "Ada Lovelace", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var notices noticeLog
			c, err := Connect(ctx, Server{Name: "everything", URL: endpoint, Elicit: tt.elicit, Notify: notices.add, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			out, err := toolByName(t, c, "mcp__everything__trigger-elicitation-request").Invoke(ctx, json.RawMessage(`{}`))
			if err != nil || !strings.Contains(out, tt.want) {
				t.Errorf("got %q, %v; want a result containing %q", out, err, tt.want)
			}
			got := notices.of(NoticeElicitation)
			if tt.wantNotice != (len(got) == 1) || tt.wantNotice && !strings.Contains(got[0].Message, `"everything"`) {
				t.Errorf("elicitation notices = %+v, want one naming the server: %v", got, tt.wantNotice)
			}
		})
	}
}

// Progress restarts a call's silence clock: a call longer than the
// timeout that reports progress is not cut, and each step is a notice.
func TestIntegrationProgressKeepsALongCallAlive(t *testing.T) {
	endpoint := everythingHTTP(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var notices noticeLog
	c, err := Connect(ctx, Server{Name: "everything", URL: endpoint, Notify: notices.add, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := toolByName(t, c, "mcp__everything__trigger-long-running-operation").Invoke(ctx, json.RawMessage(`{"duration":4,"steps":8}`))
	if err != nil || !strings.Contains(out, "completed") {
		t.Fatalf("got %q, %v", out, err)
	}
	// A step every 0.5 s, the call 4 s, the timeout 2 s: only progress
	// restarting the clock lets it finish. The last step's notice may come
	// after the answer, when the call is no longer in flight; the others
	// come while it runs.
	p := notices.of(NoticeProgress)
	if len(p) < 7 || p[6].Progress != 7 || p[6].Total != 8 || p[6].Tool != "trigger-long-running-operation" || !strings.Contains(p[6].Message, "7/8") {
		t.Errorf("progress notices = %+v, want at least 7, the seventh at 7/8", p)
	}
}

// noticeLog collects notices.
type noticeLog struct {
	mu sync.Mutex
	ns []Notice
}

func (l *noticeLog) add(n Notice) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ns = append(l.ns, n)
}

func (l *noticeLog) of(kind NoticeKind) []Notice {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Notice
	for _, n := range l.ns {
		if n.Kind == kind {
			out = append(out, n)
		}
	}
	return out
}
