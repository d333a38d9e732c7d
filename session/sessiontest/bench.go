package sessiontest

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) }
	b.ReportMetric(pct(0.50), "p50-ns")
	b.ReportMetric(pct(0.99), "p99-ns")
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
