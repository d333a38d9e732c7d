package otelagent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/otelagent"
)

// TestRetriedCall: a model call that succeeds on its third attempt is one
// chat span, successful, with agcore.attempts = 3 and one agcore.retry
// event per retried attempt, in order, with its wait.
func TestRetriedCall(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})
	model := llmtest.New(
		llmtest.Fail(&llm.Error{Kind: llm.KindOverloaded, Message: "busy"}),
		llmtest.Fail(&llm.Error{Kind: llm.KindServer, StatusCode: 502, Message: "bad gateway"}),
		llmtest.Text("fine"),
	).WithInfo(priced).Verify(t)
	a := newAgent(t, model, agent.Config{Name: "r", Telemetry: r.tel, Clock: &stepClock{},
		Retry: middleware.RetryConfig{BaseDelay: 250 * time.Millisecond, Jitter: -1}})
	if _, err := a.Run(context.Background(), []llm.Message{llm.UserText("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	spans := r.ended()
	if got := names(spans); !slices.Equal(got, []string{"chat gpt-test", "invoke_agent r"}) {
		t.Fatalf("spans %q", got)
	}
	chat := one(t, spans, "chat gpt-test")
	ok(t, chat)
	wantAttrs(t, chat, map[string]string{"agcore.attempts": "3"})
	var events []string
	for _, ev := range chat.Events() {
		a := kvMap(ev.Attributes)
		events = append(events, ev.Name+" "+a["agcore.attempt"]+" "+a["error.type"]+" "+a["agcore.error.message"]+" "+a["agcore.retry.delay"])
	}
	want := []string{"agcore.retry 1 overloaded llm: overloaded: busy 0.25", "agcore.retry 2 server llm: server (HTTP 502): bad gateway 0.5"}
	if !slices.Equal(events, want) {
		t.Errorf("events %q, want %q", events, want)
	}
	if got := points(r.metrics(t)["gen_ai.client.operation.duration"]); len(got) != 2 || strings.Contains(strings.Join(got, " "), "error.type") {
		t.Errorf("a retried success recorded durations %q", got)
	}
}

// TestFailedCall: a call that fails for good fails its chat span and the
// run's, with error status, the error's text and error.type; the duration
// metric has the error.type and no tokens are counted.
func TestFailedCall(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})
	model := llmtest.New(llmtest.Fail(&llm.Error{Kind: llm.KindAuth, StatusCode: 401, Message: "invalid key"})).WithInfo(priced).Verify(t)
	a := newAgent(t, model, agent.Config{Name: "f", Telemetry: r.tel})
	if _, err := a.Run(context.Background(), []llm.Message{llm.UserText("hi")}, nil); !errors.Is(err, llm.ErrAuth) {
		t.Fatalf("err = %v", err)
	}
	spans := r.ended()
	chat, root := one(t, spans, "chat gpt-test"), one(t, spans, "invoke_agent f")
	failed(t, chat, "auth")
	failed(t, root, "auth")
	if !strings.Contains(chat.Status().Description, "invalid key") {
		t.Errorf("status %q", chat.Status().Description)
	}
	if ev := chat.Events(); len(ev) != 0 {
		t.Errorf("a call that was not retried has events %v", ev)
	}
	m := r.metrics(t)
	want := []string{
		"error.type=auth,gen_ai.operation.name=chat,gen_ai.provider.name=openai,gen_ai.request.model=gpt-test count=1",
		"error.type=auth,gen_ai.operation.name=invoke_agent,gen_ai.provider.name=openai,gen_ai.request.model=gpt-test count=1",
	}
	if got := points(m["gen_ai.client.operation.duration"]); !slices.Equal(got, want) {
		t.Errorf("durations %q, want %q", got, want)
	}
	if got := points(m["gen_ai.client.token.usage"]); len(got) != 0 {
		t.Errorf("a failed call counted tokens: %q", got)
	}
}

// TestCancelledRun: a run whose context is cancelled during the model call
// fails its spans with error.type cancelled.
func TestCancelledRun(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	model := llmtest.New(llmtest.Func(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
		cancel()
		<-ctx.Done()
		return nil, llm.Cancelled("llmtest", ctx.Err())
	})).WithInfo(priced).Verify(t)
	a := newAgent(t, model, agent.Config{Name: "c", Telemetry: r.tel})
	if _, err := a.Run(ctx, []llm.Message{llm.UserText("hi")}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	spans := r.ended()
	failed(t, one(t, spans, "chat gpt-test"), "cancelled")
	failed(t, one(t, spans, "invoke_agent c"), "cancelled")
}

// TestAbandonedRun: a caller that stops ranging over the updates abandons
// the run: both spans end, with error.type abandoned.
func TestAbandonedRun(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})
	model := llmtest.New(llmtest.Text("a long answer, streamed in many small pieces")).WithInfo(priced).Verify(t)
	a := newAgent(t, model, agent.Config{Name: "ab", Telemetry: r.tel})
	s := a.RunStream(context.Background(), []llm.Message{llm.UserText("hi")}, nil)
	for range s.Updates() {
		break
	}
	if _, err := s.Wait(); !errors.Is(err, agent.ErrAbandoned) {
		t.Fatalf("err = %v", err)
	}
	spans := r.ended()
	failed(t, one(t, spans, "chat gpt-test"), "abandoned")
	failed(t, one(t, spans, "invoke_agent ab"), "abandoned")
}

// TestCompactionSpan: a request over the budget is compressed in an
// agcore.compaction span, a child of the run, before its chat span.
func TestCompactionSpan(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})
	var history []llm.Message
	for range 10 {
		history = append(history, llm.UserText(strings.Repeat("an old question ", 20)), llm.AssistantText(strings.Repeat("an old answer ", 20)))
	}
	history = append(history, llm.UserText("the question"))
	policy := &compact.Policy{Budget: 200, Counter: compact.Estimator{}, Strategy: compact.Truncate{KeepLast: 2, Step: 1}}
	a := newAgent(t, llmtest.New(llmtest.Text("ok")).WithInfo(priced).Verify(t), agent.Config{Name: "cp", Telemetry: r.tel, Compaction: policy})
	if _, err := a.Run(context.Background(), history, nil); err != nil {
		t.Fatal(err)
	}
	spans := r.ended()
	root, comp, chat := one(t, spans, "invoke_agent cp"), one(t, spans, "agcore.compaction"), one(t, spans, "chat gpt-test")
	childOf(t, comp, root)
	ok(t, comp)
	if comp.EndTime().After(chat.StartTime()) {
		t.Error("the compaction did not end before the model call")
	}
	wantAttrs(t, comp, map[string]string{"agcore.compaction.budget": "200", "agcore.compaction.messages_before": "21"})
	if _, ok := attrs(comp)["agcore.compaction.tokens_after"]; !ok {
		t.Errorf("compaction attributes %v", attrs(comp))
	}
}

// TestErrorType classifies errors.
func TestErrorType(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&llm.Error{Kind: llm.KindRateLimited}, "rate_limited"},
		{context.Canceled, "cancelled"},
		{context.DeadlineExceeded, "timeout"},
		{agent.ErrAbandoned, "abandoned"},
		{errors.New("x"), "_OTHER"},
		{&agent.PersistError{Err: errors.New("disk")}, "*agent.PersistError"},
	} {
		if got := otelagent.ErrorType(tc.err); got != tc.want {
			t.Errorf("ErrorType(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
