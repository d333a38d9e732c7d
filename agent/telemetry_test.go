package agent_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/observe"
	"github.com/agcore/agcore/tool"
)

// fakeTelemetry records what the agent tells its Telemetry, in order.
type fakeTelemetry struct {
	log  callLog
	runs []agent.RunInfo
	ends []agent.RunResult
	// bare: StartRun returns the context it was given, observer and all
	bare bool
}

type telKey struct{}

func (f *fakeTelemetry) StartRun(ctx context.Context, run agent.RunInfo) (context.Context, func(agent.RunResult)) {
	f.runs = append(f.runs, run)
	f.log.add("run start")
	ctx = context.WithValue(ctx, telKey{}, "run")
	if !f.bare {
		ctx = observe.With(ctx, f)
	}
	return ctx, func(res agent.RunResult) {
		f.log.add("run end")
		f.ends = append(f.ends, res)
	}
}

func (f *fakeTelemetry) ModelMiddleware() middleware.Middleware {
	return f.wrap("call")
}

func (f *fakeTelemetry) OnRetry(ctx context.Context, attempt int, _ time.Duration, err error) {
	if ctx.Value(telKey{}) != "run" {
		f.log.add("retry without the run's context")
	}
	f.log.add(fmt.Sprintf("retry %d %v", attempt, llm.KindOf(err)))
}

func (f *fakeTelemetry) wrap(what string) middleware.Middleware {
	return func(next llm.Model) llm.Model {
		return streamFunc{next: next, fn: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
			if ctx.Value(telKey{}) != "run" {
				f.log.add(what + " without the run's context")
			}
			f.log.add(what)
			return next.Stream(ctx, req)
		}}
	}
}

func (f *fakeTelemetry) ToolMiddleware() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call tool.Call) (string, error) {
			if ctx.Value(telKey{}) != "run" {
				f.log.add("tool without the run's context")
			}
			f.log.add("tool " + call.Name + " start")
			out, err := next(ctx, call)
			f.log.add("tool " + call.Name + " end")
			return out, err
		}
	}
}

func (f *fakeTelemetry) Start(ctx context.Context, p observe.Phase) (context.Context, observe.Span) {
	f.log.add("phase " + string(p))
	return ctx, phaseEnd{f, p}
}

func (f *fakeTelemetry) Inject(context.Context, func(string, string)) {}

type phaseEnd struct {
	f *fakeTelemetry
	p observe.Phase
}

func (e phaseEnd) SetInt(string, int)       {}
func (e phaseEnd) SetString(string, string) {}
func (e phaseEnd) End(error)                { e.f.log.add("phase " + string(e.p) + " end") }

// streamFunc is a model whose Stream is fn (Generate collects it).
type streamFunc struct {
	next llm.Model
	fn   func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error]
}

func (s streamFunc) Info() llm.ModelInfo { return s.next.Info() }
func (s streamFunc) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(s.fn(ctx, req))
}
func (s streamFunc) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return s.fn(ctx, req)
}

// TestTelemetryIsWiredIntoThePipeline: the run starts before everything
// and ends after persistence; the model middleware sees each model call of
// the tool loop once, OnRetry each retry after the user's own; the tool
// middleware wraps each tool call, outside the hooks;
// every piece gets the run's context; persistence is a phase.
func TestTelemetryIsWiredIntoThePipeline(t *testing.T) {
	f := &fakeTelemetry{}
	overloaded := &llm.Error{Kind: llm.KindOverloaded, Message: "busy"}
	model := llmtest.New(
		llmtest.Fail(overloaded),
		llmtest.Reply(llmtest.Call("c1", "lookup", `{}`)),
		llmtest.Text("done"),
	).Verify(t)
	hooks := &middleware.Hooks{PreToolUse: []middleware.Hook[middleware.PreToolUseFunc]{{Name: "h", Func: func(context.Context, *tool.Call) error {
		f.log.add("hook")
		return nil
	}}}}
	a := newAgent(t, model, agent.Config{
		Name: "tel", ID: "agent-7", Tools: []tool.Tool{echoTool{"lookup"}}, Store: newStore(), Telemetry: f,
		Hooks: hooks, Clock: fixedClock{}, NewID: ids(),
		Retry: middleware.RetryConfig{OnRetry: func(context.Context, int, time.Duration, error) { f.log.add("user retry") }},
	})
	resp, err := a.Run(context.Background(), user("hi"), &agent.RunOptions{SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"run start",
		"call", "user retry", "retry 1 overloaded", // the first attempt is overloaded and retried
		"tool lookup start", "hook", "tool lookup end",
		"call",
		"phase persistence", "phase persistence end",
		"run end",
	}
	if got := f.log.get(); !slices.Equal(got, want) {
		t.Errorf("telemetry saw\n%q\nwant\n%q", got, want)
	}
	if len(f.runs) != 1 || f.runs[0].Agent != "tel" || f.runs[0].AgentID != "agent-7" || f.runs[0].SessionID != "s1" || len(f.runs[0].Input) != 1 {
		t.Errorf("run info %+v", f.runs)
	}
	if len(f.ends) != 1 || f.ends[0].Response != resp || f.ends[0].RunID != resp.RunID || f.ends[0].Err != nil {
		t.Errorf("run result %+v", f.ends)
	}
}

// TestTelemetryEndsFailedRuns: a failed run ends its telemetry with its
// error, a run whose caller stops ranging with ErrAbandoned; neither
// persists.
func TestTelemetryEndsFailedRuns(t *testing.T) {
	f := &fakeTelemetry{}
	auth := &llm.Error{Kind: llm.KindAuth, Message: "no"}
	a := newAgent(t, llmtest.New(llmtest.Fail(auth), llmtest.Text("a long answer")).Verify(t),
		agent.Config{Telemetry: f, Store: newStore(), NewID: ids()})
	if _, err := a.Run(context.Background(), user("hi"), &agent.RunOptions{SessionID: "s"}); !errors.Is(err, llm.ErrAuth) {
		t.Fatalf("err = %v", err)
	}
	s := a.RunStream(context.Background(), user("hi"), &agent.RunOptions{SessionID: "s"})
	for range s.Updates() {
		break
	}
	if _, err := s.Wait(); !errors.Is(err, agent.ErrAbandoned) {
		t.Fatalf("abandoned: %v", err)
	}
	if len(f.ends) != 2 || !errors.Is(f.ends[0].Err, llm.ErrAuth) || f.ends[0].RunID != "run-1" || f.ends[0].Response != nil ||
		!errors.Is(f.ends[1].Err, agent.ErrAbandoned) {
		t.Errorf("run results %+v", f.ends)
	}
	for _, e := range f.log.get() {
		if e == "phase persistence" {
			t.Error("a failed run was persisted")
		}
	}
}

// TestTelemetryIsTheRunsObserver: the agent carries its Telemetry (an
// observe.Observer: one seam) in the run's context, so a Telemetry whose
// StartRun adds no Observer of its own still gets the phases.
func TestTelemetryIsTheRunsObserver(t *testing.T) {
	f := &fakeTelemetry{bare: true}
	a := newAgent(t, llmtest.New(llmtest.Text("done")).Verify(t), agent.Config{Telemetry: f, Store: newStore(), NewID: ids()})
	if _, err := a.Run(context.Background(), user("hi"), &agent.RunOptions{SessionID: "s"}); err != nil {
		t.Fatal(err)
	}
	want := []string{"run start", "call", "phase persistence", "phase persistence end", "run end"}
	if got := f.log.get(); !slices.Equal(got, want) {
		t.Errorf("telemetry saw\n%q\nwant\n%q", got, want)
	}
}
