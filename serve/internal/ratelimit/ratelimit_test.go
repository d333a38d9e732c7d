package ratelimit

import (
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestDue: a key is due at once, then not again within Every, then again;
// keys are independent; with Every zero every key is always due.
func TestDue(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	type ask struct {
		key  string
		at   time.Duration // after t0
		want bool
	}
	for _, c := range []struct {
		name  string
		every time.Duration
		asks  []ask
	}{
		{"first ask is due", 5 * time.Second, []ask{{"a", 0, true}}},
		{"not again within the interval", 5 * time.Second, []ask{{"a", 0, true}, {"a", time.Second, false}, {"a", 4999 * time.Millisecond, false}}},
		{"again once the interval passed", 5 * time.Second, []ask{{"a", 0, true}, {"a", 5 * time.Second, true}, {"a", 6 * time.Second, false}, {"a", 10 * time.Second, true}}},
		{"a refused ask does not restart the interval", 5 * time.Second, []ask{{"a", 0, true}, {"a", 4 * time.Second, false}, {"a", 5 * time.Second, true}}},
		{"keys are independent", 5 * time.Second, []ask{{"a", 0, true}, {"b", time.Second, true}, {"a", 2 * time.Second, false}, {"b", 2 * time.Second, false}}},
		{"zero interval: always due", 0, []ask{{"a", 0, true}, {"a", 0, true}, {"b", 0, true}}},
		{"a clock going back is not due", 5 * time.Second, []ask{{"a", 10 * time.Second, true}, {"a", 0, false}}},
	} {
		d := &Due{Every: c.every}
		for i, a := range c.asks {
			if got := d.Due(a.key, t0.Add(a.at)); got != a.want {
				t.Errorf("%s: ask %d (%s at +%v) = %v, want %v", c.name, i, a.key, a.at, got, a.want)
			}
		}
	}
}

// TestDueZeroValue: a zero Due is usable.
func TestDueZeroValue(t *testing.T) {
	var d Due
	if !d.Due("a", time.Now()) || !d.Due("a", time.Now()) {
		t.Error("a zero Due refused a key")
	}
}

// TestDueBounded: past maxKeys keys, those out of their interval are
// forgotten, those within it kept (still not due).
func TestDueBounded(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	d := &Due{Every: 5 * time.Second}
	for i := range maxKeys {
		d.Due("old"+strconv.Itoa(i), t0)
	}
	d.Due("recent", t0.Add(6*time.Second))
	d.Due("new", t0.Add(7*time.Second)) // the map is full: the old keys go
	if n := len(d.last); n != 2 {
		t.Errorf("%d keys remembered, want 2 (recent, new)", n)
	}
	if d.Due("recent", t0.Add(8*time.Second)) {
		t.Error("a key within its interval was forgotten")
	}
	if !d.Due("old0", t0.Add(8*time.Second)) {
		t.Error("a forgotten key is not due")
	}
}

// TestDueConcurrent: of many goroutines asking about one key at once,
// one is told it is due.
func TestDueConcurrent(t *testing.T) {
	var d Due
	d.Every = time.Hour
	now := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	due := 0
	for range 32 {
		wg.Go(func() {
			if d.Due("k", now) {
				mu.Lock()
				due++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if due != 1 {
		t.Errorf("%d goroutines told due, want 1", due)
	}
}
