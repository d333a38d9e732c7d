package reliability

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/internal/testkit/faultserver"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sqlite"
)

// column is one of the matrix's four ways to call a provider.
type column struct {
	format faultserver.Format
	stream bool
}

func (c column) String() string {
	if c.stream {
		return c.format.String() + " stream"
	}
	return c.format.String() + " blocking"
}

var columns = []column{
	{faultserver.OpenAI, false}, {faultserver.OpenAI, true},
	{faultserver.Anthropic, false}, {faultserver.Anthropic, true},
	{faultserver.Gemini, false}, {faultserver.Gemini, true},
}

// outcome is what a fault must lead to.
type outcome struct {
	na      string // the fault does not apply to this column, and why
	retried bool   // the fault followed by a good answer ends in success
	err     error  // the typed error of a fault that is not retried, or that persists
}

type faultCase struct {
	name string
	step func(c column) faultserver.Step
	want func(c column) outcome
}

func always(o outcome) func(column) outcome { return func(column) outcome { return o } }

func step(s faultserver.Step) func(column) faultserver.Step {
	return func(column) faultserver.Step { return s }
}

// contentReply is a final answer with enough chunks that a fault can come
// after content reached the caller.
var contentReply = faultserver.Reply{Text: strings.Repeat("All done, the answer is five. ", 12), Chunks: 8}

// faultCases are the matrix's rows. The fault hits the second model call of
// the turn, after the tool loop ran both tools.
var faultCases = []faultCase{
	{"429 + Retry-After: 2", step(faultserver.Step{Fault: faultserver.Status, Status: 429, RetryAfter: 2 * time.Second}),
		always(outcome{retried: true, err: llm.ErrRateLimited})},
	{"500", step(faultserver.Step{Fault: faultserver.Status, Status: 500}), always(outcome{retried: true, err: llm.ErrServer})},
	{"502", step(faultserver.Step{Fault: faultserver.Status, Status: 502}), always(outcome{retried: true, err: llm.ErrServer})},
	{"503", step(faultserver.Step{Fault: faultserver.Status, Status: 503}), always(outcome{retried: true, err: llm.ErrOverloaded})},
	{"529 (Anthropic overloaded)", step(faultserver.Step{Fault: faultserver.Status, Status: 529}), always(outcome{retried: true, err: llm.ErrOverloaded})},
	{"overloaded_error after HTTP 200", step(faultserver.Step{Fault: faultserver.InBandError}), always(outcome{retried: true, err: llm.ErrOverloaded})},
	{"overloaded_error after content", step(faultserver.Step{Fault: faultserver.InBandError, At: 3, Reply: contentReply}),
		func(c column) outcome { return outcome{retried: !c.stream, err: llm.ErrOverloaded} }},
	{"reset after 10 bytes", step(faultserver.Step{Fault: faultserver.Reset, Bytes: 10}), always(outcome{retried: true, err: llm.ErrNetwork})},
	{"reset after content",
		func(c column) faultserver.Step {
			s := faultserver.Step{Fault: faultserver.Reset, Bytes: 700, Reply: contentReply}
			if !c.stream {
				s.Bytes = 100
			}
			return s
		},
		func(c column) outcome { return outcome{retried: !c.stream, err: llm.ErrNetwork} }},
	{"no final event", step(faultserver.Step{Fault: faultserver.Truncate, Reply: contentReply}),
		func(c column) outcome { return outcome{retried: !c.stream, err: llm.ErrNetwork} }},
	{"malformed JSON chunk", step(faultserver.Step{Fault: faultserver.Malformed}), always(outcome{retried: true, err: llm.ErrMalformed})},
	{"event over the size limit", step(faultserver.Step{Fault: faultserver.Oversized, Bytes: 2 * testMaxEvent}),
		func(c column) outcome {
			if !c.stream {
				return outcome{na: "no events"}
			}
			return outcome{err: llm.ErrTooLarge}
		}},
	{"stall after headers", step(faultserver.Step{Fault: faultserver.Stall}), always(outcome{retried: true, err: llm.ErrIdleTimeout})},
	{"stall before headers", step(faultserver.Step{Fault: faultserver.StallHeaders}),
		func(c column) outcome {
			if !c.stream {
				// A blocking call's headers come when the whole answer is
				// ready, so only the caller's deadline bounds the wait.
				return outcome{err: context.DeadlineExceeded}
			}
			return outcome{retried: true, err: llm.ErrIdleTimeout}
		}},
	{"huge non-streamed body",
		func(c column) faultserver.Step {
			n := 2 * testMaxBody
			if c.format != faultserver.OpenAI && !c.stream {
				n = 33 << 20 // the Anthropic and Gemini adapters' fixed 32 MiB limit
			}
			return faultserver.Step{Fault: faultserver.HugeBody, Bytes: n}
		},
		always(outcome{err: llm.ErrTooLarge})},
}

// sentinels name the errors a cell may end in.
var sentinels = []struct {
	name string
	err  error
}{
	{"ErrRateLimited", llm.ErrRateLimited}, {"ErrOverloaded", llm.ErrOverloaded}, {"ErrServer", llm.ErrServer},
	{"ErrNetwork", llm.ErrNetwork}, {"ErrIdleTimeout", llm.ErrIdleTimeout}, {"ErrMalformed", llm.ErrMalformed},
	{"ErrTooLarge", llm.ErrTooLarge}, {"DeadlineExceeded", context.DeadlineExceeded}, {"ErrCancelled", llm.ErrCancelled},
	{"ErrAuth", llm.ErrAuth}, {"ErrInvalidRequest", llm.ErrInvalidRequest},
}

func errName(err error) string {
	for _, s := range sentinels {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	return fmt.Sprintf("untyped %T", err)
}

// matrixAttempts is the retry middleware's MaxAttempts in the matrix.
const matrixAttempts = 3

// TestFaultMatrix proves that every fault a provider can throw ends, through
// the whole agent, either in a successful retry (where the retry rules
// allow one) or in the right typed error, leaving the session exactly as it
// was and no goroutine behind.
func TestFaultMatrix(t *testing.T) {
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sessions.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	// A row's cells run at once, each against a fault server of its own;
	// the goroutine check follows each row. The stall rows, whose cells
	// mostly wait for idle timeouts, run at once too, under one check.
	cells := make([][]string, len(faultCases))
	var batches [][]int
	stalls := -1
	for i, fc := range faultCases {
		cells[i] = make([]string, len(columns))
		switch {
		case !strings.HasPrefix(fc.name, "stall "):
			batches = append(batches, []int{i})
		case stalls < 0:
			stalls = len(batches)
			batches = append(batches, []int{i})
		default:
			batches[stalls] = append(batches[stalls], i)
		}
	}
	for _, rows := range batches {
		func() {
			leaks := goleak.IgnoreCurrent()
			defer goleak.VerifyNone(t, leaks)
			var wg sync.WaitGroup
			for _, i := range rows {
				fc := faultCases[i]
				wg.Go(func() {
					t.Run(fc.name, func(t *testing.T) {
						var row sync.WaitGroup
						for j, col := range columns {
							row.Go(func() {
								t.Run(col.String(), func(t *testing.T) {
									cells[i][j] = runCell(t, store, fmt.Sprintf("cell-%d-%d", i, j), fc, col)
								})
							})
						}
						row.Wait()
					})
				})
			}
			wg.Wait()
		}()
	}

	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "fault (2nd model call, after both tools ran)\t")
	for _, c := range columns {
		fmt.Fprintf(tw, "%s\t", c)
	}
	fmt.Fprintln(tw)
	for i, fc := range faultCases {
		fmt.Fprintf(tw, "%s\t%s\t\n", fc.name, strings.Join(cells[i], "\t"))
	}
	tw.Flush()
	t.Logf("fault matrix (retry: %d attempts; \"retry→ok\" = fault then a good answer; the error is that of a persistent fault; session unchanged after every failure, no goroutine left after any row):\n%s",
		matrixAttempts, b.String())
}

// runCell runs one fault in one column and returns the cell's text.
func runCell(t *testing.T, store session.Store, sid string, fc faultCase, col column) string {
	want := fc.want(col)
	if want.na != "" {
		return "n/a (" + want.na + ")"
	}
	srv := faultserver.New()
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	clock := &fakeClock{}
	model := newAdapter(adapterConfig{format: col.format, base: baseURL(srv, col.format), key: "test-key", client: &http.Client{Transport: tr}})
	if !col.stream {
		model = blocking(model)
	}
	a := newAgent(pipeline(model, clock, matrixAttempts), store, nil)
	// No cell may hang the suite, whatever the code does.
	cellCtx, cancelCell := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancelCell()

	// A first, good turn, so the session has history to keep.
	srv.Reset()
	srv.Enqueue(faultserver.Step{Reply: toolCalls("seed")}, faultserver.Step{Reply: faultserver.Reply{Text: "Seeded."}})
	if _, err := runTurn(cellCtx, a, sid, "seed", col.stream); err != nil {
		t.Fatalf("seed turn: %v", err)
	}
	checkSession(t, store, sid, 1)

	faulty := fc.step(col)
	var parts []string
	if want.retried {
		srv.Reset()
		srv.Enqueue(faultserver.Step{Reply: toolCalls("r1")}, faulty, faultserver.Step{Reply: contentReply})
		resp, err := runTurn(cellCtx, a, sid, "retry", col.stream)
		if err != nil {
			t.Errorf("fault then a good answer: %v (%s), want success", err, errName(err))
			parts = append(parts, "FAIL "+errName(err))
		} else {
			s := checkSession(t, store, sid, 2)
			if got := resp.Text(); got != contentReply.Text || s.Messages[len(s.Messages)-1].Text() != got {
				t.Errorf("answer %q, stored %q", got, s.Messages[len(s.Messages)-1].Text())
			}
			parts = append(parts, fmt.Sprintf("retry→ok (%d req)", srv.Requests()-1))
		}
		if fc.name == faultCases[0].name {
			if w := clock.waits(); len(w) == 0 || w[0] != 2*time.Second {
				t.Errorf("waits before retrying %v, want the Retry-After of 2s first", w)
			}
		}
	}

	// The fault on every attempt (or once, when it is not retried).
	before := snapshot(t, store, sid)
	srv.Reset()
	srv.Enqueue(faultserver.Step{Reply: toolCalls("f1")})
	attempts := 1
	if want.retried {
		attempts = matrixAttempts
	}
	for range attempts {
		srv.Enqueue(faulty)
	}
	// Only a cell whose expected end is the caller's deadline gets a short
	// one; the others must end by themselves (an idle timeout three times,
	// a body over the limit), which takes well under a second alone but
	// several on a loaded machine under the race detector.
	deadline := 20 * time.Second
	if errors.Is(want.err, context.DeadlineExceeded) {
		deadline = 2 * time.Second
	}
	ctx, cancel := context.WithTimeout(cellCtx, deadline)
	defer cancel()
	start := time.Now()
	_, err := runTurn(ctx, a, sid, "fail", col.stream)
	took := time.Since(start)
	switch {
	case err == nil:
		t.Errorf("persistent fault: the turn succeeded, want %v", want.err)
		parts = append(parts, "FAIL ok")
	case !errors.Is(err, want.err):
		t.Errorf("persistent fault: %v (%s), want %s", err, errName(err), errName(want.err))
		parts = append(parts, "FAIL "+errName(err))
	default:
		parts = append(parts, fmt.Sprintf("%s (%d req)", errName(err), srv.Requests()-1))
	}
	if n := srv.Requests() - 1; n != attempts {
		t.Errorf("the failing call was sent %d times, want %d", n, attempts)
	}
	if after := snapshot(t, store, sid); after != before {
		t.Errorf("the failed turn changed the session:\nbefore %s\nafter  %s", before, after)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		parts[len(parts)-1] += fmt.Sprintf(" after %v", took.Round(100*time.Millisecond))
	}
	return strings.Join(parts, " | ")
}
