package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
)

// eventModel streams a fixed list of events, then err if set.
type eventModel struct {
	events []llm.Event
	err    error
}

func (m *eventModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m *eventModel) Stream(_ context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for _, ev := range m.events {
			if !yield(ev, nil) {
				return
			}
		}
		if m.err != nil {
			yield(llm.Event{}, m.err)
		}
	}
}

func (m *eventModel) Info() llm.ModelInfo { return llm.ModelInfo{Name: "events"} }

func call(id, name, input string) llm.ToolUse {
	return llm.ToolUse{ID: id, Name: name, Input: json.RawMessage(input)}
}

// toolLoopEvents is what a tool loop streams for one search call: the
// first model call asks for the tool, the result comes back, the second
// model call answers. withTranscript sets the final Response.Transcript.
func toolLoopEvents(withTranscript bool) []llm.Event {
	asst1 := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Thinking{Text: "hm"}, llm.Text{Text: "Hello"}, call("c1", "search", `{"q":"x"}`)}}
	result := llm.ToolResultText("c1", "found", false)
	asst2 := llm.AssistantText("Done.")
	final := &llm.Response{Model: "m", Message: asst2, FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 30, OutputTokens: 7}}
	if withTranscript {
		final.Transcript = []llm.Message{asst1, result, asst2}
	}
	return []llm.Event{
		{Type: llm.EventMessageStart, Response: &llm.Response{ID: "r1"}},
		{Type: llm.EventBlockStart, Index: 0, Block: llm.Thinking{}},
		{Type: llm.EventThinkingDelta, Index: 0, Delta: "hm"},
		{Type: llm.EventBlockStop, Index: 0, Block: llm.Thinking{Text: "hm"}},
		{Type: llm.EventBlockStart, Index: 1, Block: llm.Text{}},
		{Type: llm.EventTextDelta, Index: 1, Delta: "Hel"},
		{Type: llm.EventTextDelta, Index: 1, Delta: "lo"},
		{Type: llm.EventBlockStop, Index: 1, Block: llm.Text{Text: "Hello"}},
		{Type: llm.EventBlockStart, Index: 2, Block: llm.ToolUse{ID: "c1", Name: "search"}},
		{Type: llm.EventToolInputDelta, Index: 2, Delta: `{"q":`},
		{Type: llm.EventToolInputDelta, Index: 2, Delta: `"x"}`},
		{Type: llm.EventBlockStop, Index: 2, Block: call("c1", "search", `{"q":"x"}`)},
		{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}},
		{Type: llm.EventStepComplete, Response: &llm.Response{Message: asst1, FinishReason: llm.FinishToolUse}},
		{Type: llm.EventToolResult, Message: &result},
		{Type: llm.EventBlockStart, Index: 0, Block: llm.Text{}},
		{Type: llm.EventTextDelta, Index: 0, Delta: "Done."},
		{Type: llm.EventBlockStop, Index: 0, Block: llm.Text{Text: "Done."}},
		{Type: llm.EventUsage, Usage: &llm.Usage{InputTokens: 20, OutputTokens: 2}},
		{Type: llm.EventStepComplete, Response: &llm.Response{Message: asst2, FinishReason: llm.FinishStop}},
		{Type: llm.EventComplete, Response: final},
	}
}

func collect(t *testing.T, st *agent.Stream) []agent.Update {
	t.Helper()
	var ups []agent.Update
	for u, err := range st.Updates() {
		if err != nil {
			t.Fatal(err)
		}
		ups = append(ups, u)
	}
	return ups
}

func describe(u agent.Update) string {
	switch u.Kind {
	case agent.UpdateText, agent.UpdateThinking:
		return u.Kind.String() + ":" + u.Text
	case agent.UpdateToolCall:
		return "tool_call:" + u.ToolCall.ID + ":" + u.ToolCall.Name + ":" + string(u.ToolCall.Input)
	case agent.UpdateToolResult:
		return "tool_result:" + u.ToolResult.ToolCallID + ":" + u.ToolResult.Text()
	case agent.UpdateUsage:
		return "usage:" + strings.Repeat("i", u.Usage.InputTokens/10)
	case agent.UpdateFinish:
		return "finish:" + string(u.FinishReason)
	}
	return "?"
}

func TestResponseConversion(t *testing.T) {
	a := &agent.Agent{Name: "helper", Model: &eventModel{events: toolLoopEvents(true)}, NewID: ids()}
	ups := collect(t, a.RunStream(context.Background(), user("hi"), nil))
	var got []string
	for _, u := range ups {
		got = append(got, describe(u))
		if u.Agent != "helper" || u.RunID != "run-1" {
			t.Errorf("%s carries agent %q run %q, want helper run-1", describe(u), u.Agent, u.RunID)
		}
	}
	want := []string{
		"thinking:hm", "text:Hel", "text:lo",
		`tool_call:c1:search:{"q":"x"}`, // once, whole, when its arguments are complete
		"usage:i", "tool_result:c1:found", "text:Done.", "usage:ii", "finish:stop",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("updates\n got %q\nwant %q", got, want)
	}
	fin := ups[len(ups)-1]
	if fin.Usage == nil || *fin.Usage != (llm.Usage{InputTokens: 30, OutputTokens: 7}) || fin.Response.Text() != "Done." {
		t.Errorf("finish = %+v: want the turn's total usage and the response", fin)
	}
}

func TestAToolCallWithoutAStopIsFlushedWholeAtTheEnd(t *testing.T) {
	events := []llm.Event{
		{Type: llm.EventBlockStart, Index: 0, Block: llm.ToolUse{ID: "c9", Name: "calc"}},
		{Type: llm.EventToolInputDelta, Index: 0, Delta: `{"a":`},
		{Type: llm.EventToolInputDelta, Index: 0, Delta: `1}`},
		{Type: llm.EventComplete, Response: &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{call("c9", "calc", `{"a":1}`)}}, FinishReason: llm.FinishToolUse}},
	}
	a := &agent.Agent{Model: &eventModel{events: events}}
	var got []string
	for _, u := range collect(t, a.RunStream(context.Background(), user("hi"), nil)) {
		got = append(got, describe(u))
	}
	if want := []string{`tool_call:c9:calc:{"a":1}`, "finish:tool_use"}; !reflect.DeepEqual(got, want) {
		t.Errorf("updates %q, want %q", got, want)
	}
}

// gatedModel streams one text delta, then waits for release before it
// completes.
type gatedModel struct{ release chan struct{} }

func (m *gatedModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m *gatedModel) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if !yield(llm.Event{Type: llm.EventBlockStart, Block: llm.Text{}}, nil) ||
			!yield(llm.Event{Type: llm.EventTextDelta, Delta: "first"}, nil) {
			return
		}
		select {
		case <-m.release:
		case <-ctx.Done():
			yield(llm.Event{}, llm.Cancelled("gated", ctx.Err()))
			return
		}
		yield(llm.Event{Type: llm.EventComplete, Response: &llm.Response{Message: llm.AssistantText("first")}}, nil)
	}
}

func (m *gatedModel) Info() llm.ModelInfo { return llm.ModelInfo{} }

func TestTheCallerGetsEachUpdateAsItArrives(t *testing.T) {
	m := &gatedModel{release: make(chan struct{})}
	a := &agent.Agent{Model: m}
	timer := time.AfterFunc(5*time.Second, func() { close(m.release) }) // unblocks a buffering agent, late
	defer timer.Stop()
	start := time.Now()
	for u, err := range a.RunStream(context.Background(), user("hi"), nil).Updates() {
		if err != nil {
			t.Fatal(err)
		}
		if u.Kind == agent.UpdateText {
			if time.Since(start) > 2*time.Second {
				t.Fatal("the first delta arrived only after the model finished")
			}
			if timer.Stop() {
				close(m.release)
			}
		}
	}
}

func TestPersistencePriority(t *testing.T) {
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text{Text: "Hello"}, call("c1", "search", `{}`)}}
	result := llm.ToolResultText("c1", "found", false)
	tests := []struct {
		name   string
		events []llm.Event
		want   []string
	}{
		{
			name:   "the whole turn transcript first",
			events: toolLoopEvents(true),
			want:   []string{"user:hi", "assistant:Hello[calls search]", "tool_result:found", "assistant:Done."},
		},
		{
			name:   "else the assistant message with tools and each tool result",
			events: toolLoopEvents(false),
			want:   []string{"user:hi", "assistant:Hello[calls search]", "tool_result:found", "assistant:Done."},
		},
		{
			name: "tool results without step completions follow the final message",
			events: []llm.Event{
				{Type: llm.EventToolResult, Message: &result},
				{Type: llm.EventComplete, Response: &llm.Response{Message: asst}},
			},
			want: []string{"user:hi", "assistant:Hello[calls search]", "tool_result:found"},
		},
		{
			name:   "else the plain assistant message",
			events: []llm.Event{{Type: llm.EventComplete, Response: &llm.Response{Message: llm.AssistantText("plain")}}},
			want:   []string{"user:hi", "assistant:plain"},
		},
		{
			name: "user messages inside a transcript are not persisted twice",
			events: []llm.Event{{Type: llm.EventComplete, Response: &llm.Response{Message: llm.AssistantText("a"),
				Transcript: []llm.Message{llm.UserText("hi"), llm.AssistantText("a")}}}},
			want: []string{"user:hi", "assistant:a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore()
			a := &agent.Agent{Model: &eventModel{events: tt.events}, Store: store}
			resp, err := a.Run(context.Background(), user("hi"), withSession("s"))
			if err != nil {
				t.Fatal(err)
			}
			if got := texts(store.session(t, "s").Messages); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("stored\n got %q\nwant %q", got, tt.want)
			}
			if got := texts(resp.Messages); !reflect.DeepEqual(got, tt.want[1:]) {
				t.Errorf("Response.Messages = %q", got)
			}
		})
	}
}

func TestATurnIsOneAtomicAppendKeyedByTheRunID(t *testing.T) {
	store := newStore()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	a := &agent.Agent{Model: &eventModel{events: toolLoopEvents(true)}, Store: store, NewID: ids(), Clock: fixedClock{now},
		Cost: func(model string, u llm.Usage) (float64, bool) { return float64(u.Total()) / 1000, model == "m" }}
	resp, err := a.Run(context.Background(), []llm.Message{llm.SystemText("dropped"), llm.UserText("hi")}, withSession("s"))
	if err != nil {
		t.Fatal(err)
	}
	calls := store.appendCalls()
	if len(calls) != 1 {
		t.Fatalf("%d appends, want exactly one per turn", len(calls))
	}
	turn := calls[0]
	if turn.ID != "run-1" || resp.RunID != "run-1" {
		t.Errorf("turn id %q, response run id %q, want run-1", turn.ID, resp.RunID)
	}
	want := []string{"user:hi", "assistant:Hello[calls search]", "tool_result:found", "assistant:Done."}
	if got := texts(turn.Messages); !reflect.DeepEqual(got, want) {
		t.Errorf("turn messages %q, want %q (caller input without system, then the transcript)", got, want)
	}
	if turn.Usage != resp.Usage || turn.Usage.InputTokens != 30 || turn.CostUSD != 0.037 || !resp.CostKnown || !turn.Time.Equal(now) {
		t.Errorf("turn usage %+v cost %v time %v; response cost %v known %v", turn.Usage, turn.CostUSD, turn.Time, resp.CostUSD, resp.CostKnown)
	}
	if turn.Hashes == nil || turn.Prefix.Requests != 1 {
		t.Errorf("turn carries no request-hash statistic: %+v", turn.Prefix)
	}
}

func TestUnknownCostIsUnknownNotZero(t *testing.T) {
	store := newStore()
	a := &agent.Agent{Model: llmtest.New(llmtest.Text("ok").WithUsage(llm.Usage{InputTokens: 5})).Verify(t), Store: store,
		Cost: func(string, llm.Usage) (float64, bool) { return 0, false }}
	resp, err := a.Run(context.Background(), user("hi"), withSession("s"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.CostKnown || store.appendCalls()[0].CostUSD != 0 || resp.Usage.InputTokens != 5 {
		t.Errorf("cost %v known %v, usage %+v", resp.CostUSD, resp.CostKnown, resp.Usage)
	}
}

func TestPersistenceErrorsNeverBreakTheStream(t *testing.T) {
	var logs logBuffer
	sink := &errSink{}
	store := newStore()
	store.fail = errors.New("disk full")
	a := &agent.Agent{Model: llmtest.New(llmtest.Text("answer")).Verify(t), Store: store, OnError: sink.hook, Logger: logs.logger()}
	st := a.RunStream(context.Background(), user("hi"), withSession("s"))
	ups := collect(t, st) // fails the test on any stream error
	if last := ups[len(ups)-1]; last.Kind != agent.UpdateFinish || last.Response.Text() != "answer" {
		t.Fatalf("last update %+v, want the finish", last)
	}
	resp, err := st.Wait()
	if err != nil {
		t.Fatalf("Wait err = %v: persistence must not fail the run", err)
	}
	var pe *agent.PersistError
	if perr := resp.PersistErr(); !errors.As(perr, &pe) || !strings.Contains(perr.Error(), "disk full") || pe.SessionID != "s" || pe.RunID != resp.RunID {
		t.Errorf("PersistErr = %v", perr)
	}
	if errs := sink.get(); len(errs) != 1 || !errors.As(errs[0], &pe) {
		t.Errorf("OnError got %v", errs)
	}
	if !strings.Contains(logs.String(), "disk full") {
		t.Errorf("log = %q", logs.String())
	}
}

func TestWaitAndRunReturnOnlyAfterPersistence(t *testing.T) {
	store := newStore()
	store.gate = make(chan struct{})
	a := &agent.Agent{Model: llmtest.New(llmtest.Text("one"), llmtest.Text("two")).Verify(t), Store: store}

	// RunStream: the caller has the finish while the append is still pending.
	st := a.RunStream(context.Background(), user("hi"), withSession("s"))
	ups := collect(t, st)
	if ups[len(ups)-1].Kind != agent.UpdateFinish {
		t.Fatal("no finish")
	}
	waited := make(chan struct{})
	go func() { _, _ = st.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned before the turn was persisted")
	case <-time.After(20 * time.Millisecond):
	}
	store.gate <- struct{}{}
	<-waited
	if len(store.appendCalls()) != 1 {
		t.Fatal("Wait returned without the append")
	}

	// Run blocks until the append is done.
	ran := make(chan struct{})
	go func() { _, _ = a.Run(context.Background(), user("again"), withSession("s")); close(ran) }()
	select {
	case <-ran:
		t.Fatal("Run returned before the turn was persisted")
	case <-time.After(20 * time.Millisecond):
	}
	store.gate <- struct{}{}
	<-ran
	if got := len(store.session(t, "s").Messages); got != 4 {
		t.Errorf("%d stored messages after two runs, want 4", got)
	}
}

func TestWaitRunsAStreamNobodyRanged(t *testing.T) {
	a := &agent.Agent{Model: llmtest.New(llmtest.Text("ok")).Verify(t)}
	st := a.RunStream(context.Background(), user("hi"), nil)
	resp, err := st.Wait()
	if err != nil || resp.Text() != "ok" {
		t.Fatalf("Wait = %v, %v", resp, err)
	}
	for _, err := range st.Updates() {
		if !errors.Is(err, agent.ErrStreamUsed) {
			t.Errorf("second range err = %v, want ErrStreamUsed", err)
		}
	}
}

// statefulProvider changes the session's state bag while the run is in
// progress.
func statefulProvider(log *callLog) *provider {
	return &provider{name: "state", log: log, invoking: func(inv *agent.Invocation) {
		n, _, _ := session.GetState[int](inv.Session, "count")
		_ = session.SetState(inv.Session, "count", n+1)
	}}
}

func TestProviderStateChangesArePersistedWithTheTurn(t *testing.T) {
	store := newStore()
	a := &agent.Agent{Model: llmtest.New(llmtest.Text("1"), llmtest.Text("2")).Verify(t), Store: store,
		Providers: []agent.ContextProvider{statefulProvider(nil)}}
	for range 2 {
		if _, err := a.Run(context.Background(), user("hi"), withSession("s")); err != nil {
			t.Fatal(err)
		}
	}
	if n, _, _ := session.GetState[int](store.session(t, "s"), "count"); n != 2 {
		t.Errorf("count = %d, want 2", n)
	}
	if st := store.appendCalls()[1].State; string(st["count"]) != "2" || len(st) != 1 {
		t.Errorf("second turn's state delta = %s", st)
	}
}

func TestAFailedCancelledOrAbandonedRunPersistsNothing(t *testing.T) {
	rate := &llm.Error{Kind: llm.KindRateLimited}
	tests := []struct {
		name    string
		step    llmtest.Step
		cancel  bool // cancel the context while the model call hangs
		breakAt int  // stop ranging after this many updates (0: range to the end)
		wantErr error
	}{
		{name: "the model fails before streaming", step: llmtest.Fail(rate), wantErr: llm.ErrRateLimited},
		{name: "the model fails mid-stream", step: llmtest.Text("a long answer that is cut").FailAfter(4, rate), wantErr: llm.ErrRateLimited},
		{name: "the context is cancelled", step: llmtest.Hang(), cancel: true, wantErr: context.Canceled},
		{name: "the caller stops ranging", step: llmtest.Text("a long answer the caller abandons"), breakAt: 2, wantErr: agent.ErrAbandoned},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore()
			prior := &session.Session{ID: "s", Messages: []llm.Message{llm.UserText("old"), llm.AssistantText("older")}, Hashes: []uint64{7}, Prefix: session.PrefixStats{Requests: 1, LastDivergence: -1}}
			_ = session.SetState(prior, "count", 5)
			store.sessions["s"] = prior.Clone()
			mem := prior.Clone() // an in-memory session, run the same way
			log := &callLog{}
			p := statefulProvider(log)

			for _, opts := range []*agent.RunOptions{withSession("s"), {Session: mem}} {
				ctx, cancel := context.WithCancel(context.Background())
				if tt.cancel {
					time.AfterFunc(10*time.Millisecond, cancel)
				}
				a := &agent.Agent{Model: llmtest.New(tt.step).WithChunkSize(3).Verify(t), Store: store, Providers: []agent.ContextProvider{p}}
				st := a.RunStream(ctx, user("new"), opts)
				n := 0
				var streamErr error
				for u, err := range st.Updates() {
					if err != nil {
						streamErr = err
						break
					}
					if u.Kind == agent.UpdateFinish {
						t.Fatal("a failing run finished")
					}
					if n++; n == tt.breakAt {
						break
					}
				}
				_, err := st.Wait()
				cancel()
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Wait err = %v, want %v", err, tt.wantErr)
				}
				if tt.breakAt == 0 && !errors.Is(streamErr, tt.wantErr) {
					t.Errorf("stream err = %v, want %v", streamErr, tt.wantErr)
				}
				if out := p.lastOutcome(t); !errors.Is(out.Err, tt.wantErr) || out.Response != nil || out.Request == nil {
					t.Errorf("Invoked got %+v, want the request and the error", out)
				}
			}
			if calls := store.appendCalls(); len(calls) != 0 {
				t.Errorf("%d appends after a failed run", len(calls))
			}
			if got := store.session(t, "s"); !reflect.DeepEqual(got, prior) {
				t.Errorf("stored session changed:\n got %+v\nwant %+v", got, prior)
			}
			if !reflect.DeepEqual(mem, prior) {
				t.Errorf("in-memory session changed:\n got %+v\nwant %+v", mem, prior)
			}
		})
	}
}

func TestAnInMemorySessionIsUpdatedInPlaceOnSuccess(t *testing.T) {
	s := &session.Session{ID: "mem"}
	m := llmtest.New(llmtest.Text("one"), llmtest.Text("two")).Verify(t)
	a := &agent.Agent{Model: m} // no store
	for _, q := range []string{"a", "b"} {
		if _, err := a.Run(context.Background(), user(q), &agent.RunOptions{Session: s}); err != nil {
			t.Fatal(err)
		}
	}
	if got := texts(s.Messages); !reflect.DeepEqual(got, []string{"user:a", "assistant:one", "user:b", "assistant:two"}) {
		t.Errorf("session messages %q", got)
	}
	if got := texts(m.Requests()[1].Messages); len(got) != 3 || got[0] != "user:a" {
		t.Errorf("second request %q, want the history first", got)
	}
	if s.Turns != 2 || s.Prefix.Requests != 2 || s.Prefix.PrefixStable != 1 {
		t.Errorf("turns %d prefix %+v", s.Turns, s.Prefix)
	}
}

// blockingStep answers "first" once release is closed, after signalling
// started.
func blockingStep(started, release chan struct{}) llmtest.Step {
	return llmtest.Func(func(ctx context.Context, _ *llm.Request) (*llm.Response, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &llm.Response{Message: llm.AssistantText("first")}, nil
	})
}

func TestConcurrentRunsOnOneSessionWait(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	m := llmtest.New(blockingStep(started, release), llmtest.Text("second")).Verify(t)
	store := newStore()
	a := &agent.Agent{Model: m, Store: store}
	ctx := context.Background()

	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := a.Run(ctx, user("q1"), withSession("s")); err != nil {
			t.Error(err)
		}
	})
	<-started
	second := make(chan error, 1)
	go func() { _, err := a.Run(ctx, user("q2"), withSession("s")); second <- err }()

	// A run on another session is not held up.
	other := &agent.Agent{Model: llmtest.New(llmtest.Text("other")).Verify(t), Store: store}
	if _, err := other.Run(ctx, user("x"), withSession("t")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if m.Calls() != 1 {
		t.Fatalf("the second run reached the model while the first was in progress")
	}
	close(release)
	wg.Wait()
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	// The second run saw the first's whole turn: they did not interleave.
	if got := texts(m.Requests()[1].Messages); !reflect.DeepEqual(got, []string{"user:q1", "assistant:first", "user:q2"}) {
		t.Errorf("second request %q", got)
	}
	if got := texts(store.session(t, "s").Messages); !reflect.DeepEqual(got, []string{"user:q1", "assistant:first", "user:q2", "assistant:second"}) {
		t.Errorf("stored %q", got)
	}
}

func TestARunWaitingForItsSessionCanBeCancelled(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	m := llmtest.New(blockingStep(started, release)).Verify(t)
	store := newStore()
	a := &agent.Agent{Model: m, Store: store}
	first := make(chan error, 1)
	go func() { _, err := a.Run(context.Background(), user("q1"), withSession("s")); first <- err }()
	<-started

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := a.Run(ctx, user("q2"), withSession("s"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting run err = %v, want its context's error", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if got := len(store.appendCalls()); got != 1 {
		t.Errorf("%d appends, want only the first run's", got)
	}
}

// fixedClock is a middleware.Clock stopped at one instant.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func (c fixedClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }
