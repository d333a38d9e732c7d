package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeTB records what Verify reports instead of failing the real test.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(s string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(s, a...))
}
func (f *fakeTB) runCleanups() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func user(text string) *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText(text)}}
}

func TestStepsArePlayedInOrderByGenerateAndStream(t *testing.T) {
	t.Parallel()
	m := New(
		Text("first"),
		Reply(llm.Text{Text: "let me look"}, Call("c1", "lookup", `{"q":"x"}`)),
		Reply(llm.Thinking{Text: "hmm", Signature: "sig"}, llm.Text{Text: "third"}).WithUsage(llm.Usage{InputTokens: 3, OutputTokens: 4}),
	).Verify(t)
	ctx := context.Background()

	r1, err := m.Generate(ctx, user("a"))
	if err != nil || r1.Message.Text() != "first" || r1.FinishReason != llm.FinishStop {
		t.Fatalf("step 1 = %+v, %v", r1, err)
	}
	r2, err := llm.Collect(m.Stream(ctx, user("b")))
	if err != nil {
		t.Fatal(err)
	}
	if r2.FinishReason != llm.FinishToolUse || len(r2.Message.ToolUses()) != 1 || r2.Message.Text() != "let me look" {
		t.Fatalf("step 2 = %+v", r2)
	}
	r3, err := m.Generate(ctx, user("c"))
	if err != nil || r3.Usage.OutputTokens != 4 || r3.Message.Content[0].(llm.Thinking).Signature != "sig" {
		t.Fatalf("step 3 = %+v, %v", r3, err)
	}
	if r1.ID == r3.ID || r1.Model != "scripted" {
		t.Errorf("ids %q %q, model %q: want distinct ids and the info name", r1.ID, r3.ID, r1.Model)
	}
}

func TestStreamDeltasAreSmallAndAssembleToTheResponse(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("héllo wörld ", 10)
	m := New(Reply(llm.Text{Text: long}, Call("c1", "f", map[string]any{"text": long}))).Verify(t)
	var asm llm.Assembler
	var final *llm.Response
	deltas := 0
	for ev, err := range m.Stream(context.Background(), user("x")) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.EventComplete {
			final = ev.Response
			continue
		}
		if ev.Delta != "" {
			deltas++
			if len(ev.Delta) > DefaultChunkSize+3 || !utf8.ValidString(ev.Delta) {
				t.Fatalf("delta %q is too long or splits a character", ev.Delta)
			}
		}
		if err := asm.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	got, err := asm.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if deltas < 20 {
		t.Errorf("only %d deltas: text was not cut small", deltas)
	}
	if got.Message.Text() != long || final == nil || !reflect.DeepEqual(got.Message, final.Message) {
		t.Errorf("assembled %+v\nfinal %+v", got.Message, final)
	}
}

func TestRequestsAreRecordedAsDeepCopies(t *testing.T) {
	t.Parallel()
	m := New(Text("ok")).Verify(t)
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{Call("c1", "f", `{"a":1}`)}}}}
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	req.Messages[0].Content[0].(llm.ToolUse).Input[2] = 'X' // mutate the caller's bytes
	req.Messages = append(req.Messages, llm.UserText("later"))

	got := m.Requests()
	if len(got) != 1 || len(got[0].Messages) != 1 {
		t.Fatalf("requests = %+v", got)
	}
	if in := string(got[0].Messages[0].Content[0].(llm.ToolUse).Input); in != `{"a":1}` {
		t.Errorf("recorded input changed with the caller's: %s", in)
	}
}

func TestVerifyFailsWhenAStepIsNeverUsed(t *testing.T) {
	t.Parallel()
	ft := &fakeTB{}
	m := New(Text("one"), Text("two")).Verify(ft)
	if _, err := m.Generate(context.Background(), user("x")); err != nil {
		t.Fatal(err)
	}
	ft.runCleanups()
	if len(ft.errs) != 1 || !strings.Contains(ft.errs[0], "1 of 2 scripted steps never used") {
		t.Errorf("Verify reported %q", ft.errs)
	}
}

func TestVerifyPassesWhenEveryStepIsUsed(t *testing.T) {
	t.Parallel()
	ft := &fakeTB{}
	m := New(Text("one")).Verify(ft)
	if _, err := m.Generate(context.Background(), user("x")); err != nil {
		t.Fatal(err)
	}
	ft.runCleanups()
	if len(ft.errs) != 0 {
		t.Errorf("Verify reported %q", ft.errs)
	}
}

func TestACallWithNoStepLeftFailsAndIsReported(t *testing.T) {
	t.Parallel()
	ft := &fakeTB{}
	m := New().Verify(ft)
	_, err := m.Generate(context.Background(), user("x"))
	if !errors.Is(err, ErrNoStep) {
		t.Fatalf("err = %v, want ErrNoStep", err)
	}
	_, err = llm.Collect(m.Stream(context.Background(), user("y")))
	if !errors.Is(err, ErrNoStep) {
		t.Fatalf("stream err = %v, want ErrNoStep", err)
	}
	ft.runCleanups()
	if len(ft.errs) != 2 {
		t.Errorf("Verify reported %q, want both extra calls", ft.errs)
	}
}

func TestErrorSteps(t *testing.T) {
	t.Parallel()
	rate := &llm.Error{Kind: llm.KindRateLimited, RetryAfter: time.Second}
	tests := []struct {
		name       string
		step       Step
		stream     bool
		wantEvents int // events before the error (stream)
	}{
		{"Fail fails Generate", Fail(rate), false, 0},
		{"Fail fails a stream before any event", Fail(rate), true, 0},
		{"FailAfter fails a stream after n events", Text("hello world, hello").FailAfter(3, rate), true, 3},
		{"FailAfter fails Generate at once", Text("hello").FailAfter(3, rate), false, 0},
		{"FailAfter past the end replaces the completion", Text("hi").FailAfter(99, rate), true, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New(tt.step).Verify(t)
			if !tt.stream {
				if _, err := m.Generate(context.Background(), user("x")); !errors.Is(err, llm.ErrRateLimited) {
					t.Fatalf("err = %v", err)
				}
				return
			}
			n := 0
			var gotErr error
			for ev, err := range m.Stream(context.Background(), user("x")) {
				if err != nil {
					gotErr = err
					break
				}
				if ev.Type == llm.EventComplete {
					t.Fatal("completion sent by a failing step")
				}
				n++
			}
			if !errors.Is(gotErr, llm.ErrRateLimited) || n != tt.wantEvents {
				t.Errorf("got %d events then %v; want %d then rate limited", n, gotErr, tt.wantEvents)
			}
		})
	}
}

func TestHangWaitsForCancellation(t *testing.T) {
	t.Parallel()
	m := New(Hang(), Hang()).Verify(t)
	// cancelWhenCalled cancels once the model has taken call n.
	cancelWhenCalled := func(n int, cancel context.CancelFunc) {
		for m.Calls() < n {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	go cancelWhenCalled(1, cancel)
	if _, err := m.Generate(ctx, user("x")); !errors.Is(err, llm.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Errorf("Generate err = %v", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	go cancelWhenCalled(2, cancel2)
	if _, err := llm.Collect(m.Stream(ctx2, user("x"))); !errors.Is(err, llm.ErrCancelled) || !errors.Is(err, context.Canceled) {
		t.Errorf("Stream err = %v", err)
	}
}

func TestFuncStepSeesTheRequest(t *testing.T) {
	t.Parallel()
	m := New(Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		return &llm.Response{Message: llm.AssistantText("echo: " + req.Messages[0].Text())}, nil
	})).Verify(t)
	r, err := llm.Collect(m.Stream(context.Background(), user("ping")))
	if err != nil || r.Message.Text() != "echo: ping" {
		t.Fatalf("got %+v, %v", r, err)
	}
}

func TestBreakingTheStreamStopsIt(t *testing.T) {
	t.Parallel()
	m := New(Text(strings.Repeat("x", 100)), Text("next")).Verify(t)
	n := 0
	for range m.Stream(context.Background(), user("x")) {
		n++
		if n == 2 {
			break
		}
	}
	if m.Remaining() != 1 {
		t.Errorf("remaining = %d, want the next step untouched", m.Remaining())
	}
	if _, err := m.Generate(context.Background(), user("y")); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentCallsTakeEachStepOnce(t *testing.T) {
	t.Parallel()
	const n = 64
	steps := make([]Step, n)
	for i := range steps {
		steps[i] = Text(fmt.Sprint(i))
	}
	m := New(steps...).Verify(t)
	var wg sync.WaitGroup
	seen := make([]string, n)
	for i := range n {
		wg.Go(func() {
			var r *llm.Response
			var err error
			if i%2 == 0 {
				r, err = m.Generate(context.Background(), user("x"))
			} else {
				r, err = llm.Collect(m.Stream(context.Background(), user("x")))
			}
			if err != nil {
				t.Error(err)
				return
			}
			seen[i] = r.Message.Text()
		})
	}
	wg.Wait()
	uniq := map[string]bool{}
	for _, s := range seen {
		uniq[s] = true
	}
	if len(uniq) != n || m.Calls() != n {
		t.Errorf("%d distinct answers over %d calls, want %d", len(uniq), m.Calls(), n)
	}
}

func TestInfoIsConfigurable(t *testing.T) {
	t.Parallel()
	if got := New().Info(); got.Provider != "llmtest" || got.Name != "scripted" {
		t.Errorf("default info = %+v", got)
	}
	info := llm.ModelInfo{Provider: "p", Name: "big", ContextWindow: 1000}
	m := New(Text("x")).WithInfo(info).Verify(t)
	if m.Info() != info {
		t.Errorf("info = %+v", m.Info())
	}
	r, _ := m.Generate(context.Background(), user("x"))
	if r.Model != "big" {
		t.Errorf("response model = %q, want the info name", r.Model)
	}
}

func TestCallEncodesArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args any
		want string
	}{
		{"string is raw JSON", `{"a":1}`, `{"a":1}`},
		{"empty is an empty object", "", `{}`},
		{"nil is an empty object", nil, `{}`},
		{"a value is marshalled", map[string]int{"b": 2}, `{"b":2}`},
		{"raw message is copied", json.RawMessage(`{"c":3}`), `{"c":3}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(Call("id", "f", tt.args).Input); got != tt.want {
				t.Errorf("input = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAddAppendsStepsAndWithIDSetsTheID(t *testing.T) {
	t.Parallel()
	m := New(Text("one")).Verify(t)
	m.Add(Text("two").WithID("resp_two"))
	if _, err := m.Generate(context.Background(), user("x")); err != nil {
		t.Fatal(err)
	}
	r, err := m.Generate(context.Background(), user("y"))
	if err != nil || r.ID != "resp_two" || r.Message.Text() != "two" {
		t.Errorf("second call = %+v, %v", r, err)
	}
}
