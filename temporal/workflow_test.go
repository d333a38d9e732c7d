package agtemporal_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"

	agtemporal "github.com/agcore/agcore/temporal"
)

type echoIn struct {
	Text  string `json:"text"`
	Delay int    `json:"delay_ms,omitempty"`
}

// tools returns an echo tool (sleeping delay_ms first), a write tool that
// needs approval, and a counter of their executions.
func tools(t *testing.T) ([]tool.Tool, *sync.Map, *atomic.Int32) {
	t.Helper()
	ran := &sync.Map{}
	var running, most atomic.Int32
	echo := tool.MustFunc("echo", "Echo the text.", func(ctx context.Context, in echoIn) (string, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(time.Duration(in.Delay) * time.Millisecond)
		v, _ := ran.LoadOrStore(in.Text, new(atomic.Int32))
		v.(*atomic.Int32).Add(1)
		return "echo: " + in.Text, nil
	})
	write := tool.MustFunc("write", "Write the text.", func(ctx context.Context, in echoIn) (string, error) {
		v, _ := ran.LoadOrStore("write:"+in.Text, new(atomic.Int32))
		v.(*atomic.Int32).Add(1)
		return "written", nil
	}, tool.WithApproval())
	return []tool.Tool{echo, write}, ran, &most
}

func runs(m *sync.Map, key string) int32 {
	v, ok := m.Load(key)
	if !ok {
		return 0
	}
	return v.(*atomic.Int32).Load()
}

type harness struct {
	env   *testsuite.TestWorkflowEnvironment
	model *llmtest.Model
	store *memstore.Store
	ran   *sync.Map
	most  *atomic.Int32
	live  *recorder
	// rejected holds the updates the validator rejected, by call id.
	rejected sync.Map
}

func newHarness(t *testing.T, steps ...llmtest.Step) *harness {
	t.Helper()
	return newHarnessWith(t, nil, steps...)
}

// newHarnessWith lets mod change the worker's options before they are
// registered.
func newHarnessWith(t *testing.T, mod func(*agtemporal.Options), steps ...llmtest.Step) *harness {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	h := &harness{env: s.NewTestWorkflowEnvironment(), model: llmtest.New(steps...).Verify(t), store: memstore.New(), live: &recorder{}}
	var ts []tool.Tool
	ts, h.ran, h.most = tools(t)
	opts := agtemporal.Options{
		Models: map[string]llm.Model{"m": h.model}, DefaultModel: "m",
		Tools: ts, Store: h.store, Live: h.live,
	}
	if mod != nil {
		mod(&opts)
	}
	agtemporal.Register(h.env, opts)
	return h
}

func input(text string) agtemporal.TurnInput {
	return agtemporal.TurnInput{SessionID: "s1", TurnID: "t1", Messages: []llm.Message{llm.UserText(text)}}
}

func (h *harness) run(t *testing.T, in agtemporal.TurnInput) (*agtemporal.TurnResult, error) {
	t.Helper()
	h.env.ExecuteWorkflow(agtemporal.TurnWorkflowName, in)
	if !h.env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	if err := h.env.GetWorkflowError(); err != nil {
		return nil, err
	}
	var res agtemporal.TurnResult
	if err := h.env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return &res, nil
}

// recorder is a Live that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []agtemporal.LiveEvent
}

func (r *recorder) Publish(_ context.Context, _ string, ev agtemporal.LiveEvent) error {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	return nil
}

func TestToolLoopPersistsTheTurnOnce(t *testing.T) {
	h := newHarness(t,
		llmtest.Reply(llmtest.Call("c1", "echo", `{"text":"a"}`)),
		llmtest.Text("all done"))
	res, err := h.run(t, input("go"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "all done" || res.Steps != 2 || !res.Stored || len(res.Transcript) != 3 {
		t.Fatalf("result %+v", res)
	}
	if got := res.Transcript[1].Text(); got != "echo: a" {
		t.Fatalf("tool result %q", got)
	}
	if n := runs(h.ran, "a"); n != 1 {
		t.Fatalf("echo ran %d times", n)
	}
	sess, err := h.store.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Turns != 1 || len(sess.Messages) != 4 {
		t.Fatalf("session holds %d turns, %d messages", sess.Turns, len(sess.Messages))
	}
	req := h.model.Requests()[1]
	if last := req.Messages[len(req.Messages)-1]; last.Role != llm.RoleTool || last.ToolCallID != "c1" {
		t.Fatalf("second request ends with %+v", last)
	}
	var tr agtemporal.Transcript
	for _, ev := range h.live.events {
		tr.Add(ev)
	}
	if tr.Text() != "all done" {
		t.Fatalf("live text %q", tr.Text())
	}
}

func TestParallelToolsComeBackInCallOrder(t *testing.T) {
	h := newHarness(t,
		llmtest.Reply(
			llmtest.Call("c1", "echo", `{"text":"one","delay_ms":60}`),
			llmtest.Call("c2", "echo", `{"text":"two","delay_ms":30}`),
			llmtest.Call("c3", "echo", `{"text":"three"}`)),
		llmtest.Text("ok"))
	res, err := h.run(t, input("go"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"c1", "c2", "c3"}
	for i, id := range want {
		m := res.Transcript[1+i]
		if m.ToolCallID != id {
			t.Fatalf("result %d answers %s, want %s", i, m.ToolCallID, id)
		}
	}
	if h.most.Load() < 2 {
		t.Fatalf("the calls ran one at a time (at most %d at once)", h.most.Load())
	}
}

func approvalTurn(t *testing.T, decide func(h *harness)) (*harness, *agtemporal.TurnResult) {
	t.Helper()
	h := newHarness(t,
		llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`), llmtest.Call("e1", "echo", `{"text":"y"}`)),
		llmtest.Text("finished"))
	h.env.RegisterDelayedCallback(func() { decide(h) }, time.Minute)
	in := input("write it")
	in.ApprovalTimeout = 48 * time.Hour
	res, err := h.run(t, in)
	if err != nil {
		t.Fatal(err)
	}
	return h, res
}

func pending(t *testing.T, h *harness) []agtemporal.PendingApproval {
	t.Helper()
	v, err := h.env.QueryWorkflow(agtemporal.PendingQuery)
	if err != nil {
		t.Fatal(err)
	}
	var p []agtemporal.PendingApproval
	if err := v.Get(&p); err != nil {
		t.Fatal(err)
	}
	return p
}

// decide sends d; the callbacks run as the workflow proceeds, so what
// became of the update is read from rejected after the workflow ends.
func decide(t *testing.T, h *harness, d agtemporal.Decision) {
	t.Helper()
	h.env.UpdateWorkflow(agtemporal.DecideUpdate, "u-"+d.CallID, &testsuite.TestUpdateCallback{
		OnAccept: func() {}, OnReject: func(err error) { h.rejected.Store(d.CallID, err) }, OnComplete: func(any, error) {},
	}, d)
}

func TestApprovalGranted(t *testing.T) {
	h, res := approvalTurn(t, func(h *harness) {
		p := pending(t, h)
		if len(p) != 1 || p[0].CallID != "w1" || p[0].Tool != "write" {
			t.Errorf("pending %+v", p)
		}
		decide(t, h, agtemporal.Decision{CallID: "nope", Approve: true})
		decide(t, h, agtemporal.Decision{CallID: "w1", Approve: true})
	})
	if err, _ := h.rejected.Load("nope"); !errors.Is(errOf(err), agtemporal.ErrUnknownCall) && !strings.Contains(errString(errOf(err)), "no pending approval") {
		t.Errorf("an unknown call id was not rejected: %v", err)
	}
	if err, ok := h.rejected.Load("w1"); ok {
		t.Errorf("decision rejected: %v", err)
	}
	if res.Transcript[1].IsError || res.Transcript[1].Text() != "written" || runs(h.ran, "write:x") != 1 {
		t.Fatalf("approved call: %+v", res.Transcript[1])
	}
	if res.Transcript[2].Text() != "echo: y" {
		t.Fatalf("the other call: %+v", res.Transcript[2])
	}
}

func TestApprovalDenied(t *testing.T) {
	h, res := approvalTurn(t, func(h *harness) {
		decide(t, h, agtemporal.Decision{CallID: "w1", Reason: "not today"})
	})
	if m := res.Transcript[1]; !m.IsError || !strings.Contains(m.Text(), "not today") || runs(h.ran, "write:x") != 0 {
		t.Fatalf("denied call: %+v (ran %d)", m, runs(h.ran, "write:x"))
	}
	if req := h.model.Requests()[1]; !strings.Contains(req.Messages[len(req.Messages)-2].Text(), "was denied by the approver") {
		t.Fatal("the model did not read the denial")
	}
}

func TestApprovalTimesOut(t *testing.T) {
	start := time.Time{}
	h, res := approvalTurn(t, func(h *harness) { start = h.env.Now() })
	if m := res.Transcript[1]; !m.IsError || !strings.Contains(m.Text(), "no decision within 48h") || runs(h.ran, "write:x") != 0 {
		t.Fatalf("timed out call: %+v", m)
	}
	if start.IsZero() {
		t.Fatal("the turn did not wait")
	}
}

func errOf(v any) error {
	err, _ := v.(error)
	return err
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestRateLimitSetsTheNextRetryDelay(t *testing.T) {
	h := newHarness(t,
		llmtest.Fail(&llm.Error{Kind: llm.KindRateLimited, StatusCode: 429, Provider: "fake", RetryAfter: 42 * time.Second}),
		llmtest.Text("after the wait"))
	var starts []time.Time
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if info.ActivityType.Name == "agcore.Model" {
			starts = append(starts, h.env.Now())
		}
	})
	res, err := h.run(t, input("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "after the wait" || len(starts) != 2 {
		t.Fatalf("result %q after %d attempts", res.Text, len(starts))
	}
	if d := starts[1].Sub(starts[0]); d < 42*time.Second || d > 50*time.Second {
		t.Fatalf("retried after %s, want the Retry-After of 42s", d)
	}
	var sawReset bool
	for _, ev := range h.live.events {
		sawReset = sawReset || (ev.Kind == agtemporal.LiveReset && ev.Attempt == 2)
	}
	if !sawReset {
		t.Fatal("the retried call published no reset")
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	h := newHarness(t, llmtest.Fail(&llm.Error{Kind: llm.KindInvalidRequest, StatusCode: 400, Provider: "fake", Message: "bad field"}))
	_, err := h.run(t, input("hi"))
	var ae *temporal.ApplicationError
	if !errors.As(err, &ae) || !ae.NonRetryable() || !strings.HasPrefix(ae.Type(), agtemporal.ErrTypeModel) {
		t.Fatalf("error %v, want a non-retryable model error", err)
	}
	if h.model.Calls() != 1 {
		t.Fatalf("%d model calls", h.model.Calls())
	}
}

func TestMidStreamFailureIsRetriedAndItsTextDropped(t *testing.T) {
	h := newHarness(t,
		llmtest.Text("partial text that breaks").FailAfter(5, &llm.Error{Kind: llm.KindNetwork, Provider: "fake", Message: "reset"}),
		llmtest.Text("clean answer"))
	res, err := h.run(t, input("hi"))
	if err != nil {
		t.Fatal(err)
	}
	var tr agtemporal.Transcript
	resets := 0
	for _, ev := range h.live.events {
		if tr.Add(ev) {
			resets++
		}
	}
	if res.Text != "clean answer" || tr.Text() != "clean answer" || resets != 1 {
		t.Fatalf("result %q, live %q, %d resets", res.Text, tr.Text(), resets)
	}
}

func TestSessionWorkflowContinuesAsNew(t *testing.T) {
	h := newHarness(t, llmtest.Text("first answer"))
	var got agtemporal.TurnResult
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(agtemporal.TurnUpdate, "turn-1", &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { t.Errorf("turn rejected: %v", err) },
			OnComplete: func(v any, err error) {
				if err != nil {
					t.Errorf("turn failed: %v", err)
					return
				}
				got = *v.(*agtemporal.TurnResult)
			},
		}, agtemporal.TurnRequest{TurnID: "t1", Messages: []llm.Message{llm.UserText("hi")}})
	}, time.Second)
	h.env.ExecuteWorkflow(agtemporal.SessionWorkflowName, agtemporal.SessionInput{
		Turn: agtemporal.TurnInput{SessionID: "s1"}, TurnsPerRun: 1,
	})
	var can *workflow.ContinueAsNewError
	if err := h.env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("workflow ended with %v, want continue-as-new", err)
	}
	if got.Text != "first answer" || !got.Stored {
		t.Fatalf("turn result %+v", got)
	}
	sess, err := h.store.Load(context.Background(), "s1")
	if err != nil || sess.Turns != 1 {
		t.Fatalf("session: %v, %+v", err, sess)
	}
}

func TestAReusedCallIDIsDecidedAnew(t *testing.T) {
	h := newHarness(t,
		llmtest.Reply(llmtest.Call("w1", "write", `{"text":"first"}`)),
		llmtest.Reply(llmtest.Call("w1", "write", `{"text":"second"}`)),
		llmtest.Text("done"))
	h.env.RegisterDelayedCallback(func() { decide(t, h, agtemporal.Decision{CallID: "w1", Approve: true}) }, time.Minute)
	in := input("write twice")
	in.ApprovalTimeout = time.Hour
	res, err := h.run(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Transcript[1].IsError || runs(h.ran, "write:first") != 1 {
		t.Fatalf("first call: %+v", res.Transcript[1])
	}
	if m := res.Transcript[3]; !m.IsError || runs(h.ran, "write:second") != 0 {
		t.Fatalf("the second call with the same id was not asked about again: %+v", m)
	}
}
