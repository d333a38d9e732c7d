package middleware

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

// logBuffer is a concurrency-safe log sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func text(s string) *llmtest.Step { st := llmtest.Text(s); return &st }

func preRequest(name string, fn PreRequestFunc) []Hook[PreRequestFunc] {
	return []Hook[PreRequestFunc]{{Name: name, Func: fn}}
}

func TestModelHooks(t *testing.T) {
	t.Parallel()
	addSystem := func(_ context.Context, req *llm.Request) error {
		req.Messages = append([]llm.Message{llm.SystemText("be brief")}, req.Messages...)
		return nil
	}
	failsAfterChanging := func(err error) PreRequestFunc {
		return func(_ context.Context, req *llm.Request) error {
			req.Model = "changed"
			return err
		}
	}
	tests := []struct {
		name      string
		hooks     func(h *Hooks)
		step      *llmtest.Step
		wantErr   string // substring of a *BlockedError; "" means success
		wantLog   string
		checkReqs func(t *testing.T, reqs []*llm.Request)
	}{
		{
			name:  "PreRequest may change the request",
			hooks: func(h *Hooks) { h.PreRequest = preRequest("system", addSystem) },
			step:  text("ok"),
			checkReqs: func(t *testing.T, reqs []*llm.Request) {
				if len(reqs[0].Messages) != 2 || reqs[0].Messages[0].Role != llm.RoleSystem {
					t.Errorf("model got:\n%s", dump(reqs[0].Messages))
				}
			},
		},
		{
			name: "PreRequest hooks run in order and see earlier changes",
			hooks: func(h *Hooks) {
				h.PreRequest = append(preRequest("system", addSystem), Hook[PreRequestFunc]{Name: "check", Func: func(_ context.Context, req *llm.Request) error {
					if req.Messages[0].Role != llm.RoleSystem {
						return Block("the first hook did not run")
					}
					return nil
				}})
			},
			step: text("ok"),
		},
		{
			name: "PreRequest may block the request, naming the hook and the reason",
			hooks: func(h *Hooks) {
				h.PreRequest = preRequest("budget", func(context.Context, *llm.Request) error { return Block("over budget") })
			},
			wantErr: `PreRequest hook "budget" blocked the request: over budget`,
		},
		{
			name:    "a PreRequest hook that errors fails open and its changes are dropped",
			hooks:   func(h *Hooks) { h.PreRequest = preRequest("flaky", failsAfterChanging(errors.New("db down"))) },
			step:    text("ok"),
			wantLog: `hook=flaky error="db down"`,
			checkReqs: func(t *testing.T, reqs []*llm.Request) {
				if reqs[0].Model == "changed" {
					t.Error("a failed hook's change was used")
				}
			},
		},
		{
			name: "a hook that panics fails open",
			hooks: func(h *Hooks) {
				h.PreRequest = preRequest("buggy", func(context.Context, *llm.Request) error { panic("nil map") })
			},
			step:    text("ok"),
			wantLog: `hook=buggy error="panic: nil map"`,
		},
		{
			name: "a hook that times out fails open",
			hooks: func(h *Hooks) {
				h.Timeout = 5 * time.Millisecond
				h.PreRequest = preRequest("slow", func(ctx context.Context, _ *llm.Request) error {
					<-ctx.Done()
					return Block("too late to count")
				})
			},
			step:    text("ok"),
			wantLog: "did not return within 5ms",
		},
	}
	for _, tt := range tests {
		for _, stream := range modes() {
			t.Run(tt.name+"/"+modeName(stream), func(t *testing.T) {
				var logs logBuffer
				h := &Hooks{Logger: logs.logger()}
				tt.hooks(h)
				var steps []llmtest.Step
				if tt.step != nil {
					steps = append(steps, *tt.step)
				}
				m := llmtest.New(steps...).Verify(t)
				req := user("hi")
				r := runTurn(context.Background(), h.Middleware()(m), req, stream)
				if tt.wantErr != "" {
					if !errors.Is(r.err, ErrBlocked) || !strings.Contains(r.err.Error(), tt.wantErr) {
						t.Fatalf("err = %v, want blocked: %s", r.err, tt.wantErr)
					}
				} else if r.err != nil {
					t.Fatalf("err = %v", r.err)
				}
				if len(req.Messages) != 1 || req.Model != "" {
					t.Error("the caller's request was changed")
				}
				if !strings.Contains(logs.String(), tt.wantLog) {
					t.Errorf("log %q lacks %q", logs.String(), tt.wantLog)
				}
				if tt.checkReqs != nil {
					tt.checkReqs(t, m.Requests())
				}
			})
		}
	}
}

func TestOnErrorSeesModelFailures(t *testing.T) {
	t.Parallel()
	for _, stream := range modes() {
		t.Run(modeName(stream), func(t *testing.T) {
			var seen []error
			h := &Hooks{OnError: []Hook[ErrorFunc]{{Name: "alert", Func: func(_ context.Context, _ *llm.Request, err error) error {
				seen = append(seen, err)
				return nil
			}}}}
			m := llmtest.New(llmtest.Fail(kindErr(llm.KindAuth))).Verify(t)
			r := runTurn(context.Background(), h.Middleware()(m), user("x"), stream)
			if !errors.Is(r.err, llm.ErrAuth) || len(seen) != 1 || !errors.Is(seen[0], llm.ErrAuth) {
				t.Errorf("err %v, hook saw %v", r.err, seen)
			}
			h.runOnError(context.Background(), user("x"), errors.New("session store down"))
			if len(seen) != 2 {
				t.Errorf("runOnError did not reach the hook: %v", seen)
			}
		})
	}
}

func TestToolHooks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		hooks      Hooks
		wantResult string // substring of the tool result the model got
		wantIsErr  bool
		wantRuns   int32
		wantErr    string // a turn-stopping *BlockedError
	}{
		{
			name: "PreToolUse may change the arguments",
			hooks: Hooks{PreToolUse: []Hook[PreToolUseFunc]{{Name: "sandbox", Func: func(_ context.Context, c *tool.Call) error {
				c.Input = json.RawMessage(`{"path":"/tmp/x"}`)
				return nil
			}}}},
			wantResult: `echo got {"path":"/tmp/x"}`,
			wantRuns:   1,
		},
		{
			name: "PreToolUse may deny a call with a message; the loop goes on",
			hooks: Hooks{PreToolUse: []Hook[PreToolUseFunc]{{Name: "policy", Func: func(context.Context, *tool.Call) error {
				return Deny("writing to /etc is not allowed")
			}}}},
			wantResult: `denied by hook "policy" and did not run: writing to /etc is not allowed`,
			wantIsErr:  true,
		},
		{
			name: "PreToolUse may block the turn",
			hooks: Hooks{PreToolUse: []Hook[PreToolUseFunc]{{Name: "kill", Func: func(context.Context, *tool.Call) error {
				return Block("emergency stop")
			}}}},
			wantErr: `PreToolUse hook "kill" blocked the call to tool "echo": emergency stop`,
		},
		{
			name: "a failing PreToolUse hook fails open and its changes are dropped",
			hooks: Hooks{PreToolUse: []Hook[PreToolUseFunc]{{Name: "flaky", Func: func(_ context.Context, c *tool.Call) error {
				c.Input = json.RawMessage(`{"bad":true}`)
				return errors.New("oops")
			}}}},
			wantResult: `echo got {"path":"/etc/x"}`,
			wantRuns:   1,
		},
		{
			name: "PostToolUse may replace the result",
			hooks: Hooks{PostToolUse: []Hook[PostToolUseFunc]{{Name: "redact", Func: func(_ context.Context, _ tool.Call, r *ToolResult) error {
				r.Text = strings.ReplaceAll(r.Text, "/etc/x", "[redacted]")
				return nil
			}}}},
			wantResult: `echo got {"path":"[redacted]"}`,
			wantRuns:   1,
		},
		{
			name: "PostToolUse may turn a result into an error",
			hooks: Hooks{PostToolUse: []Hook[PostToolUseFunc]{{Name: "verify", Func: func(_ context.Context, _ tool.Call, r *ToolResult) error {
				r.Err = errors.New("result failed verification")
				return nil
			}}}},
			wantResult: "result failed verification",
			wantIsErr:  true,
			wantRuns:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.hooks.Logger = slog.New(slog.DiscardHandler)
			echo := newCounter("echo")
			steps := []llmtest.Step{llmtest.Reply(llmtest.Call("a", "echo", `{"path":"/etc/x"}`))}
			if tt.wantErr == "" {
				steps = append(steps, llmtest.Text("ok"))
			}
			m := llmtest.New(steps...).Verify(t)
			loop := FunctionInvocation(ToolLoop{Tools: []tool.Tool{echo}, Invoker: tool.Invoker{Middleware: []tool.Middleware{tt.hooks.ToolMiddleware()}}})(m)
			req := user("go")
			resp, err := loop.Generate(context.Background(), req)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want blocked: %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res := resp.Transcript[1]
			if !strings.Contains(res.Text(), tt.wantResult) || res.IsError != tt.wantIsErr || echo.runs.Load() != tt.wantRuns {
				t.Errorf("result %q (error %v), tool ran %d", res.Text(), res.IsError, echo.runs.Load())
			}
		})
	}
}

// secretFilter is a PostRequest hook that blocks answers holding "secret"
// and records each response it saw (nil for a stream that did not
// complete).
type secretFilter struct {
	mu   sync.Mutex
	seen []*llm.Response
}

func (f *secretFilter) hooks(logs *logBuffer) *Hooks {
	return &Hooks{Logger: logs.logger(), PostRequest: []Hook[PostRequestFunc]{{Name: "filter",
		Func: func(_ context.Context, _ *llm.Request, resp *llm.Response) error {
			f.mu.Lock()
			f.seen = append(f.seen, resp)
			f.mu.Unlock()
			if resp != nil && strings.Contains(resp.Message.Text(), "secret") {
				return Block("leaks a secret")
			}
			return nil
		}}}}
}

func TestPostRequestBlocksAGeneratedResponse(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	f := &secretFilter{}
	m := llmtest.New(llmtest.Text("the secret is 42")).Verify(t)
	_, err := f.hooks(&logs).Middleware()(m).Generate(context.Background(), user("hi"))
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), `PostRequest hook "filter" blocked the response: leaks a secret`) {
		t.Fatalf("err = %v, want the block", err)
	}
}

// TestPostRequestRunsOnceAStreamHasEnded: on a stream the hook runs after
// the consumer had every event, however the stream ended, and its Block
// cannot withdraw a response already delivered (it is logged).
func TestPostRequestRunsOnceAStreamHasEnded(t *testing.T) {
	t.Parallel()
	boom := &llm.Error{Kind: llm.KindServer, Message: "boom"}
	for _, tc := range []struct {
		name     string
		step     llmtest.Step
		stopAt   llm.EventType // the consumer breaks after this event ("" = never)
		wantResp bool
		wantErr  bool
		wantLog  string
	}{
		{name: "completed, the block is logged", step: llmtest.Text("the secret is 42"), wantResp: true,
			wantLog: "a PostRequest hook blocked a streamed response that was already delivered"},
		{name: "completed and allowed", step: llmtest.Text("hello"), wantResp: true},
		{name: "failed", step: llmtest.Text("hello").FailAfter(1, boom), wantErr: true},
		{name: "abandoned by the consumer", step: llmtest.Text("hello"), stopAt: llm.EventMessageStart},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			f := &secretFilter{}
			m := llmtest.New(tc.step).Verify(t)
			sawComplete, ranBeforeEnd := false, false
			var err error
			for ev, e := range f.hooks(&logs).Middleware()(m).Stream(context.Background(), user("hi")) {
				f.mu.Lock()
				ranBeforeEnd = ranBeforeEnd || len(f.seen) > 0
				f.mu.Unlock()
				if e != nil {
					err = e
					break
				}
				if ev.Type == llm.EventComplete {
					sawComplete = true
				}
				if ev.Type == tc.stopAt {
					break
				}
			}
			if ranBeforeEnd {
				t.Fatal("the hook ran before the stream ended")
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantResp && !sawComplete {
				t.Fatal("the completion event was withheld")
			}
			if len(f.seen) != 1 {
				t.Fatalf("the hook ran %d times, want once", len(f.seen))
			}
			if got := f.seen[0] != nil; got != tc.wantResp {
				t.Fatalf("the hook saw a response: %v, want %v", got, tc.wantResp)
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Fatalf("log %q lacks %q", logs.String(), tc.wantLog)
			}
		})
	}
}
