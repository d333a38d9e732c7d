package main

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestAnnouncerStopsWithTheTurn: once the turn has ended (its context
// cancelled), the announcer returns at once, even from a query that
// would block: no time passes (synctest's clock) between the end and its
// return.
func TestAnnouncerStopsWithTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		var reported []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			announce(ctx, time.Second, func(ctx context.Context) ([]agtemporal.PendingApproval, error) {
				if len(reported) == 0 {
					return []agtemporal.PendingApproval{{CallID: "c1"}, {CallID: "c1"}}, nil
				}
				<-ctx.Done() // a query the server does not answer
				return nil, ctx.Err()
			}, func(a agtemporal.PendingApproval) { reported = append(reported, a.CallID) })
		}()
		time.Sleep(2500 * time.Millisecond) // the announcer is in its second query
		end := time.Now()
		cancel()
		<-done
		if waited := time.Since(end); waited != 0 {
			t.Fatalf("the announcer returned %s after the turn ended", waited)
		}
		if strings.Join(reported, ",") != "c1" {
			t.Fatalf("reported %v, want c1 once", reported)
		}
	})
}

// TestLivePrinterSeparatesModelCalls: each model call's text starts on a
// line of its own, as agcore run shows it; a retried call's void text is
// flagged.
func TestLivePrinterSeparatesModelCalls(t *testing.T) {
	var out, errw strings.Builder
	p := &livePrinter{out: &out, errw: &errw}
	for _, ev := range []agtemporal.LiveEvent{
		{Kind: agtemporal.LiveText, Step: 1, Attempt: 1, Text: "Twelve is "},
		{Kind: agtemporal.LiveText, Step: 1, Attempt: 1, Text: "twelve."},
		{Kind: agtemporal.LiveToolCall, Step: 1, Attempt: 1, Text: "read_file", CallID: "c1"},
		{Kind: agtemporal.LiveText, Step: 2, Attempt: 1, Text: "Both read"},
		{Kind: agtemporal.LiveText, Step: 3, Attempt: 1, Text: "Half"},
		{Kind: agtemporal.LiveReset, Step: 3, Attempt: 2},
		{Kind: agtemporal.LiveText, Step: 3, Attempt: 2, Text: "Whole."},
	} {
		p.event(ev)
	}
	if want := "Twelve is twelve.\nBoth read\nHalf\nWhole."; out.String() != want {
		t.Fatalf("stdout %q, want %q", out.String(), want)
	}
	if e := errw.String(); !strings.Contains(e, "→ read_file (c1)") || !strings.Contains(e, "retried") {
		t.Fatalf("stderr %q", e)
	}
}

func TestApproveCommandRunsAsPrinted(t *testing.T) {
	cmd := newRunCmd()
	var c common
	c.address, c.namespace, c.queue = "temporal.internal:7233", "team", "agents"
	t.Setenv(viaAgcoreEnv, "1")
	got := approveCommand(cmd, &c, "my session", "t1")
	want := "agcore approve --temporal temporal.internal:7233 --namespace team --task-queue agents --session 'my session' --turn t1"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	t.Setenv(viaAgcoreEnv, "")
	c.namespace, c.queue = "default", agtemporal.DefaultTaskQueue
	if got := approveCommand(cmd, &c, "s", "t"); got != "agcore-temporal approve --temporal temporal.internal:7233 --session s --turn t" {
		t.Fatalf("got %s", got)
	}
	if got := shellQuote("it's"); got != `'it'\''s'` {
		t.Fatalf("quoted %s", got)
	}
}

// TestRunEndsWithTheTurn: awaitTurn returns the moment the turn's result
// is in, though the announcer sleeps between queries and a query may
// block, and the live output is read to its end first.
func TestRunEndsWithTheTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got time.Time
		followed := false
		err := awaitTurn(t.Context(), func() error {
			time.Sleep(1500 * time.Millisecond) // the announcer is between queries
			got = time.Now()
			return nil
		}, func(ctx context.Context) ([]agtemporal.PendingApproval, error) {
			return nil, nil
		}, func(agtemporal.PendingApproval) {}, func(ended <-chan struct{}) {
			<-ended
			followed = true
		})
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(got); waited != 0 {
			t.Fatalf("the run ended %s after the turn", waited)
		}
		if !followed {
			t.Fatal("the live output was not read to its end")
		}
	})
}
