package middleware

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock records sleeps and advances time without waiting.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return nil
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// counter is a tool that counts its runs and echoes its input; approval
// makes it need approval.
type counter struct {
	name     string
	approval bool
	runs     atomic.Int32
}

func newCounter(name string) *counter { return &counter{name: name} }

func (c *counter) Name() string                { return c.name }
func (c *counter) Description() string         { return "counts" }
func (c *counter) Parameters() json.RawMessage { return nil }
func (c *counter) NeedsApproval() bool         { return c.approval }
func (c *counter) Invoke(_ context.Context, in json.RawMessage) (string, error) {
	c.runs.Add(1)
	return c.name + " got " + string(in), nil
}

// funcTool is a tool made of a name and a function.
type funcTool struct {
	name string
	fn   func(ctx context.Context, in json.RawMessage) (string, error)
}

func (f funcTool) Name() string                { return f.name }
func (f funcTool) Description() string         { return "" }
func (f funcTool) Parameters() json.RawMessage { return nil }
func (f funcTool) Invoke(ctx context.Context, in json.RawMessage) (string, error) {
	return f.fn(ctx, in)
}

func user(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText(text)}}
}

// turnResult is what one turn produced, through Generate or Stream.
type turnResult struct {
	resp   *llm.Response
	err    error
	events []llm.Event // Stream only
}

// runTurn runs one turn through Generate or Stream.
func runTurn(ctx context.Context, m llm.Model, req *llm.Request, stream bool) turnResult {
	if !stream {
		resp, err := m.Generate(ctx, req)
		return turnResult{resp: resp, err: err}
	}
	var r turnResult
	for ev, err := range m.Stream(ctx, req) {
		if err != nil {
			r.err = err
			break
		}
		r.events = append(r.events, ev)
		if ev.Type == llm.EventComplete {
			r.resp = ev.Response
		}
	}
	return r
}

func modes() []bool { return []bool{false, true} }

func modeName(stream bool) string {
	if stream {
		return "Stream"
	}
	return "Generate"
}

// checkTranscript fails t unless every tool_use in msgs is answered, in
// order, by the tool-result messages right after it.
func checkTranscript(t *testing.T, msgs []llm.Message) {
	t.Helper()
	for i := 0; i < len(msgs); i++ {
		uses := msgs[i].ToolUses()
		if msgs[i].Role != llm.RoleAssistant || len(uses) == 0 {
			continue
		}
		for j, u := range uses {
			k := i + 1 + j
			if k >= len(msgs) || msgs[k].Role != llm.RoleTool || msgs[k].ToolCallID != u.ID {
				t.Fatalf("transcript invalid: tool_use %s of message %d has no result at %d:\n%s", u.ID, i, k, dump(msgs))
			}
		}
		i += len(uses)
	}
}

func dump(msgs []llm.Message) string {
	s := ""
	for i, m := range msgs {
		b, _ := json.Marshal(m)
		s += fmt.Sprintf("  %d %s\n", i, b)
	}
	return s
}
