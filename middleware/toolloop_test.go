package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

func TestToolLoopRules(t *testing.T) {
	t.Parallel()
	loopForever := func(n int) []llmtest.Step {
		s := make([]llmtest.Step, n)
		for i := range s {
			s[i] = llmtest.Reply(llmtest.Call(fmt.Sprint("c", i), "echo", `{}`)).WithUsage(llm.Usage{InputTokens: 1, OutputTokens: 1})
		}
		return s
	}
	tests := []struct {
		name     string
		steps    []llmtest.Step
		cfg      ToolLoop
		tools    func(e *env) []tool.Tool // nil: echo and other
		declared []llm.ToolDefinition     // the request's declared-only tools
		check    func(t *testing.T, e *env, r turnResult)
	}{
		{
			name:  "an answer without tool calls ends the loop",
			steps: []llmtest.Step{llmtest.Text("hello")},
			check: func(t *testing.T, e *env, r turnResult) {
				if r.resp.Message.Text() != "hello" || len(r.resp.Transcript) != 1 || r.resp.FinishReason != llm.FinishStop {
					t.Errorf("resp = %+v", r.resp)
				}
			},
		},
		{
			name: "tool results go back to the model tied to their call ids and usage is summed",
			steps: []llmtest.Step{
				llmtest.Reply(llmtest.Call("c1", "echo", `{"x":1}`)).WithUsage(llm.Usage{InputTokens: 10, OutputTokens: 2}),
				llmtest.Text("done").WithUsage(llm.Usage{InputTokens: 20, OutputTokens: 3}),
			},
			check: func(t *testing.T, e *env, r turnResult) {
				reqs := e.model.Requests()
				second := reqs[1].Messages
				if len(second) != 3 || second[2].ToolCallID != "c1" || second[2].Text() != `echo got {"x":1}` {
					t.Errorf("second request:\n%s", dump(second))
				}
				if u := r.resp.Usage; u.InputTokens != 30 || u.OutputTokens != 5 {
					t.Errorf("usage = %+v, want the sum", u)
				}
				if len(r.resp.Transcript) != 3 || r.resp.Message.Text() != "done" {
					t.Errorf("transcript:\n%s", dump(r.resp.Transcript))
				}
			},
		},
		{
			name: "parallel calls are answered in call order",
			steps: []llmtest.Step{
				llmtest.Reply(llmtest.Call("a", "echo", `{"n":1}`), llmtest.Call("b", "other", `{"n":2}`), llmtest.Call("c", "echo", `{"n":3}`)),
				llmtest.Text("ok"),
			},
			check: func(t *testing.T, e *env, r turnResult) {
				tr := r.resp.Transcript
				if len(tr) != 5 || tr[1].ToolCallID != "a" || tr[2].Text() != `other got {"n":2}` || tr[3].ToolCallID != "c" {
					t.Errorf("transcript:\n%s", dump(tr))
				}
				if e.echo.runs.Load() != 2 || e.other.runs.Load() != 1 {
					t.Errorf("runs echo=%d other=%d", e.echo.runs.Load(), e.other.runs.Load())
				}
			},
		},
		{
			name: "text before, between and after tool calls stays in one assistant message",
			steps: []llmtest.Step{
				llmtest.Reply(llm.Thinking{Text: "plan", Signature: "s"}, llm.Text{Text: "before"}, llmtest.Call("a", "echo", `{}`),
					llm.Text{Text: "between"}, llmtest.Call("b", "echo", `{}`), llm.Text{Text: "after"}),
				llmtest.Text("final"),
			},
			check: func(t *testing.T, e *env, r turnResult) {
				first := r.resp.Transcript[0]
				want := []llm.Block{llm.Thinking{Text: "plan", Signature: "s"}, llm.Text{Text: "before"}, llmtest.Call("a", "echo", `{}`),
					llm.Text{Text: "between"}, llmtest.Call("b", "echo", `{}`), llm.Text{Text: "after"}}
				if !reflect.DeepEqual(first.Content, want) {
					t.Errorf("first assistant message = %+v", first.Content)
				}
			},
		},
		{
			name:  "the loop stops at MaxSteps with a valid transcript",
			steps: loopForever(3),
			cfg:   ToolLoop{MaxSteps: 3},
			check: func(t *testing.T, e *env, r turnResult) {
				if r.resp.FinishReason != llm.FinishMaxSteps || e.model.Calls() != 3 || e.echo.runs.Load() != 2 {
					t.Errorf("finish %s after %d calls and %d tool runs", r.resp.FinishReason, e.model.Calls(), e.echo.runs.Load())
				}
				last := r.resp.Transcript[len(r.resp.Transcript)-1]
				if !last.IsError || !strings.Contains(last.Text(), "limit of 3 model calls") {
					t.Errorf("last result = %q", last.Text())
				}
				if r.resp.Usage.InputTokens != 3 {
					t.Errorf("usage = %+v", r.resp.Usage)
				}
			},
		},
		{
			name:  "the default limit is 20 model calls",
			steps: loopForever(DefaultMaxSteps),
			check: func(t *testing.T, e *env, r turnResult) {
				if r.resp.FinishReason != llm.FinishMaxSteps || e.model.Calls() != 20 {
					t.Errorf("finish %s after %d calls", r.resp.FinishReason, e.model.Calls())
				}
			},
		},
		{
			name:  "calls of an answer cut off by the length limit are not run",
			steps: []llmtest.Step{llmtest.Reply(llm.Text{Text: "partial"}, llmtest.Call("a", "echo", `{}`)).WithFinish(llm.FinishLength)},
			check: func(t *testing.T, e *env, r turnResult) {
				if e.echo.runs.Load() != 0 || r.resp.FinishReason != llm.FinishLength {
					t.Errorf("ran %d, finish %s", e.echo.runs.Load(), r.resp.FinishReason)
				}
				tr := r.resp.Transcript
				if len(tr) != 2 || tr[0].Text() != "partial" || !tr[1].IsError || !strings.Contains(tr[1].Text(), "cut off") {
					t.Errorf("transcript:\n%s", dump(tr))
				}
			},
		},
		{
			name:  "a call to an unknown tool is an error result and the loop goes on",
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("a", "nope", `{}`)), llmtest.Text("sorry")},
			check: func(t *testing.T, e *env, r turnResult) {
				tr := r.resp.Transcript
				if len(tr) != 3 || !tr[1].IsError || tr[1].Text() != `tool "nope" not found` || tr[2].Text() != "sorry" {
					t.Errorf("transcript:\n%s", dump(tr))
				}
			},
		},
		{
			name:     "a call to a declared-only tool ends the turn for the caller to answer",
			steps:    []llmtest.Step{llmtest.Reply(llmtest.Call("a", "echo", `{}`), llmtest.Call("b", "ask_user", `{}`))},
			tools:    func(e *env) []tool.Tool { return []tool.Tool{e.echo} },
			declared: []llm.ToolDefinition{{Name: "ask_user"}},
			check: func(t *testing.T, e *env, r turnResult) {
				if r.resp.FinishReason != llm.FinishToolUse || len(r.resp.Transcript) != 1 || e.echo.runs.Load() != 0 {
					t.Errorf("finish %s, transcript %d, echo ran %d", r.resp.FinishReason, len(r.resp.Transcript), e.echo.runs.Load())
				}
			},
		},
		{
			name:  "an approved call runs",
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("a", "guarded", `{}`)), llmtest.Text("ok")},
			cfg: ToolLoop{Approver: tool.ApproverFunc(func(_ context.Context, c tool.Call) (tool.Decision, error) {
				return tool.Decision{Approved: c.Name == "guarded"}, nil
			})},
			tools: guarded,
			check: func(t *testing.T, e *env, r turnResult) {
				if e.echo.runs.Load() != 1 || r.resp.Transcript[1].IsError {
					t.Errorf("ran %d: %q", e.echo.runs.Load(), r.resp.Transcript[1].Text())
				}
			},
		},
		{
			name:  "a denied call does not run and the model is told why",
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("a", "guarded", `{}`)), llmtest.Text("ok")},
			cfg: ToolLoop{Approver: tool.ApproverFunc(func(context.Context, tool.Call) (tool.Decision, error) {
				return tool.Decision{Reason: "not on a Friday"}, nil
			})},
			tools: guarded,
			check: func(t *testing.T, e *env, r turnResult) {
				res := r.resp.Transcript[1]
				if e.echo.runs.Load() != 0 || !res.IsError || !strings.Contains(res.Text(), "denied") || !strings.Contains(res.Text(), "not on a Friday") {
					t.Errorf("ran %d: %+v %q", e.echo.runs.Load(), res, res.Text())
				}
			},
		},
		{
			name:  "without an approver a call needing approval is denied",
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("a", "guarded", `{}`)), llmtest.Text("ok")},
			tools: guarded,
			check: func(t *testing.T, e *env, r turnResult) {
				if e.echo.runs.Load() != 0 || !strings.Contains(r.resp.Transcript[1].Text(), "no approver") {
					t.Errorf("ran %d: %q", e.echo.runs.Load(), r.resp.Transcript[1].Text())
				}
			},
		},
		{
			name:  "tools that need no approval never ask",
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("a", "echo", `{}`)), llmtest.Text("ok")},
			cfg: ToolLoop{Approver: tool.ApproverFunc(func(context.Context, tool.Call) (tool.Decision, error) {
				panic("asked")
			})},
			check: func(t *testing.T, e *env, r turnResult) {
				if e.echo.runs.Load() != 1 {
					t.Errorf("ran %d", e.echo.runs.Load())
				}
			},
		},
		{
			name:  "a model call refused by a spending limit ends the turn like the step limit",
			steps: append(loopForever(2), llmtest.Fail(fmt.Errorf("refused: %w", llm.ErrBudgetExceeded))),
			check: func(t *testing.T, e *env, r turnResult) {
				if r.resp.FinishReason != llm.FinishBudget || e.model.Calls() != 3 || e.echo.runs.Load() != 2 {
					t.Errorf("finish %s after %d calls and %d tool runs", r.resp.FinishReason, e.model.Calls(), e.echo.runs.Load())
				}
				tr := r.resp.Transcript
				if len(tr) != 4 || tr[3].Role != llm.RoleTool || tr[3].ToolCallID != "c1" || r.resp.Usage.InputTokens != 2 {
					t.Errorf("transcript (want both answers and both results):\n%s", dump(tr))
				}
			},
		},
		{
			name: "a forced tool choice becomes auto after the first call",
			steps: []llmtest.Step{
				llmtest.Reply(llmtest.Call("a", "echo", `{}`)),
				llmtest.Text("ok"),
			},
			check: func(t *testing.T, e *env, r turnResult) {
				reqs := e.model.Requests()
				if reqs[0].ToolChoice.Mode != llm.ToolChoiceRequired || reqs[1].ToolChoice.Mode != llm.ToolChoiceAuto {
					t.Errorf("tool choices %q then %q", reqs[0].ToolChoice.Mode, reqs[1].ToolChoice.Mode)
				}
			},
		},
	}
	for _, tt := range tests {
		for _, stream := range modes() {
			t.Run(tt.name+"/"+modeName(stream), func(t *testing.T) {
				e := &env{echo: newCounter("echo"), other: newCounter("other")}
				e.model = llmtest.New(tt.steps...).Verify(t)
				cfg := tt.cfg
				cfg.Tools = []tool.Tool{e.echo, e.other}
				if tt.tools != nil {
					cfg.Tools = tt.tools(e)
				}
				req := user("go")
				req.Tools = tt.declared
				if strings.Contains(tt.name, "forced tool choice") {
					req.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceRequired}
				}
				before := len(req.Messages)
				r := runTurn(context.Background(), Chain(e.model, FunctionInvocation(cfg)), req, stream)
				if r.err != nil {
					t.Fatalf("turn failed: %v", r.err)
				}
				if r.resp.Transcript == nil || !reflect.DeepEqual(r.resp.Message, lastAssistant(r.resp.Transcript)) {
					t.Fatalf("Message is not the transcript's last assistant message")
				}
				if r.resp.FinishReason != llm.FinishToolUse {
					checkTranscript(t, r.resp.Transcript)
				}
				if len(req.Messages) != before {
					t.Error("the caller's request was changed")
				}
				tt.check(t, e, r)
			})
		}
	}
}

// guarded turns e.echo into the tool "guarded", which needs approval.
func guarded(e *env) []tool.Tool {
	e.echo.name, e.echo.approval = "guarded", true
	return []tool.Tool{e.echo}
}

// env is shared by guarded; it mirrors TestToolLoopRules' env.
type env = struct {
	echo, other *counter
	model       *llmtest.Model
}

func lastAssistant(msgs []llm.Message) llm.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant {
			return msgs[i]
		}
	}
	return llm.Message{}
}

// A spending limit that refuses a turn's first model call fails the turn:
// it did nothing.
func TestBudgetRefusalOfTheFirstCallIsTheTurnsError(t *testing.T) {
	t.Parallel()
	refused := fmt.Errorf("refused: %w", llm.ErrBudgetExceeded)
	for _, stream := range modes() {
		m := llmtest.New(llmtest.Fail(refused))
		r := runTurn(context.Background(), Chain(m, FunctionInvocation(ToolLoop{})), user("go"), stream)
		if !errors.Is(r.err, llm.ErrBudgetExceeded) || r.resp != nil {
			t.Errorf("%s: %v %+v, want the refusal", modeName(stream), r.err, r.resp)
		}
	}
}

func TestToolLoopFailures(t *testing.T) {
	t.Parallel()
	boom := errors.New("database gone")
	tests := []struct {
		name    string
		steps   []llmtest.Step
		tool    func(ctx context.Context, in json.RawMessage) (string, error)
		wantErr func(error) bool
	}{
		{
			name:    "a fatal tool error ends the turn with that error",
			steps:   []llmtest.Step{llmtest.Reply(llmtest.Call("a", "t", `{}`))},
			tool:    func(context.Context, json.RawMessage) (string, error) { return "", tool.Fatal(boom) },
			wantErr: func(err error) bool { return errors.Is(err, boom) && tool.IsFatal(err) },
		},
		{
			name:    "a model error ends the turn with that error",
			steps:   []llmtest.Step{llmtest.Reply(llmtest.Call("a", "t", `{}`)), llmtest.Fail(&llm.Error{Kind: llm.KindAuth})},
			tool:    func(context.Context, json.RawMessage) (string, error) { return "ok", nil },
			wantErr: func(err error) bool { return errors.Is(err, llm.ErrAuth) },
		},
	}
	for _, tt := range tests {
		for _, stream := range modes() {
			t.Run(tt.name+"/"+modeName(stream), func(t *testing.T) {
				m := llmtest.New(tt.steps...).Verify(t)
				req := user("go")
				r := runTurn(context.Background(), FunctionInvocation(ToolLoop{Tools: []tool.Tool{funcTool{"t", tt.tool}}})(m), req, stream)
				if r.resp != nil || !tt.wantErr(r.err) {
					t.Errorf("resp %v err %v", r.resp, r.err)
				}
			})
		}
	}
}

func TestCancellationMidToolStopsEverything(t *testing.T) {
	for _, stream := range modes() {
		t.Run(modeName(stream), func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			var running atomic.Int32
			started := make(chan struct{}, 2)
			slow := funcTool{"slow", func(ctx context.Context, _ json.RawMessage) (string, error) {
				running.Add(1)
				defer running.Add(-1)
				started <- struct{}{}
				<-ctx.Done()
				return "", ctx.Err()
			}}
			m := llmtest.New(llmtest.Reply(llmtest.Call("a", "slow", `{}`), llmtest.Call("b", "slow", `{}`))).Verify(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { <-started; <-started; cancel() }()
			req := user("go")
			r := runTurn(ctx, FunctionInvocation(ToolLoop{Tools: []tool.Tool{slow}})(m), req, stream)
			if !errors.Is(r.err, llm.ErrCancelled) || !errors.Is(r.err, context.Canceled) || r.resp != nil {
				t.Fatalf("resp %v err %v; want a cancelled error", r.resp, r.err)
			}
			if n := running.Load(); n != 0 {
				t.Errorf("%d tools still running", n)
			}
		})
	}
}

func TestStreamForwardsEachStepAndEndsWithOneComplete(t *testing.T) {
	t.Parallel()
	var log []string
	echo := funcTool{"echo", func(_ context.Context, in json.RawMessage) (string, error) {
		log = append(log, "tool runs")
		return string(in), nil
	}}
	m := llmtest.New(
		llmtest.Reply(llm.Text{Text: "let me check the two things"}, llmtest.Call("a", "echo", `{"n":1}`), llmtest.Call("b", "echo", `{"n":2}`)),
		llmtest.Text("both are fine, thanks for waiting"),
	).Verify(t)
	req := user("go")
	var text strings.Builder
	var types []string
	completes := 0
	var final *llm.Response
	for ev, err := range FunctionInvocation(ToolLoop{Tools: []tool.Tool{echo}, Invoker: tool.Invoker{Concurrency: 1}})(m).Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, ev.Type.String())
		switch ev.Type {
		case llm.EventTextDelta:
			text.WriteString(ev.Delta)
		case llm.EventComplete:
			completes++
			final = ev.Response
		case llm.EventToolResult:
			types = append(types, "result:"+ev.Message.ToolCallID)
		case llm.EventStepComplete:
			types = append(types, "step:"+ev.Response.ID)
		}
	}
	if completes != 1 || log[len(log)-1] != "complete" {
		t.Fatalf("%d completes; last event %s", completes, log[len(log)-1])
	}
	if got := strings.Join(types, " "); got != "step:msg_1 result:a result:b step:msg_2" {
		t.Errorf("step and result events: %s", got)
	}
	// The tools ran after the first step completed, before the results.
	joined := strings.Join(log, ",")
	if !strings.Contains(joined, "step_complete,tool runs,tool runs,tool_result,tool_result") {
		t.Errorf("event order: %s", joined)
	}
	if text.String() != "let me check the two thingsboth are fine, thanks for waiting" {
		t.Errorf("forwarded text %q", text.String())
	}
	if len(final.Transcript) != 4 || final.Message.Text() != "both are fine, thanks for waiting" {
		t.Errorf("final transcript:\n%s", dump(final.Transcript))
	}
	if n := strings.Count(joined, "text_delta"); n < 6 {
		t.Errorf("only %d text deltas forwarded: inner events were not passed through as they came", n)
	}
}

func TestBreakingTheStreamStopsTheLoop(t *testing.T) {
	breakAt := []llm.EventType{llm.EventTextDelta, llm.EventStepComplete, llm.EventToolResult}
	for _, at := range breakAt {
		t.Run(at.String(), func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			echo := newCounter("echo")
			m := llmtest.New(llmtest.Reply(llm.Text{Text: "hi"}, llmtest.Call("a", "echo", `{}`)), llmtest.Text("unused"))
			req := user("go")
			for ev, err := range FunctionInvocation(ToolLoop{Tools: []tool.Tool{echo}})(m).Stream(context.Background(), req) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Type == at {
					break
				}
			}
			if m.Calls() != 1 {
				t.Errorf("the loop went on after the caller stopped: %d model calls", m.Calls())
			}
			wantRuns := int32(0)
			if at == llm.EventToolResult {
				wantRuns = 1
			}
			if echo.runs.Load() != wantRuns {
				t.Errorf("tool ran %d times, want %d", echo.runs.Load(), wantRuns)
			}
		})
	}
}

func TestTheCallersMessagesAreNeverWritten(t *testing.T) {
	t.Parallel()
	for _, stream := range modes() {
		t.Run(modeName(stream), func(t *testing.T) {
			m := llmtest.New(llmtest.Reply(llmtest.Call("a", "echo", `{}`)), llmtest.Text("ok")).Verify(t)
			msgs := make([]llm.Message, 1, 10) // spare capacity the loop must not use
			msgs[0] = llm.UserText("go")
			req := &llm.Request{Messages: msgs}
			if r := runTurn(context.Background(), FunctionInvocation(ToolLoop{Tools: []tool.Tool{newCounter("echo")}})(m), req, stream); r.err != nil {
				t.Fatal(r.err)
			}
			if spare := msgs[:3]; spare[1].Role != "" || spare[2].Role != "" {
				t.Errorf("the loop appended into the caller's array:\n%s", dump(spare))
			}
		})
	}
}

func TestApproverSeesArgumentsAfterToolMiddleware(t *testing.T) {
	t.Parallel()
	var seen string
	rewrite := func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, c tool.Call) (string, error) {
			c.Input = []byte(`{"path":"/safe"}`)
			return next(ctx, c)
		}
	}
	m := llmtest.New(llmtest.Reply(llmtest.Call("a", "guarded", `{"path":"/etc"}`)), llmtest.Text("ok")).Verify(t)
	e := &env{echo: newCounter("echo")}
	req := user("go")
	loop := FunctionInvocation(ToolLoop{
		Tools:   guarded(e),
		Invoker: tool.Invoker{Middleware: []tool.Middleware{rewrite}},
		Approver: tool.ApproverFunc(func(_ context.Context, c tool.Call) (tool.Decision, error) {
			seen = string(c.Input)
			return tool.Decision{Approved: true}, nil
		}),
	})(m)
	if _, err := loop.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if seen != `{"path":"/safe"}` {
		t.Errorf("approver saw %s", seen)
	}
}

func TestInfoPassesThrough(t *testing.T) {
	t.Parallel()
	info := llm.ModelInfo{Provider: "p", Name: "n", ContextWindow: 9}
	m := Chain(llmtest.New().WithInfo(info), FunctionInvocation(ToolLoop{}), Retry(RetryConfig{}), (&Hooks{}).Middleware(), Logging(LogConfig{}))
	if m.Info() != info {
		t.Errorf("Info = %+v", m.Info())
	}
}

func TestApproverTimeoutIsNotAToolTimeout(t *testing.T) {
	t.Parallel()
	// The per-tool timeout covers the tool, not the wait for approval.
	m := llmtest.New(llmtest.Reply(llmtest.Call("a", "guarded", `{}`)), llmtest.Text("ok")).Verify(t)
	e := &env{echo: newCounter("echo")}
	req := user("go")
	loop := FunctionInvocation(ToolLoop{
		Tools:   guarded(e),
		Invoker: tool.Invoker{Timeout: time.Millisecond},
		Approver: tool.ApproverFunc(func(context.Context, tool.Call) (tool.Decision, error) {
			time.Sleep(10 * time.Millisecond) // a slow human
			return tool.Decision{Approved: true}, nil
		}),
	})(m)
	resp, err := loop.Generate(context.Background(), req)
	if err != nil || resp.Transcript[1].IsError {
		t.Fatalf("err %v, result %q", err, resp.Transcript[1].Text())
	}
}

func TestRetryRefusesToWrapAToolLoop(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "inside FunctionInvocation") {
			t.Errorf("recover() = %v, want a panic telling where Retry goes", r)
		}
	}()
	Chain(llmtest.New(), Retry(RetryConfig{}), FunctionInvocation(ToolLoop{}))
}

func TestWithInfoReachesEveryLayer(t *testing.T) {
	t.Parallel()
	info := llm.ModelInfo{Name: "local", ContextWindow: 32000}
	m := Chain(llmtest.New().WithInfo(llm.ModelInfo{Name: "adapter"}), FunctionInvocation(ToolLoop{}), Retry(RetryConfig{}), (&Hooks{}).Middleware(), WithInfo(info))
	if m.Info() != info {
		t.Errorf("Info = %+v, want the override", m.Info())
	}
}

// The loop offers its tools after the request's own definitions, skipping
// a name the request already defines, and never changes the caller's
// request.
func TestTheLoopOffersItsTools(t *testing.T) {
	t.Parallel()
	m := llmtest.New(llmtest.Text("ok")).Verify(t)
	req := user("go")
	req.Tools = []llm.ToolDefinition{{Name: "ask_user"}, {Name: "echo", Description: "the request's words"}}
	loop := FunctionInvocation(ToolLoop{Tools: []tool.Tool{newCounter("echo"), newCounter("other")}})(m)
	if _, err := loop.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range m.Requests()[0].Tools {
		got = append(got, d.Name+":"+d.Description)
	}
	if want := []string{"ask_user:", "echo:the request's words", "other:counts"}; !reflect.DeepEqual(got, want) {
		t.Errorf("offered %q, want %q", got, want)
	}
	if len(req.Tools) != 2 {
		t.Error("the caller's request was changed")
	}
}
