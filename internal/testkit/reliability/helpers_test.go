package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/clock"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/internal/testkit/faultserver"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/provider/anthropic"
	"github.com/agcore/agcore/provider/gemini"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// TestMain runs the child processes of the crash and load tests, starts
// building the CLI for its canary test (while the tests before it run),
// and checks that no test leaves a goroutine behind.
func TestMain(m *testing.M) {
	if runChild() {
		return
	}
	flag.Parse()
	stop := startCLIBuild()
	goleak.VerifyTestMain(exitHook{m, stop})
}

// exitHook runs stop after the tests, before the goroutine check.
type exitHook struct {
	m    *testing.M
	stop func()
}

func (h exitHook) Run() int {
	code := h.m.Run()
	h.stop()
	return code
}

// cliBuild is the background build of the agcore command that
// TestCanaryKeyNeverLeaksFromTheCLI runs.
var cliBuild struct {
	dir, bin string
	done     chan struct{} // closed when the build has ended
	out      []byte
	err      error
}

// startCLIBuild starts building the CLI into a temporary directory if the
// canary test is to run, and returns what removes it after the tests.
func startCLIBuild() (stop func()) {
	run := flag.Lookup("test.run").Value.String()
	if first, _, _ := strings.Cut(run, "/"); first != "" {
		if re, err := regexp.Compile(first); err != nil || !re.MatchString("TestCanaryKeyNeverLeaksFromTheCLI") {
			return func() {}
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return func() {} // the test reports it
	}
	dir, err := os.MkdirTemp("", "agcore-reliability-")
	if err != nil {
		return func() {}
	}
	cliBuild.dir, cliBuild.bin = dir, filepath.Join(dir, "agcore")
	cliBuild.done = make(chan struct{})
	cmd := exec.Command(goBin, "build", "-o", cliBuild.bin, "github.com/agcore/agcore/cmd/agcore")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		cliBuild.err = err
		close(cliBuild.done)
	} else {
		go func() {
			cliBuild.err = cmd.Wait()
			cliBuild.out = out.Bytes()
			close(cliBuild.done)
		}()
	}
	return func() {
		if cmd.Process != nil {
			cmd.Process.Kill() // the canary test did not run
		}
		<-cliBuild.done
		os.RemoveAll(dir)
	}
}

// runChild runs this binary's role as a child process, if it is one.
func runChild() bool {
	switch {
	case os.Getenv(crashChildEnv) != "":
		crashChild()
		return true
	case os.Getenv(loadServerEnv) != "":
		loadServer()
		return true
	}
	return false
}

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// fakeClock never sleeps: it records each wait and returns at once.
type fakeClock struct {
	mu     sync.Mutex
	sleeps []time.Duration
}

func (c *fakeClock) Now() time.Time { return time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC) }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	c.mu.Unlock()
	return ctx.Err()
}

func (c *fakeClock) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// Limits the adapters get in these tests, small so faults are cheap.
const (
	testIdle     = 500 * time.Millisecond
	testMaxEvent = 64 << 10
	testMaxBody  = 1 << 20
)

// adapterConfig is how a test builds a provider adapter.
type adapterConfig struct {
	format faultserver.Format
	base   string // the server's base URL for the format
	key    string
	client *http.Client
	idle   time.Duration
	model  string // "fault-model" when empty
}

// newAdapter returns a real adapter pointed at the fault server.
func newAdapter(c adapterConfig) llm.Model {
	idle := c.idle
	if idle == 0 {
		idle = testIdle
	}
	name := c.model
	if name == "" {
		name = "fault-model"
	}
	switch c.format {
	case faultserver.Anthropic:
		return anthropic.New(anthropic.WithAPIKey(c.key), anthropic.WithBaseURL(c.base), anthropic.WithModel(name),
			anthropic.WithHTTPClient(c.client), anthropic.WithIdleTimeout(idle), anthropic.WithMaxEventSize(testMaxEvent))
	case faultserver.Gemini:
		return gemini.New(gemini.WithAPIKey(c.key), gemini.WithBaseURL(c.base), gemini.WithModel(name),
			gemini.WithHTTPClient(c.client), gemini.WithIdleTimeout(idle), gemini.WithMaxEventSize(testMaxEvent))
	}
	return openai.New(openai.WithAPIKey(c.key), openai.WithBaseURL(c.base), openai.WithModel(name),
		openai.WithHTTPClient(c.client), openai.WithIdleTimeout(idle), openai.WithMaxEventSize(testMaxEvent),
		openai.WithMaxBodySize(testMaxBody))
}

// baseURL is the server's base URL for format.
func baseURL(s *faultserver.Server, f faultserver.Format) string {
	switch f {
	case faultserver.Anthropic:
		return s.AnthropicBaseURL()
	case faultserver.Gemini:
		return s.GeminiBaseURL()
	}
	return s.OpenAIBaseURL()
}

// blocking makes a model answer every call with its blocking Generate, the
// way a provider without streaming is used: its Stream replays the answer.
func blocking(m llm.Model) llm.Model { return blockingModel{m} }

type blockingModel struct{ llm.Model }

func (b blockingModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		resp, err := b.Generate(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range llm.StreamOf(resp) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

// The tools every test agent has: the scripted replies call both.
type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

type lookupArgs struct {
	Key string `json:"key"`
}

func testTools() []tool.Tool {
	add := tool.MustFunc("add", "Adds two integers.", func(_ context.Context, in addArgs) (int, error) {
		return in.A + in.B, nil
	})
	lookup := tool.MustFunc("lookup", "Looks a key up.", func(_ context.Context, in lookupArgs) (string, error) {
		if in.Key == "big" {
			return strings.Repeat("0123456789", 5000), nil
		}
		return "value-of-" + in.Key, nil
	})
	return []tool.Tool{add, lookup}
}

// toolCalls is the reply that asks for both tools.
func toolCalls(prefix string) faultserver.Reply {
	return faultserver.Reply{
		Text: "Let me check.",
		ToolCalls: []faultserver.ToolCall{
			{ID: prefix + "-add", Name: "add", Args: `{"a":2,"b":3}`},
			{ID: prefix + "-lookup", Name: "lookup", Args: `{"key":"k"}`},
		},
	}
}

// built is what a test's agent is made of: the adapter, and the settings
// agent.New assembles around it.
type built struct {
	adapter  llm.Model
	clock    clock.Clock
	attempts int // model calls per request, the first included
	mws      []middleware.Middleware
	toolMWs  []tool.Middleware
	approver tool.Approver
	onError  func(context.Context, error)
	tools    []tool.Tool // nil: testTools()
}

// pipeline is the standard agent over adapter: the tool loop over retries
// (attempts calls at most, waiting on clock).
func pipeline(adapter llm.Model, clk clock.Clock, attempts int) built {
	return built{adapter: adapter, clock: clk, attempts: attempts}
}

func newAgent(b built, store session.Store, logger *slog.Logger) *agent.Agent {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	tools := b.tools
	if tools == nil {
		tools = testTools()
	}
	a, err := agent.New(b.adapter, agent.Config{
		Name:           "reliability",
		Instructions:   "You are a test agent.",
		Tools:          tools,
		Store:          store,
		Logger:         logger,
		Retry:          middleware.RetryConfig{MaxAttempts: max(b.attempts, 1), Clock: b.clock},
		Middleware:     b.mws,
		ToolMiddleware: b.toolMWs,
		Approver:       b.approver,
		OnError:        b.onError,
	})
	if err != nil {
		panic(err)
	}
	return a
}

// runTurn runs one turn, through Updates when stream is set, else through
// Run, and waits for its persistence.
func runTurn(ctx context.Context, a *agent.Agent, sessionID, prompt string, stream bool) (*agent.Response, error) {
	msgs := []llm.Message{llm.UserText(prompt)}
	opts := &agent.RunOptions{SessionID: sessionID}
	if !stream {
		resp, err := a.Run(ctx, msgs, opts)
		if err == nil {
			err = resp.PersistErr()
		}
		return resp, err
	}
	s := a.RunStream(ctx, msgs, opts)
	for _, err := range s.Updates() {
		if err != nil {
			break
		}
	}
	resp, err := s.Wait()
	if err == nil {
		err = resp.PersistErr()
	}
	return resp, err
}

// snapshot is a session as JSON, or "" when it does not exist.
func snapshot(t *testing.T, store session.Store, id string) string {
	t.Helper()
	s, err := store.Load(context.Background(), id)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkSession loads a session and checks that its history is valid (every
// tool_use answered, in order) and holds turns whole turns.
func checkSession(t *testing.T, store session.Store, id string, turns int) *session.Session {
	t.Helper()
	s, err := store.Load(context.Background(), id)
	if err != nil {
		t.Fatalf("load %s: %v", id, err)
	}
	if err := compact.Validate(s.Messages); err != nil {
		t.Fatalf("session %s does not validate: %v", id, err)
	}
	if s.Turns != turns {
		t.Fatalf("session %s has %d turns, want %d", id, s.Turns, turns)
	}
	return s
}
