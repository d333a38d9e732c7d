package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverModeEnv, set in a child's environment, makes the test binary an MCP
// server (or a broken one) instead of running the tests.
const serverModeEnv = "AGCORE_MCP_TEST_SERVER"

// runChildServer is the test binary as a child process. Every mode first
// writes its pid to standard error, so a test can check it is gone.
func runChildServer(mode string) int {
	fmt.Fprintf(os.Stderr, "pid=%d\n", os.Getpid())
	switch mode {
	case "exit": // dies before initializing
		fmt.Fprintln(os.Stderr, "fatal: missing configuration file")
		return 3
	case "garbage": // answers with something that is not JSON-RPC
		fmt.Println("Welcome! This is not JSON-RPC.")
		return 0
	case "mute", "sleep": // never answers
		time.Sleep(5 * time.Minute)
		return 0
	}
	s := newTestServer()
	var grandchild int
	if mode == "grandchild" { // starts a process of its own that holds stderr open
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), serverModeEnv+"=sleep")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		grandchild = cmd.Process.Pid
	}
	s.AddTool(&sdk.Tool{Name: "pids", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%d %d", os.Getpid(), grandchild)}}}, nil
	})
	if mode == "stubborn" {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintln(os.Stderr, "child server ready")
	err := s.Run(context.Background(), &sdk.StdioTransport{})
	if mode == "stubborn" { // outlives its input and ignores SIGTERM
		time.Sleep(5 * time.Minute)
	}
	if err != nil {
		return 1
	}
	return 0
}

// childServer is a Server running the test binary in mode.
func childServer(name, mode string) Server {
	return Server{Name: name, Command: os.Args[0], Env: []string{serverModeEnv + "=" + mode}, ShutdownTimeout: 200 * time.Millisecond}
}

func startTimeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pidsOf calls the child's pids tool: its own pid and its child's (or 0).
func pidsOf(t *testing.T, c *Client) (server, grandchild int) {
	t.Helper()
	out, err := toolByName(t, c, "mcp__"+c.Name()+"__pids").Invoke(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(out, &server, &grandchild); err != nil {
		t.Fatalf("pids %q: %v", out, err)
	}
	return server, grandchild
}

// waitGone fails the test unless the process pid is gone (or a zombie)
// within a few seconds.
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	t.Errorf("%s (pid %d) is still running", what, pid)
}

func TestAStdioServerIsStartedListedCalledAndClosed(t *testing.T) {
	var stderr syncBuffer
	s := childServer("child", "serve")
	s.Stderr = &stderr
	c, err := Connect(startTimeout(t), s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := toolByName(t, c, "mcp__child__echo").Invoke(context.Background(), json.RawMessage(`{"message":"over stdio"}`))
	if err != nil || out != "echo: over stdio" {
		t.Errorf("echo: %q, %v", out, err)
	}
	pid, _ := pidsOf(t, c)
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v for a server that exits when its input closes", d)
	}
	if c.cmd.ProcessState == nil {
		t.Error("the server was not waited for")
	}
	waitGone(t, "the server", pid)
	if !strings.Contains(stderr.String(), "child server ready") {
		t.Errorf("the server's standard error did not reach Server.Stderr: %q", stderr.String())
	}
}

func TestTheConnectContextBoundsOnlyTheStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c, err := Connect(ctx, childServer("child", "serve"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cancel()
	if out, err := toolByName(t, c, "mcp__child__echo").Invoke(context.Background(), json.RawMessage(`{"message":"still here"}`)); err != nil || out != "echo: still here" {
		t.Errorf("after the start context ended: %q, %v", out, err)
	}
}

var pidLine = regexp.MustCompile(`pid=(\d+)`)

func TestAServerThatFailsToStartGivesAnErrorNamingIt(t *testing.T) {
	tests := []struct {
		rule      string
		server    Server
		timeout   time.Duration
		stage     string
		want      []string // substrings of the message
		childPids bool     // the child wrote its pid to stderr
	}{
		{"a command that does not exist", Server{Name: "ghost", Command: "agcore-no-such-command-xyz", Args: []string{"--flag"}}, 0, "start",
			[]string{`MCP server "ghost" (agcore-no-such-command-xyz --flag) failed to start:`, "agcore-no-such-command-xyz"}, false},
		{"a command that exits at once shows its standard error", childServer("quitter", "exit"), 0, "initialize",
			[]string{`MCP server "quitter"`, "failed to initialize", "its standard error ends with:", "fatal: missing configuration file"}, true},
		{"a command that does not speak MCP", childServer("chatty", "garbage"), 0, "initialize",
			[]string{`MCP server "chatty"`, "failed to initialize"}, true},
		{"a command that never answers, within the start deadline", childServer("mute", "mute"), 300 * time.Millisecond, "initialize",
			[]string{`MCP server "mute"`, "failed to initialize"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			ctx := startTimeout(t)
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			c, err := Connect(ctx, tt.server)
			if c != nil {
				c.Close()
				t.Fatal("connected")
			}
			var ce *ConnectError
			if !errors.As(err, &ce) || ce.Stage != tt.stage || ce.Server != tt.server.Name {
				t.Fatalf("err = %v; want a ConnectError at stage %q", err, tt.stage)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message %q lacks %q", err, w)
				}
			}
			if tt.childPids {
				m := pidLine.FindStringSubmatch(ce.Stderr)
				if m == nil {
					t.Fatalf("no pid in the child's stderr %q", ce.Stderr)
				}
				pid, _ := strconv.Atoi(m[1])
				waitGone(t, "the failed server", pid)
			}
		})
	}
}

func TestCloseTerminatesAServerThatOutlivesItsInput(t *testing.T) {
	c, err := Connect(startTimeout(t), childServer("stubborn", "stubborn"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := pidsOf(t, c)
	start := time.Now()
	_ = c.Close() // its exit status (killed) is no error of Close's
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	waitGone(t, "the stubborn server", pid)
}

func TestCloseEndsTheProcessesTheServerStarted(t *testing.T) {
	if !processGroups {
		t.Skip("no process groups on this system")
	}
	c, err := Connect(startTimeout(t), childServer("parent", "grandchild"))
	if err != nil {
		t.Fatal(err)
	}
	pid, grandchild := pidsOf(t, c)
	if grandchild == 0 || !alive(grandchild) {
		t.Fatalf("the grandchild (pid %d) is not running", grandchild)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	waitGone(t, "the server", pid)
	waitGone(t, "the process the server started", grandchild)
}

func TestAServerNameIsDerivedFromTheCommand(t *testing.T) {
	s := childServer("", "serve")
	c, err := Connect(startTimeout(t), s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The test binary is mcp.test: its extension and the mcp- prefix rule
	// leave "mcp".
	if c.Name() != "mcp" || toolByName(t, c, "mcp__mcp__echo") == nil {
		t.Errorf("name %q", c.Name())
	}
}

// syncBuffer is a bytes.Buffer safe for the writer goroutine of exec.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
