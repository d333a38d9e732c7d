package reliability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/internal/testkit/faultserver"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sqlite"
	"github.com/agcore/agcore/tool"
)

// cancelPoint is where in a turn the caller cancels.
type cancelPoint struct {
	name string
	// script is what the server answers; the turn's first call is for
	// tools when it holds tool calls.
	script func(f faultserver.Format) []faultserver.Step
	// jitter is the most random extra wait between the trigger and cancel.
	jitter time.Duration
	// persisted: the model has answered when the cancel lands, so the turn
	// is stored whole (the agent does not drop an answered turn); nil means
	// either outcome is right (a random moment).
	persisted *bool
}

var (
	yes, no  = true, false
	streamed = faultserver.Reply{Text: strings.Repeat("tick ", 60), Chunks: 60, Interval: 2 * time.Millisecond}
)

func holdCalls() faultserver.Reply {
	return faultserver.Reply{ToolCalls: []faultserver.ToolCall{
		{ID: "c-add", Name: "add", Args: `{"a":1,"b":1}`},
		{ID: "c-hold", Name: "hold", Args: `{}`},
	}}
}

var cancelPoints = []cancelPoint{
	{name: "before the first byte", jitter: 30 * time.Millisecond, persisted: &no,
		script: func(faultserver.Format) []faultserver.Step {
			return []faultserver.Step{{Delay: 10 * time.Second, Reply: streamed}}
		}},
	{name: "mid-stream", jitter: 0, persisted: &no,
		script: func(faultserver.Format) []faultserver.Step { return []faultserver.Step{{Reply: streamed}} }},
	{name: "mid-tool", jitter: 5 * time.Millisecond, persisted: &no,
		script: func(faultserver.Format) []faultserver.Step {
			return []faultserver.Step{{Reply: holdCalls()}, {Reply: streamed}}
		}},
	{name: "during persistence", jitter: 5 * time.Millisecond, persisted: &yes,
		script: func(faultserver.Format) []faultserver.Step {
			return []faultserver.Step{{Reply: toolCalls("p")}, {Reply: faultserver.Reply{Text: "done"}}}
		}},
	{name: "at a random moment", jitter: 150 * time.Millisecond,
		script: func(faultserver.Format) []faultserver.Step {
			return []faultserver.Step{{Reply: toolCalls("r")}, {Reply: streamed}}
		}},
}

// TestCancellation cancels turns at random points and proves the run
// returns promptly, persists nothing partial (nothing at all unless the
// model had answered) and leaves no goroutine behind. It reports the p99
// time from cancel to return.
func TestCancellation(t *testing.T) {
	iters := 12
	if testing.Short() {
		iters = 4
	}
	iters = envInt("AGCORE_CANCEL_ITERS", iters)
	srv := faultserver.New()
	defer srv.Close()
	base, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()

	var all, interruptible []time.Duration
	var report strings.Builder
	for _, pt := range cancelPoints {
		var lat []time.Duration
		outcomes := map[string]int{}
		t.Run(pt.name, func(t *testing.T) {
			leaks := goleak.IgnoreCurrent()
			tr := &http.Transport{}
			defer func() {
				tr.CloseIdleConnections()
				goleak.VerifyNone(t, leaks)
			}()
			for _, f := range []faultserver.Format{faultserver.OpenAI, faultserver.Anthropic, faultserver.Gemini} {
				for i := range iters {
					sid := fmt.Sprintf("cancel-%d-%d", len(all)+len(lat), i)
					d, outcome := cancelOnce(t, srv, tr, base, sid, f, pt)
					lat = append(lat, d)
					outcomes[outcome]++
				}
			}
		})
		all = append(all, lat...)
		if pt.persisted != nil && !*pt.persisted {
			interruptible = append(interruptible, lat...)
		}
		fmt.Fprintf(&report, "  %-22s p50 %-9v p99 %-9v max %-9v %v\n", pt.name, pct(lat, 50), pct(lat, 99), pct(lat, 100), outcomes)
	}
	t.Logf("time from cancel to return, %d runs per point (OpenAI-compatible, Anthropic and Gemini, streaming; during persistence the Append waits until the cancel has landed, at a random moment it takes 20 ms more than the store needs; an answered turn is stored whatever the caller does):\n%s  all points: p99 %v; the three points before the answer: p99 %v",
		3*iters, report.String(), pct(all, 99), pct(interruptible, 99))
	// Before the answer, nothing but a network read or a tool stands
	// between the cancel and the return. (After it, the store's Append.)
	// Measured at 1-3 ms, with or without the race detector; the bound
	// leaves a hundredfold for a loaded CI machine and still fails a
	// cancel that waits for the next chunk, a tool or a timeout.
	if p := pct(interruptible, 99); p > maxCancelLatency {
		t.Errorf("p99 from cancel to return is %v before the answer, want at most %v", p, maxCancelLatency)
	}
}

// maxCancelLatency bounds the p99 time from cancel to return before the
// model has answered.
const maxCancelLatency = 250 * time.Millisecond

// cancelOnce runs one turn, cancels it at the point, and checks the
// session. It returns the time from cancel to return and the outcome.
func cancelOnce(t *testing.T, srv *faultserver.Server, tr *http.Transport, base session.Store, sid string, f faultserver.Format, pt cancelPoint) (time.Duration, string) {
	t.Helper()
	trigger := make(chan struct{})
	var once sync.Once
	fire := func() { once.Do(func() { close(trigger) }) }
	cancelled := make(chan struct{}) // closed once the cancel has landed
	store := &signalStore{Store: base, entered: fire}
	if pt.persisted != nil && *pt.persisted {
		// The cancel must land during the Append: it waits for it (a
		// bounded wait), rather than hoping the cancel comes within its
		// 20 ms on a loaded machine.
		store.landed = cancelled
	}
	model := newAdapter(adapterConfig{format: f, base: baseURL(srv, f), key: "k", client: &http.Client{Transport: tr}, idle: 10 * time.Second})
	b := pipeline(model, &fakeClock{}, 3)
	b.tools = append(testTools(), tool.MustFunc("hold", "Waits until cancelled.", func(ctx context.Context, _ struct{}) (string, error) {
		fire()
		<-ctx.Done()
		return "", ctx.Err()
	}))
	a := newAgent(b, store, nil)
	if _, err := runTurn(t.Context(), seededAgent(srv, a), sid, "seed", true); err != nil {
		t.Fatalf("seed: %v", err)
	}
	before := snapshot(t, base, sid)
	srv.Reset()
	srv.Enqueue(pt.script(f)...)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelledAt atomic.Int64
	stopped := make(chan struct{})
	go func() {
		select {
		case <-trigger:
		case <-stopped:
			return
		}
		if pt.jitter > 0 {
			time.Sleep(rand.N(pt.jitter))
		}
		cancelledAt.Store(time.Now().UnixNano())
		cancel()
		close(cancelled)
	}()
	switch pt.name {
	case "before the first byte": // once the server holds the request
		go func() {
			for srv.Requests() == 0 {
				select {
				case <-stopped:
					return
				case <-time.After(100 * time.Microsecond):
				}
			}
			fire()
		}()
	case "at a random moment":
		fire()
	}
	stopAt := rand.IntN(40) + 5 // mid-stream: the text update to cancel at
	s := a.RunStream(ctx, []llm.Message{llm.UserText("go")}, &agent.RunOptions{SessionID: sid})
	texts := 0
	for u, err := range s.Updates() {
		if err != nil {
			break
		}
		if u.Kind == agent.UpdateText {
			if texts++; texts == stopAt && pt.name == "mid-stream" {
				fire()
			}
		}
	}
	resp, err := s.Wait()
	if err == nil {
		err = resp.PersistErr()
	}
	returned := time.Now()
	close(stopped)
	at := cancelledAt.Load()
	if at == 0 {
		if pt.persisted != nil {
			t.Fatalf("the turn ended (%v) before the cancel point was reached", err)
		}
		return 0, "ended before the cancel"
	}
	d := returned.Sub(time.Unix(0, at))

	after := snapshot(t, base, sid)
	switch {
	case err == nil:
		if pt.persisted != nil && !*pt.persisted {
			t.Fatalf("the cancelled turn succeeded")
		}
		checkSession(t, base, sid, 2) // the answered turn, whole
		return d, "answered: persisted whole"
	case !errors.Is(err, context.Canceled):
		t.Fatalf("cancelled turn: %v, want a cancelled error", err)
	case pt.persisted != nil && *pt.persisted:
		t.Fatalf("the answered turn failed: %v", err)
	case after != before:
		t.Fatalf("the cancelled turn changed the session:\nbefore %s\nafter  %s", before, after)
	}
	return d, "cancelled: nothing persisted"
}

// seededAgent scripts the server for a seed turn (tools, then text).
func seededAgent(srv *faultserver.Server, a *agent.Agent) *agent.Agent {
	srv.Reset()
	srv.Enqueue(faultserver.Step{Reply: toolCalls("seed")}, faultserver.Step{Reply: faultserver.Reply{Text: "seeded"}})
	return a
}

// signalStore calls entered when an Append starts, and makes the Append
// take a little while, so a cancel lands during it: until landed is
// closed when it is set (for at most 10 s), else 20 ms.
type signalStore struct {
	session.Store
	entered func()
	landed  <-chan struct{}
	seeded  atomic.Bool
}

func (s *signalStore) Append(ctx context.Context, id string, turn session.Turn) error {
	if s.seeded.Swap(true) { // the seed turn's append is not a cancel point
		s.entered()
		if s.landed != nil {
			select {
			case <-s.landed:
			case <-time.After(10 * time.Second):
			}
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	return s.Store.Append(ctx, id, turn)
}

// pct returns the p-th percentile of ds (nearest rank).
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s) + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)].Round(10 * time.Microsecond)
}
