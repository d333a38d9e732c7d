package sessiontest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// BenchAppend measures Append of a 10-message turn (a realistic tool-using
// exchange, about 2.5 KB of JSON) to one growing session. Besides the mean
// (ns/op) it reports the median and the 99th percentile latency as
// "p50-ns" and "p99-ns". newStore is called once.
func BenchAppend(b *testing.B, newStore func(b *testing.B) session.Store) {
	s := newStore(b)
	ctx := b.Context()
	msgs := Conversation("bench", 10)
	lat := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		tr := session.Turn{ID: fmt.Sprintf("turn-%d", len(lat)), Messages: msgs}
		start := time.Now()
		if err := s.Append(ctx, "bench", tr); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
}

// BenchFloor measures op, the least a store's append costs on its server
// (one durable commit of a row, one round trip), as the floor the store's
// BenchAppend figures are read against in the same run; it reports the
// same "p50-ns" and "p99-ns" metrics.
func BenchFloor(b *testing.B, op func(i int) error) {
	lat := make([]time.Duration, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		if err := op(len(lat)); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	reportPercentiles(b, lat)
}

// BenchAppendVsFloor measures BenchAppend's append and BenchFloor's op
// in turns, one of each per iteration, so that on a shared machine both
// meet the same load, which moves from one second to the next; it
// reports the median of each ("append-p50-ns", "floor-p50-ns") and the
// first over the second ("x-floor-p50"). newStore is called once.
func BenchAppendVsFloor(b *testing.B, newStore func(b *testing.B) session.Store, floor func(i int) error) {
	s := newStore(b)
	ctx := b.Context()
	msgs := Conversation("bench", 10)
	appends := make([]time.Duration, 0, 1024)
	floors := make([]time.Duration, 0, 1024)
	for b.Loop() {
		i := len(appends)
		start := time.Now()
		if err := s.Append(ctx, "bench", session.Turn{ID: fmt.Sprintf("turn-%d", i), Messages: msgs}); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := floor(i); err != nil {
			b.Fatal(err)
		}
		appends, floors = append(appends, mid.Sub(start)), append(floors, time.Since(mid))
	}
	if len(appends) == 0 {
		return
	}
	a, f := percentile(appends, 0.50), percentile(floors, 0.50)
	b.ReportMetric(a, "append-p50-ns")
	b.ReportMetric(f, "floor-p50-ns")
	b.ReportMetric(a/f, "x-floor-p50")
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	b.ReportMetric(percentile(lat, 0.50), "p50-ns")
	b.ReportMetric(percentile(lat, 0.99), "p99-ns")
}

// percentile sorts lat and returns its p'th percentile in nanoseconds.
func percentile(lat []time.Duration, p float64) float64 {
	slices.Sort(lat)
	return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))])
}

// LoadMessages is the size of the session BenchLoad loads.
const LoadMessages = 10_000

// BenchLoad measures Load of a session of LoadMessages messages, stored as
// 1,000 turns of 10 messages each. Besides the wall time (ns/op) it reports
// the process's CPU time per load over all cores as "cpu-ns/op" where the
// platform tells it. newStore is called once; filling the store is not
// timed.
func BenchLoad(b *testing.B, newStore func(b *testing.B) session.Store) {
	s := newStore(b)
	ctx := b.Context()
	const perTurn = 10
	for i := range LoadMessages / perTurn {
		tag := fmt.Sprintf("t%d", i)
		if err := s.Append(ctx, "big", session.Turn{ID: tag, Messages: Conversation(tag, perTurn)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	cpu0, cpuOK := cpuTime()
	loads := 0
	for b.Loop() {
		loads++
		sess, err := s.Load(ctx, "big")
		if err != nil {
			b.Fatal(err)
		}
		if len(sess.Messages) != LoadMessages {
			b.Fatalf("loaded %d messages, want %d", len(sess.Messages), LoadMessages)
		}
	}
	// CPU time, summed over every core, is what a load costs even on a
	// busy machine, where wall time (ns/op) also counts waiting.
	if cpu1, ok := cpuTime(); cpuOK && ok && loads > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(loads), "cpu-ns/op")
	}
}

// BenchAppendConcurrent measures throughput with writers goroutines each
// appending 10-message turns to a session of its own, as many agents
// serving different users do. It reports "turns/s". newStore is called
// once.
func BenchAppendConcurrent(b *testing.B, writers int, newStore func(b *testing.B) session.Store) {
	s := newStore(b)
	ctx := b.Context()
	msgs := Conversation("bench", 10)
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for {
				n := next.Add(1)
				if n > int64(b.N) {
					return
				}
				tr := session.Turn{ID: fmt.Sprintf("turn-%d", n), Messages: msgs}
				if err := s.Append(ctx, fmt.Sprintf("bench-%d", w), tr); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
}

// ListSessions and ListMessages are the shape of the store BenchList
// lists: ListSessions sessions of ListMessages messages each.
const (
	ListSessions = 1_000
	ListMessages = 100
)

// BenchList measures listing every session of a store holding
// ListSessions sessions of ListMessages messages (one turn each), in pages
// of ListSessions as `agcore sessions list` asks for them: the wall
// time per listing (ns/op), its allocations (B/op) and, where the platform
// tells it, the CPU time ("cpu-ns/op"). A store that reads only the
// sessions' metadata lists in time and memory independent of the
// messages. newStore is called once; filling the store is not timed.
func BenchList(b *testing.B, newStore func(b *testing.B) session.Store) {
	s := newStore(b)
	ctx := b.Context()
	for i := range ListSessions {
		tag := fmt.Sprintf("s%04d", i)
		if err := s.Append(ctx, tag, session.Turn{ID: "t", Model: "bench-model", Messages: Conversation(tag, ListMessages)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	cpu0, cpuOK := cpuTime()
	lists := 0
	for b.Loop() {
		lists++
		n := 0
		for cursor := ""; ; {
			page, err := s.List(ctx, session.ListOptions{Cursor: cursor, Limit: ListSessions})
			if err != nil {
				b.Fatal(err)
			}
			n += len(page.Sessions)
			if cursor = page.Next; cursor == "" {
				break
			}
		}
		if n != ListSessions {
			b.Fatalf("listed %d sessions, want %d", n, ListSessions)
		}
	}
	if cpu1, ok := cpuTime(); cpuOK && ok && lists > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(lists), "cpu-ns/op")
	}
}

// viewUpto is where the compaction of the session BenchLoadView loads
// ends: near the end of its LoadMessages messages.
const viewUpto = LoadMessages - 100

// BenchLoadView measures LoadView of a session of LoadMessages messages
// (1,000 turns of 10) whose compaction view (two messages) replaces its
// first viewUpto, against Load of the same session: it reports LoadView's
// wall time (ns/op) and allocations, Load's wall time as "load-ns" and
// their ratio as "load/view". Give it a store that keeps nothing decoded
// between loads (a cold turn, as in a new process), or the figures measure
// the store's cache. newStore is called once; filling is not timed.
func BenchLoadView(b *testing.B, newStore func(b *testing.B) session.Store) {
	s := newStore(b)
	ctx := b.Context()
	const perTurn = 10
	for i := range LoadMessages / perTurn {
		tag := fmt.Sprintf("t%d", i)
		tr := session.Turn{ID: tag, Messages: Conversation(tag, perTurn)}
		if (i+1)*perTurn == viewUpto+perTurn {
			tr.Compaction = &session.Compaction{Upto: viewUpto, Messages: []llm.Message{
				llm.UserText("Summary of the conversation so far: weather questions for many cities."),
				llm.AssistantText("Understood."),
			}}
		}
		if err := s.Append(ctx, "big", tr); err != nil {
			b.Fatal(err)
		}
	}
	const loads = 5
	start := time.Now()
	for range loads {
		sess, err := s.Load(ctx, "big")
		if err != nil {
			b.Fatal(err)
		}
		if len(sess.Messages) != LoadMessages {
			b.Fatalf("Load: %d messages, want %d", len(sess.Messages), LoadMessages)
		}
	}
	loadNs := float64(time.Since(start).Nanoseconds()) / loads
	b.ReportAllocs()
	views := 0
	start = time.Now()
	for b.Loop() {
		views++
		sess, err := s.LoadView(ctx, "big")
		if err != nil {
			b.Fatal(err)
		}
		if sess.Base != viewUpto || len(sess.Messages) != LoadMessages-viewUpto {
			b.Fatalf("LoadView: base %d, %d messages", sess.Base, len(sess.Messages))
		}
	}
	if views > 0 {
		viewNs := float64(time.Since(start).Nanoseconds()) / float64(views)
		b.ReportMetric(loadNs, "load-ns")
		b.ReportMetric(loadNs/viewNs, "load/view")
	}
}
