package middleware

import (
	"context"
	"encoding/json"
	"iter"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

// records parses the JSON log lines in b.
func records(t *testing.T, b *logBuffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad log line %q: %v", line, err)
		}
		out = append(out, r)
	}
	return out
}

func jsonLogger(b *logBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestLoggingWritesOneRecordPerModelCall(t *testing.T) {
	t.Parallel()
	const secret = "my password is hunter2"
	tests := []struct {
		name     string
		step     func(c *fakeClock) llmtest.Step
		contents bool
		want     map[string]any
		absent   []string // substrings the log must not hold
	}{
		{
			name: "a success records model, tokens, finish reason and duration, and no contents",
			step: func(c *fakeClock) llmtest.Step {
				return llmtest.Func(func(context.Context, *llm.Request) (*llm.Response, error) {
					c.Advance(1500 * time.Millisecond)
					return &llm.Response{Message: llm.AssistantText("the answer " + secret), Usage: llm.Usage{InputTokens: 12, OutputTokens: 3}}, nil
				})
			},
			want: map[string]any{"msg": "model call", "level": "INFO", "provider": "llmtest", "model": "scripted",
				"input_tokens": 12.0, "output_tokens": 3.0, "finish_reason": "stop", "duration": 1.5e9},
			absent: []string{"hunter2", "answer", "last_message"},
		},
		{
			name: "a failure records the error kind at Warn",
			step: func(*fakeClock) llmtest.Step {
				return llmtest.Fail(&llm.Error{Kind: llm.KindRateLimited, Provider: "p", Message: "slow down"})
			},
			want: map[string]any{"level": "WARN", "error_kind": "rate_limited"},
		},
		{
			name:     "contents are recorded only when asked",
			step:     func(*fakeClock) llmtest.Step { return llmtest.Text("an answer") },
			contents: true,
			want:     map[string]any{"last_message": secret, "answer": "an answer"},
		},
	}
	for _, tt := range tests {
		for _, stream := range modes() {
			t.Run(tt.name+"/"+modeName(stream), func(t *testing.T) {
				var logs logBuffer
				clock := newFakeClock()
				m := llmtest.New(tt.step(clock)).Verify(t)
				lm := Logging(LogConfig{Logger: jsonLogger(&logs), Contents: tt.contents, Clock: clock})(m)
				runTurn(context.Background(), lm, user(secret), stream)
				recs := records(t, &logs)
				if len(recs) != 1 {
					t.Fatalf("%d records, want 1:\n%s", len(recs), logs.String())
				}
				for k, v := range tt.want {
					if recs[0][k] != v {
						t.Errorf("%s = %v, want %v", k, recs[0][k], v)
					}
				}
				if recs[0]["stream"] != stream {
					t.Errorf("stream = %v", recs[0]["stream"])
				}
				for _, s := range tt.absent {
					if strings.Contains(logs.String(), s) {
						t.Errorf("log holds %q:\n%s", s, logs.String())
					}
				}
			})
		}
	}
}

func TestLoggingRecordsAStreamStoppedEarly(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	m := llmtest.New(llmtest.Text("a long answer")).Verify(t)
	for range Logging(LogConfig{Logger: jsonLogger(&logs)})(m).Stream(context.Background(), user("x")) {
		break
	}
	recs := records(t, &logs)
	if len(recs) != 1 || recs[0]["stopped"] != true {
		t.Errorf("records = %v", recs)
	}
}

func TestLoggingCostsNothingWhenDisabled(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	lg := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))
	m := llmtest.New(llmtest.Text("ok"), llmtest.Fail(&llm.Error{Kind: llm.KindServer})).Verify(t)
	lm := Logging(LogConfig{Logger: lg})(m)
	if _, err := lm.Generate(context.Background(), user("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := lm.Generate(context.Background(), user("x")); err == nil {
		t.Fatal("want the error")
	}
	if logs.String() != "" {
		t.Errorf("logged below the handler's level: %s", logs.String())
	}
}

func TestToolLoggingWritesOneRecordPerToolCall(t *testing.T) {
	t.Parallel()
	for _, contents := range []bool{false, true} {
		var logs logBuffer
		cfg := LogConfig{Logger: jsonLogger(&logs), Contents: contents, Clock: newFakeClock()}
		m := llmtest.New(llmtest.Reply(llmtest.Call("a", "echo", `{"k":"private"}`), llmtest.Call("b", "nope", `{}`)), llmtest.Text("ok")).Verify(t)
		req := user("go")
		loop := FunctionInvocation(ToolLoop{Tools: []tool.Tool{newCounter("echo")}, Invoker: tool.Invoker{Middleware: []tool.Middleware{ToolLogging(cfg)}}})(m)
		if _, err := loop.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		recs := records(t, &logs)
		if len(recs) != 2 {
			t.Fatalf("%d records:\n%s", len(recs), logs.String())
		}
		byID := map[any]map[string]any{recs[0]["call_id"]: recs[0], recs[1]["call_id"]: recs[1]}
		if a := byID["a"]; a["tool"] != "echo" || a["is_error"] != false || a["level"] != "INFO" {
			t.Errorf("record a = %v", a)
		}
		if b := byID["b"]; b["is_error"] != true || b["level"] != "WARN" || b["error"] != `tool "nope" not found` {
			t.Errorf("record b = %v", b)
		}
		if got := strings.Contains(logs.String(), "private"); got != contents {
			t.Errorf("contents=%v but arguments logged=%v", contents, got)
		}
	}
}

// tracer is middleware that records the order calls pass through it.
func tracer(name string, trace *[]string) Middleware {
	return func(next llm.Model) llm.Model {
		return &traced{next: next, name: name, trace: trace}
	}
}

type traced struct {
	next  llm.Model
	name  string
	trace *[]string
}

func (m *traced) Info() llm.ModelInfo { return m.next.Info() }
func (m *traced) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	*m.trace = append(*m.trace, m.name)
	return m.next.Generate(ctx, req)
}
func (m *traced) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	*m.trace = append(*m.trace, m.name)
	return m.next.Stream(ctx, req)
}

func TestChainPutsTheFirstMiddlewareOutermost(t *testing.T) {
	t.Parallel()
	var trace []string
	m := llmtest.New(llmtest.Text("ok")).Verify(t)
	c := Chain(m, tracer("outer", &trace), nil, tracer("middle", &trace), tracer("inner", &trace))
	if _, err := c.Generate(context.Background(), user("x")); err != nil {
		t.Fatal(err)
	}
	if strings.Join(trace, ",") != "outer,middle,inner" {
		t.Errorf("order = %v", trace)
	}
	if Chain(m) != llm.Model(m) {
		t.Error("Chain with no middleware is not the model itself")
	}
}
