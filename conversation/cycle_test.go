package conversation_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/conversation"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/usage"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func texts(msgs []llm.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role) + ":" + m.Text()
		for _, tu := range m.ToolUses() {
			out[i] += "[" + tu.ID + " " + tu.Name + "]"
		}
		if m.Role == llm.RoleTool {
			out[i] += "[" + m.ToolCallID + "]"
		}
	}
	return out
}

func TestTheSystemPromptIsOnlyASystemMessage(t *testing.T) {
	t.Parallel()
	m := llmtest.New(llmtest.Text("one"), llmtest.Text("two")).Verify(t)
	c := conversation.New(m, conversation.Config{})
	if _, err := c.Submit(context.Background(), "no system", nil); err != nil {
		t.Fatal(err)
	}
	if got := texts(m.Requests()[0].Messages); !reflect.DeepEqual(got, []string{"user:no system"}) {
		t.Errorf("without a system message the request is %q: nothing may be inserted", got)
	}
	c.WithMessages([]llm.Message{llm.SystemText("be brief")})
	if _, err := c.Submit(context.Background(), "hi", nil); err != nil {
		t.Fatal(err)
	}
	if got := texts(m.Requests()[1].Messages); !reflect.DeepEqual(got, []string{"system:be brief", "user:hi"}) {
		t.Errorf("request %q, want the history's system message, once, first", got)
	}
}

func TestSubmitExtendsTheHistoryOnlyOnSuccess(t *testing.T) {
	t.Parallel()
	rate := &llm.Error{Kind: llm.KindRateLimited}
	m := llmtest.New(llmtest.Text("hello").WithUsage(llm.Usage{InputTokens: 3, OutputTokens: 1}), llmtest.Fail(rate), llmtest.Text("again")).Verify(t)
	c := conversation.New(m, conversation.Config{Model: "gpt-x", MaxTokens: 50})
	ctx := context.Background()

	if _, err := c.Submit(ctx, "hi", nil); err != nil {
		t.Fatal(err)
	}
	want := []string{"user:hi", "assistant:hello"}
	if got := texts(c.Messages()); !reflect.DeepEqual(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
	if _, err := c.Submit(ctx, "this fails", nil); !errors.Is(err, llm.ErrRateLimited) {
		t.Fatalf("err = %v", err)
	}
	if got := texts(c.Messages()); !reflect.DeepEqual(got, want) {
		t.Errorf("history after a failed call %q, want it unchanged %q", got, want)
	}
	if c.Usage().Usage != (llm.Usage{InputTokens: 3, OutputTokens: 1}) {
		t.Errorf("usage %+v counts the failed call", c.Usage())
	}
	if _, err := c.Submit(ctx, "retry", nil); err != nil {
		t.Fatal(err)
	}
	req := m.Requests()[2]
	if got := texts(req.Messages); !reflect.DeepEqual(got, []string{"user:hi", "assistant:hello", "user:retry"}) {
		t.Errorf("request after the failure %q: the failed prompt must not linger", got)
	}
	if req.Model != "gpt-x" || req.MaxTokens != 50 {
		t.Errorf("request config: model %q max tokens %d", req.Model, req.MaxTokens)
	}
}

func TestABlockedCallChangesNothing(t *testing.T) {
	t.Parallel()
	m := llmtest.New().Verify(t)
	var seen []string
	hooks := &middleware.Hooks{PreRequest: []middleware.Hook[middleware.PreRequestFunc]{{Name: "guard", Func: func(_ context.Context, req *llm.Request) error {
		seen = texts(req.Messages)
		return middleware.Block("no secrets")
	}}}}
	c := conversation.New(m, conversation.Config{Hooks: hooks}).WithMessages([]llm.Message{llm.SystemText("sys")})
	_, err := c.Submit(context.Background(), "the password is hunter2", nil)
	if !errors.Is(err, middleware.ErrBlocked) {
		t.Fatalf("err = %v, want blocked", err)
	}
	if !reflect.DeepEqual(seen, []string{"system:sys", "user:the password is hunter2"}) {
		t.Errorf("the PreRequest hook saw %q", seen)
	}
	if got := texts(c.Messages()); !reflect.DeepEqual(got, []string{"system:sys"}) {
		t.Errorf("history %q after a blocked call", got)
	}
}

type weatherIn struct {
	City string `json:"city"`
}

func TestSubmitWithToolsRunsTheToolLoopAndKeepsTheWholeTurn(t *testing.T) {
	t.Parallel()
	m := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "weather", `{"city":"Paris"}`)).WithUsage(llm.Usage{InputTokens: 10}),
		llmtest.Text("Sunny in Paris.").WithUsage(llm.Usage{InputTokens: 20}),
	).Verify(t)
	weather := tool.MustFunc("weather", "Weather in a city", func(_ context.Context, in weatherIn) (string, error) {
		return "sunny in " + in.City, nil
	})
	var mu sync.Mutex
	var hooked []string
	hooks := &middleware.Hooks{PreToolUse: []middleware.Hook[middleware.PreToolUseFunc]{{Name: "audit", Func: func(_ context.Context, call *tool.Call) error {
		mu.Lock()
		hooked = append(hooked, call.Name)
		mu.Unlock()
		return nil
	}}}}
	c := conversation.New(m, conversation.Config{Hooks: hooks})
	resp, err := c.SubmitWithTools(context.Background(), "Weather in Paris?", []tool.Tool{weather})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user:Weather in Paris?", "assistant:[call_1 weather]", "tool_result:sunny in Paris[call_1]", "assistant:Sunny in Paris."}
	if got := texts(c.Messages()); !reflect.DeepEqual(got, want) {
		t.Errorf("history\n got %q\nwant %q", got, want)
	}
	if resp.Message.Text() != "Sunny in Paris." || c.Usage().Usage.InputTokens != 30 {
		t.Errorf("response %q, usage %+v", resp.Message.Text(), c.Usage())
	}
	if !reflect.DeepEqual(hooked, []string{"weather"}) {
		t.Errorf("tool hooks saw %v: the cycle's tool calls must go through its hooks", hooked)
	}
}

func TestSubmitMessagesLeavesTheHistoryAlone(t *testing.T) {
	t.Parallel()
	m := llmtest.New(llmtest.Text("summary").WithUsage(llm.Usage{OutputTokens: 4})).Verify(t)
	c := conversation.New(m, conversation.Config{}).WithMessages([]llm.Message{llm.UserText("kept")})
	resp, err := c.SubmitMessages(context.Background(), []llm.Message{llm.UserText("summarize this")}, nil)
	if err != nil || resp.Message.Text() != "summary" {
		t.Fatalf("%v %v", resp, err)
	}
	if got := texts(m.Requests()[0].Messages); !reflect.DeepEqual(got, []string{"user:summarize this"}) {
		t.Errorf("request %q, want exactly the given messages", got)
	}
	if got := texts(c.Messages()); !reflect.DeepEqual(got, []string{"user:kept"}) || c.Usage().Usage.OutputTokens != 4 {
		t.Errorf("history %q usage %+v", got, c.Usage())
	}
}

// TestSubmitStreamRecordsThePromptAndTheCallerTheAnswer follows the
// streaming pattern: the prompt is in the history once the stream runs, the
// caller pushes the answer, and a failed or abandoned stream takes the
// prompt back out.
func TestSubmitStreamRecordsThePromptAndTheCallerTheAnswer(t *testing.T) {
	t.Parallel()
	rate := &llm.Error{Kind: llm.KindRateLimited}
	m := llmtest.New(llmtest.Text("streamed answer"), llmtest.Text("x").FailAfter(2, rate), llmtest.Text("abandoned answer")).Verify(t)
	c := conversation.New(m, conversation.Config{})
	ctx := context.Background()

	var final *llm.Response
	var sb strings.Builder
	for ev, err := range c.SubmitStream(ctx, "hi", nil) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.EventTextDelta {
			sb.WriteString(ev.Delta)
		}
		if ev.Type == llm.EventComplete {
			if got := texts(c.Messages()); !reflect.DeepEqual(got, []string{"user:hi"}) {
				t.Errorf("history while streaming %q, want the prompt", got)
			}
			final = ev.Response
		}
	}
	if sb.String() != "streamed answer" || final == nil {
		t.Fatalf("streamed %q, final %v", sb.String(), final)
	}
	c.PushMessage(final.Message)
	want := []string{"user:hi", "assistant:streamed answer"}
	if got := texts(c.Messages()); !reflect.DeepEqual(got, want) {
		t.Errorf("history after PushMessage %q", got)
	}
	if c.Usage().Turns != 1 {
		t.Errorf("usage %+v, want the completed call counted", c.Usage())
	}

	for _, err := range c.SubmitStream(ctx, "fails", nil) {
		if err != nil && !errors.Is(err, llm.ErrRateLimited) {
			t.Fatal(err)
		}
	}
	for range c.SubmitStream(ctx, "abandoned", nil) {
		break
	}
	if got := texts(c.Messages()); !reflect.DeepEqual(got, want) {
		t.Errorf("history after a failed and an abandoned stream %q, want %q", got, want)
	}
}

func TestHistoryEditing(t *testing.T) {
	t.Parallel()
	c := conversation.New(llmtest.New(), conversation.Config{})
	c.WithMessages([]llm.Message{llm.SystemText("s")}).PushMessage(llm.UserText("a"), llm.AssistantText("b"))
	c.PushMessage(llm.UserText("c"))
	got := c.Messages()
	if !reflect.DeepEqual(texts(got), []string{"system:s", "user:a", "assistant:b", "user:c"}) {
		t.Errorf("history %q", texts(got))
	}
	theirs := append(got, llm.UserText("caller's own"))
	c.PushMessage(llm.UserText("d"))
	if c.Messages()[4].Text() != "d" || theirs[4].Text() != "caller's own" {
		t.Error("the caller's slice and the history share storage")
	}
}

func TestCostIsCountedPerModelAndUnknownWhenUnpriced(t *testing.T) {
	t.Parallel()
	tracker := &usage.Tracker{}
	ctx := context.Background()
	u := llm.Usage{InputTokens: 100_000}

	priced := llmtest.New(llmtest.Text("a").WithUsage(u)).WithInfo(llm.ModelInfo{Name: "priced", Price: &llm.Price{Input: 10}}).Verify(t) // $10 per million input tokens
	c := conversation.New(priced, conversation.Config{Tracker: tracker, Name: "one"})
	if _, err := c.Submit(ctx, "x", nil); err != nil {
		t.Fatal(err)
	}
	if got := c.Usage(); got.CostUSD != 1 || !got.CostKnown() || got.Turns != 1 {
		t.Errorf("priced cycle: %+v", got)
	}
	// The price is the model's (its Info), not the one requested by name.
	unpriced := llmtest.New(llmtest.Text("b").WithUsage(u)).Verify(t)
	c2 := conversation.New(unpriced, conversation.Config{Model: "priced", Tracker: tracker, Name: "two"})
	if _, err := c2.Submit(ctx, "x", nil); err != nil {
		t.Fatal(err)
	}
	if got := c2.Usage(); got.CostKnown() || got.CostUSD != 0 || got.Usage.InputTokens != 100_000 {
		t.Errorf("unpriced cycle: %+v, want usage counted and cost unknown", got)
	}
	if tot := tracker.Total(); tot.Turns != 2 || tot.CostKnown() {
		t.Errorf("shared tracker: %+v", tot)
	}
}

// counter counts one token per byte of text.
type counter struct{}

func (counter) CountMessages(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Text())
	}
	return n
}
func (counter) CountTools([]llm.ToolDefinition) int { return 0 }

// dropOldest keeps the last message, or fails with err; failing, when set,
// decides per call (0-based) instead of err.
type dropOldest struct {
	calls   int
	err     error
	failing func(call int) bool
}

func (d *dropOldest) Compress(_ context.Context, msgs []llm.Message, _ int, _ compact.TokenCounter) ([]llm.Message, error) {
	call := d.calls
	d.calls++
	if d.err != nil || (d.failing != nil && d.failing(call)) {
		return nil, errors.New("cannot fit")
	}
	return msgs[len(msgs)-1:], nil
}

// fromLastUser keeps the messages from the last user message on.
type fromLastUser struct{}

func (fromLastUser) Compress(_ context.Context, msgs []llm.Message, _ int, _ compact.TokenCounter) ([]llm.Message, error) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return msgs[i:], nil
		}
	}
	return msgs, nil
}

func TestCompaction(t *testing.T) {
	t.Parallel()
	t.Run("over the budget the request is compressed and adopted after success", func(t *testing.T) {
		m := llmtest.New(llmtest.Text("ok")).Verify(t)
		s := &dropOldest{}
		c := conversation.New(m, conversation.Config{Compaction: &compact.Policy{Strategy: s, Counter: counter{}, Budget: 10}}).
			WithMessages([]llm.Message{llm.UserText("0123456789"), llm.AssistantText("old")})
		if _, err := c.Submit(context.Background(), "new", nil); err != nil {
			t.Fatal(err)
		}
		if got := texts(m.Requests()[0].Messages); !reflect.DeepEqual(got, []string{"user:new"}) {
			t.Errorf("request %q", got)
		}
		if got := texts(c.Messages()); !reflect.DeepEqual(got, []string{"user:new", "assistant:ok"}) {
			t.Errorf("history %q, want the compressed one plus the answer", got)
		}
	})
	t.Run("a compression inside the tool loop becomes the history", func(t *testing.T) {
		m := llmtest.New(llmtest.Reply(llmtest.Call("call_1", "weather", `{"city":"Paris"}`)), llmtest.Text("Sunny.")).Verify(t)
		weather := tool.MustFunc("weather", "Weather in a city", func(_ context.Context, in weatherIn) (string, error) {
			return "sunny in " + in.City, nil
		})
		// Budget 20: the first step (16) fits, the second (30) does not.
		c := conversation.New(m, conversation.Config{Compaction: &compact.Policy{Strategy: fromLastUser{}, Counter: counter{}, Budget: 20}}).
			WithMessages([]llm.Message{llm.UserText("0123456789"), llm.AssistantText("old")})
		if _, err := c.SubmitWithTools(context.Background(), "new", []tool.Tool{weather}); err != nil {
			t.Fatal(err)
		}
		sent := texts(m.Requests()[1].Messages)
		if want := []string{"user:new", "assistant:[call_1 weather]", "tool_result:sunny in Paris[call_1]"}; !reflect.DeepEqual(sent, want) {
			t.Fatalf("second request %q, want %q", sent, want)
		}
		want := append(sent, "assistant:Sunny.")
		if got := texts(c.Messages()); !reflect.DeepEqual(got, want) {
			t.Errorf("history %q, want what the last step sent and its answer %q", got, want)
		}
	})
	t.Run("a compressed history is not adopted when the call fails", func(t *testing.T) {
		m := llmtest.New(llmtest.Fail(&llm.Error{Kind: llm.KindServer})).Verify(t)
		c := conversation.New(m, conversation.Config{Compaction: &compact.Policy{Strategy: &dropOldest{}, Counter: counter{}, Budget: 1}}).
			WithMessages([]llm.Message{llm.UserText("long history")})
		if _, err := c.Submit(context.Background(), "new", nil); err == nil {
			t.Fatal("no error")
		}
		if got := texts(c.Messages()); !reflect.DeepEqual(got, []string{"user:long history"}) {
			t.Errorf("history %q", got)
		}
	})
	t.Run("under the budget or with unknown limits nothing is compressed", func(t *testing.T) {
		s := &dropOldest{}
		m := llmtest.New(llmtest.Text("a"), llmtest.Text("b")).Verify(t)
		c := conversation.New(m, conversation.Config{Compaction: &compact.Policy{Strategy: s, Counter: counter{}, Budget: 1000}})
		_, _ = c.Submit(context.Background(), "x", nil)
		c2 := conversation.New(m, conversation.Config{Compaction: &compact.Policy{Strategy: s, Counter: counter{}}}) // budget from Info: unknown
		_, _ = c2.Submit(context.Background(), strings.Repeat("x", 5000), nil)
		if s.calls != 0 {
			t.Errorf("strategy ran %d times", s.calls)
		}
	})
	t.Run("after MaxFailures failures in a row compaction stops", func(t *testing.T) {
		s := &dropOldest{err: errors.New("cannot fit")}
		m := llmtest.New(llmtest.Text("1"), llmtest.Text("2"), llmtest.Text("3")).Verify(t)
		c := conversation.New(m, conversation.Config{Logger: discard(), Compaction: &compact.Policy{Strategy: s, Counter: counter{}, Budget: 1, MaxFailures: 2, Logger: discard()}})
		for range 3 {
			if _, err := c.Submit(context.Background(), "too long", nil); err != nil {
				t.Fatal(err) // a failing strategy never fails the call
			}
		}
		if s.calls != 2 {
			t.Errorf("strategy ran %d times, want 2", s.calls)
		}
		if n := len(m.Requests()[2].Messages); n != 5 {
			t.Errorf("third request has %d messages, want the uncompressed 5", n)
		}
	})
	t.Run("by default the breaker opens after 3 failures in a row", func(t *testing.T) {
		s := &dropOldest{err: errors.New("cannot fit")}
		m := llmtest.New(llmtest.Text("1"), llmtest.Text("2"), llmtest.Text("3"), llmtest.Text("4"), llmtest.Text("5")).Verify(t)
		c := conversation.New(m, conversation.Config{Logger: discard(), Compaction: &compact.Policy{Strategy: s, Counter: counter{}, Budget: 1}})
		for range 5 {
			if _, err := c.Submit(context.Background(), "too long", nil); err != nil {
				t.Fatal(err)
			}
		}
		if s.calls != 3 {
			t.Errorf("strategy ran %d times over 5 calls, want 3 (the default MaxFailures)", s.calls)
		}
	})
	t.Run("a success resets the failure count", func(t *testing.T) {
		// Fails twice, succeeds once, then always fails: with the reset the
		// breaker needs 3 more failures (6 runs in all); without it, one
		// (4 runs).
		s := &dropOldest{failing: func(call int) bool { return call != 2 }}
		steps := make([]llmtest.Step, 8)
		for i := range steps {
			steps[i] = llmtest.Text("ok")
		}
		m := llmtest.New(steps...).Verify(t)
		c := conversation.New(m, conversation.Config{Logger: discard(), Compaction: &compact.Policy{Strategy: s, Counter: counter{}, Budget: 1}})
		for range 8 {
			if _, err := c.Submit(context.Background(), "too long", nil); err != nil {
				t.Fatal(err)
			}
		}
		if s.calls != 6 {
			t.Errorf("strategy ran %d times, want 6 (the count reset by the success)", s.calls)
		}
	})
	t.Run("a streamed turn keeps the compressed history, as Submit does", func(t *testing.T) {
		history := []llm.Message{llm.UserText("0123456789"), llm.AssistantText("old")}
		policy := func() *compact.Policy {
			return &compact.Policy{Strategy: &dropOldest{}, Counter: counter{}, Budget: 10}
		}
		m := llmtest.New(llmtest.Text("ok"), llmtest.Text("ok")).Verify(t)
		submitted := conversation.New(m, conversation.Config{Compaction: policy()}).WithMessages(history)
		if _, err := submitted.Submit(context.Background(), "new", nil); err != nil {
			t.Fatal(err)
		}
		streamed := conversation.New(m, conversation.Config{Compaction: policy()}).WithMessages(history)
		var final *llm.Response
		for ev, err := range streamed.SubmitStream(context.Background(), "new", nil) {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Type == llm.EventComplete {
				final = ev.Response
			}
		}
		streamed.PushMessage(final.Message)
		if a, b := texts(submitted.Messages()), texts(streamed.Messages()); !reflect.DeepEqual(a, b) {
			t.Errorf("Submit kept %q, the streamed turn %q", a, b)
		}
	})
}

// The hooks' guardrails run on each Submit: an input tripwire stops
// SubmitWithTools before any tool runs, an output tripwire fails the call
// (streamed: in place of the completion); the history never changes.
func TestGuardrailsLeaveTheHistoryAsItWas(t *testing.T) {
	t.Parallel()
	var ran atomic.Int32
	weather := tool.MustFunc("weather", "Weather in a city", func(_ context.Context, in weatherIn) (string, error) {
		ran.Add(1)
		return "sunny", nil
	})
	tripIn := &middleware.Hooks{InputGuardrails: []middleware.Hook[middleware.InputGuardrailFunc]{{Name: "in", Func: func(context.Context, *llm.Request) error {
		return middleware.Block("no weather talk")
	}}}}
	tripOut := &middleware.Hooks{OutputGuardrails: []middleware.Hook[middleware.OutputGuardrailFunc]{{Name: "out", Func: func(_ context.Context, _ *llm.Request, resp *llm.Response) error {
		if strings.Contains(resp.Message.Text(), "hunter2") {
			return middleware.Block("leaks a password")
		}
		return nil
	}}}}
	tests := []struct {
		name  string
		hooks *middleware.Hooks
		call  func(c *conversation.Cycle) error
		stage middleware.GuardrailStage
	}{
		{"input, tools", tripIn, func(c *conversation.Cycle) error {
			_, err := c.SubmitWithTools(context.Background(), "Weather in Paris?", []tool.Tool{weather})
			return err
		}, middleware.StageInput},
		{"output, tools", tripOut, func(c *conversation.Cycle) error {
			_, err := c.SubmitWithTools(context.Background(), "Weather in Paris?", []tool.Tool{weather})
			return err
		}, middleware.StageOutput},
		{"output, stream", tripOut, func(c *conversation.Cycle) error {
			for ev, err := range c.SubmitStream(context.Background(), "Password?", nil) {
				if err != nil {
					return err
				}
				if ev.Type == llm.EventComplete {
					return errors.New("the completion of a tripped call arrived")
				}
			}
			return nil
		}, middleware.StageOutput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := llmtest.New(
				llmtest.Reply(llmtest.Call("call_1", "weather", `{"city":"Paris"}`)),
				llmtest.Text("Sunny; the password is hunter2."),
			)
			if tt.name == "output, stream" {
				m = llmtest.New(llmtest.Text("It is hunter2."))
			}
			ran.Store(0)
			c := conversation.New(m, conversation.Config{Hooks: tt.hooks}).WithMessages([]llm.Message{llm.SystemText("sys")})
			err := tt.call(c)
			var ge *middleware.GuardrailError
			if !errors.As(err, &ge) || ge.Stage != tt.stage || !errors.Is(err, middleware.ErrTripwire) {
				t.Fatalf("error %v, want the %s tripwire", err, tt.stage)
			}
			if tt.stage == middleware.StageInput && ran.Load() != 0 {
				t.Error("a tool ran")
			}
			if got := texts(c.Messages()); !reflect.DeepEqual(got, []string{"system:sys"}) {
				t.Errorf("history %q", got)
			}
		})
	}
}
