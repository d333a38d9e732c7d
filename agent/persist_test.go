package agent_test

import (
	"context"
	"errors"
	"github.com/agcore/agcore/catalog"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/usage"
)

func TestPersistencePriority(t *testing.T) {
	t.Parallel()
	asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text{Text: "Hello"}, call("c1", "search", `{}`)}}
	result := llm.ToolResultText("c1", "found", false)
	tests := []struct {
		name   string
		events []llm.Event
		want   []string
	}{

		{
			// A model below the agent's tool loop that is itself a pipeline
			// (it ran tools): its transcript becomes the turn's.
			name:   "the whole turn transcript first",
			events: toolLoopEvents(true),
			want:   []string{"user:hi", "assistant:Hello[calls search]", "tool_result:found", "assistant:Done."},
		},
		{
			// A pipeline that does not stream its inner steps still hands
			// over the whole turn in the transcript.
			name: "the transcript wins even when the stream showed only the final message",
			events: []llm.Event{{Type: llm.EventComplete, Response: &llm.Response{Message: llm.AssistantText("Done."),
				Transcript: []llm.Message{asst, result, llm.AssistantText("Done.")}}}},
			want: []string{"user:hi", "assistant:Hello[calls search]", "tool_result:found", "assistant:Done."},
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
			a := newAgent(t, &eventModel{events: tt.events}, agent.Config{Store: store})
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
	t.Parallel()
	store := newStore()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	// A price given once, in the model-info override, prices the turn:
	// 30 input tokens at $1000/M and 7 output at $1000/M = $0.037.
	info := llm.ModelInfo{Name: "m", Price: &llm.Price{Input: 1000, Output: 1000}}
	a := newAgent(t, &eventModel{events: toolLoopEvents(true)}, agent.Config{Store: store, NewID: ids(), Clock: fixedClock{now}, ModelInfo: &info})
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
	t.Parallel()
	store := newStore()
	a := newAgent(t, llmtest.New(llmtest.Text("ok").WithUsage(llm.Usage{InputTokens: 5})).Verify(t), agent.Config{Store: store})
	resp, err := a.Run(context.Background(), user("hi"), withSession("s"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.CostKnown || store.appendCalls()[0].CostUSD != 0 || resp.Usage.InputTokens != 5 {
		t.Errorf("cost %v known %v, usage %+v", resp.CostUSD, resp.CostKnown, resp.Usage)
	}
}

func TestPersistenceErrorsNeverBreakTheStream(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	sink := &errSink{}
	store := newStore()
	store.fail = errors.New("disk full")
	a := newAgent(t, llmtest.New(llmtest.Text("answer")).Verify(t), agent.Config{Store: store, OnError: sink.hook, Logger: logs.logger()})
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

// TestWaitAndRunReturnOnlyAfterPersistence runs in a synctest bubble:
// synctest.Wait returns once every goroutine of the run is blocked, so
// "Wait has not returned" is a fact, not a guess after a sleep.
func TestWaitAndRunReturnOnlyAfterPersistence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := newStore()
		store.gate = make(chan struct{})
		a := newAgent(t, llmtest.New(llmtest.Text("one"), llmtest.Text("two")).Verify(t), agent.Config{Store: store})

		// RunStream: the caller has the finish while the append is still pending.
		st := a.RunStream(context.Background(), user("hi"), withSession("s"))
		ups := collect(t, st)
		if ups[len(ups)-1].Kind != agent.UpdateFinish {
			t.Fatal("no finish")
		}
		waited := make(chan struct{})
		go func() { _, _ = st.Wait(); close(waited) }()
		synctest.Wait()
		select {
		case <-waited:
			t.Fatal("Wait returned before the turn was persisted")
		default:
		}
		store.gate <- struct{}{}
		<-waited
		if len(store.appendCalls()) != 1 {
			t.Fatal("Wait returned without the append")
		}

		// Run blocks until the append is done.
		ran := make(chan struct{})
		go func() { _, _ = a.Run(context.Background(), user("again"), withSession("s")); close(ran) }()
		synctest.Wait()
		select {
		case <-ran:
			t.Fatal("Run returned before the turn was persisted")
		default:
		}
		store.gate <- struct{}{}
		<-ran
		if got := len(store.session(t, "s").Messages); got != 4 {
			t.Errorf("%d stored messages after two runs, want 4", got)
		}
	})
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
	t.Parallel()
	store := newStore()
	a := newAgent(t, llmtest.New(llmtest.Text("1"), llmtest.Text("2")).Verify(t), agent.Config{Store: store,
		Providers: []agent.ContextProvider{statefulProvider(nil)}})
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
	t.Parallel()
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
				a := newAgent(t, llmtest.New(tt.step).WithChunkSize(3).Verify(t), agent.Config{Store: store, Providers: []agent.ContextProvider{p},
					Retry: middleware.RetryConfig{MaxAttempts: 1}})
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
	t.Parallel()
	s := &session.Session{ID: "mem"}
	m := llmtest.New(llmtest.Text("one"), llmtest.Text("two")).Verify(t)
	a := newAgent(t, m, agent.Config{}) // no store
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

func TestCostDefaultsToThePriceTableAndTheTrackerSumsTurns(t *testing.T) {
	t.Parallel()
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 100_000}
	m := llmtest.New(llmtest.Text("a").WithUsage(u), llmtest.Text("b").WithUsage(u), llmtest.Text("c").WithUsage(u)).
		WithInfo(gpt4o()).Verify(t)
	tracker := &usage.Tracker{}
	a := newAgent(t, m, agent.Config{Tracker: tracker})
	ctx := context.Background()
	var last *agent.Response
	for _, sid := range []string{"s1", "s1", "s2"} {
		resp, err := a.Run(ctx, user("hi"), withSession(sid))
		if err != nil {
			t.Fatal(err)
		}
		last = resp
	}
	want, _ := usage.CostOf(gpt4o(), u)
	if !last.CostKnown || last.CostUSD != want || want == 0 {
		t.Errorf("cost %v known %v, want the price table's %v", last.CostUSD, last.CostKnown, want)
	}
	if s1 := tracker.Session("s1"); s1.Turns != 2 || s1.Usage.InputTokens != 2_000_000 || !s1.CostKnown() {
		t.Errorf("tracker s1 = %+v", s1)
	}
	if tot := tracker.Total(); tot.Turns != 3 || tot.CostUSD != 3*want {
		t.Errorf("tracker total = %+v", tot)
	}
}

// gpt4o is what the default catalog knows of gpt-4o, its price included.
func gpt4o() llm.ModelInfo {
	info, _ := catalog.Default().Lookup("gpt-4o")
	return info
}
