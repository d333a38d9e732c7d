package runlog_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

// counting counts the writes and the records read of a store's records.
type counting struct {
	session.Records
	mu           sync.Mutex
	writes, read int
}

func (c *counting) CreateRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	c.mu.Lock()
	c.writes++
	c.mu.Unlock()
	return c.Records.CreateRecord(ctx, ns, rec)
}

func (c *counting) ListRecordsAfter(ctx context.Context, ns, prefix, after string) ([]session.Record, error) {
	recs, err := session.ListRecordsAfter(ctx, c.Records, ns, prefix, after)
	c.mu.Lock()
	c.read += len(recs)
	c.mu.Unlock()
	return recs, err
}

func (c *counting) counts() (writes, read int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.writes, c.read
}

func ev(seq int64) runlog.Event {
	return runlog.Event{Seq: seq, Type: "delta", Data: []byte(`{"n":` + strconv.FormatInt(seq, 10) + `}`)}
}

func final(seq int64) runlog.Event {
	return runlog.Event{Seq: seq, Type: "done", Data: []byte(`{"ok":true}`)}
}

func seqs(evs []runlog.Event) string {
	var out []int64
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return fmt.Sprint(out)
}

// TestWriterBatches: the events appended within a flush interval are
// one write: a run shorter than the interval is written once, at Close,
// with its final event.
func TestWriterBatches(t *testing.T) {
	recs := &counting{Records: memstore.New()}
	l := &runlog.Log{Records: recs, FlushInterval: time.Hour}
	w, err := l.Writer("resp_a")
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 100; i++ {
		w.Append(ev(i))
	}
	if writes, _ := recs.counts(); writes != 0 {
		t.Fatalf("%d writes before the interval passed", writes)
	}
	if err := w.Close(t.Context(), final(100)); err != nil {
		t.Fatal(err)
	}
	if writes, _ := recs.counts(); writes != 1 {
		t.Fatalf("%d writes for 101 events, want 1", writes)
	}
	evs, fin, err := l.Read(t.Context(), "resp_a", -1)
	if err != nil || !fin || len(evs) != 101 || evs[100].Type != "done" {
		t.Fatalf("Read: %d events, final %v, %v", len(evs), fin, err)
	}
}

// TestReadAfter: a read after event N gets the events after N, reading
// only the batches that hold them.
func TestReadAfter(t *testing.T) {
	recs := &counting{Records: memstore.New()}
	l := &runlog.Log{Records: recs}
	w, _ := l.Writer("run1")
	// Ten batches of ten events, each closed by a flush.
	for b := range int64(10) {
		for i := range int64(10) {
			w.Append(ev(b*10 + i))
		}
		for n, _, _ := l.Read(t.Context(), "run1", b*10+8); len(n) == 0; n, _, _ = l.Read(t.Context(), "run1", b*10+8) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	if err := w.Close(t.Context(), final(100)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		after     int64
		want      int
		maxBatchs int
	}{
		{-1, 101, 11},
		{49, 51, 6},
		{94, 6, 2},
		{99, 1, 1},
		{100, 0, 0},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint("after ", tc.after), func(t *testing.T) {
			_, before := recs.counts()
			evs, fin, err := l.Read(t.Context(), "run1", tc.after)
			_, after := recs.counts()
			if err != nil || len(evs) != tc.want || (tc.want > 0 && (!fin || evs[0].Seq != tc.after+1)) {
				t.Fatalf("Read after %d: %s final %v %v", tc.after, seqs(evs), fin, err)
			}
			if after-before > tc.maxBatchs {
				t.Errorf("read %d batches, want at most %d", after-before, tc.maxBatchs)
			}
		})
	}
}

// TestBounded: past MaxBytes the events are not stored, the final one is.
func TestBounded(t *testing.T) {
	l := &runlog.Log{Records: memstore.New(), MaxBytes: 200}
	w, _ := l.Writer("small")
	for i := range int64(50) {
		w.Append(ev(i))
	}
	if err := w.Close(t.Context(), final(50)); err != nil {
		t.Fatal(err)
	}
	evs, fin, err := l.Read(t.Context(), "small", -1)
	if err != nil || !fin || len(evs) >= 50 || evs[len(evs)-1].Seq != 50 {
		t.Fatalf("%s final %v %v", seqs(evs), fin, err)
	}
}

// TestFollow: a reader of this process follows in memory, one of another
// process (another Log over the same store) through the store; both get
// every event after N, in order, to the final one.
func TestFollow(t *testing.T) {
	store := memstore.New()
	here := &runlog.Log{Records: store}
	there := &runlog.Log{Records: store, PollInterval: 5 * time.Millisecond}
	w, _ := here.Writer("r")
	w.Append(ev(0))
	w.Append(ev(1))
	results := make(chan string, 2)
	for _, l := range []*runlog.Log{here, there} {
		go func() {
			var got []runlog.Event
			wait := func(context.Context, int64) error { return nil } // the run lives
			for e, err := range l.Follow(t.Context(), "r", 0, wait) {
				if err != nil {
					results <- err.Error()
					return
				}
				got = append(got, e)
			}
			results <- seqs(got)
		}()
	}
	for i := int64(2); i < 30; i++ {
		w.Append(ev(i))
		time.Sleep(time.Millisecond)
	}
	if err := w.Close(t.Context(), final(30)); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint(seqsFrom(1, 30))
	for range 2 {
		if got := <-results; got != want {
			t.Errorf("followed %s, want %s", got, want)
		}
	}
}

func seqsFrom(a, b int64) []int64 {
	var out []int64
	for i := a; i <= b; i++ {
		out = append(out, i)
	}
	return out
}

// TestFollowLostRun: a run whose process is gone ends when idle ends its
// log with AppendFinal; a run of which nothing is stored is ErrNoLog.
func TestFollowLostRun(t *testing.T) {
	store := memstore.New()
	dead := &runlog.Log{Records: store}
	w, _ := dead.Writer("lost")
	w.Append(ev(0))
	w.Append(ev(1))
	for evs, _, _ := dead.Read(t.Context(), "lost", -1); len(evs) < 2; evs, _, _ = dead.Read(t.Context(), "lost", -1) {
		time.Sleep(5 * time.Millisecond)
	}
	w.Abandon()
	other := &runlog.Log{Records: store, PollInterval: time.Millisecond}
	idles := 0
	idle := func(ctx context.Context, last int64) error {
		if idles++; idles == 3 {
			return other.AppendFinal(ctx, "lost", runlog.Event{Seq: last + 1, Type: "failed", Data: []byte(`{}`)})
		}
		return nil
	}
	var got []runlog.Event
	for e, err := range other.Follow(t.Context(), "lost", 0, idle) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if seqs(got) != "[1 2]" || got[1].Type != "failed" {
		t.Fatalf("followed %s", seqs(got))
	}
	for _, err := range other.Follow(t.Context(), "never", -1, nil) {
		if !errors.Is(err, runlog.ErrNoLog) {
			t.Fatalf("a run never written: %v", err)
		}
	}
}

// BenchmarkReadAfter reads a run of 10,000 events stored in 100 batches
// after event N: the records read (and the time) follow the events after
// N, not the run's length. The read of the whole log is the reference.
func BenchmarkReadAfter(b *testing.B) {
	recs := &counting{Records: memstore.New()}
	l := &runlog.Log{Records: recs, FlushInterval: time.Nanosecond}
	w, _ := l.Writer("big")
	for i := range int64(10000) {
		w.Append(ev(i))
		if i%100 == 99 {
			for n, _, _ := l.Read(b.Context(), "big", i-1); len(n) == 0; n, _, _ = l.Read(b.Context(), "big", i-1) {
				time.Sleep(time.Millisecond)
			}
		}
	}
	if err := w.Close(b.Context(), final(10000)); err != nil {
		b.Fatal(err)
	}
	for _, after := range []int64{-1, 5000, 9900, 9990} {
		b.Run(fmt.Sprint("after=", after), func(b *testing.B) {
			_, r0 := recs.counts()
			for range b.N {
				evs, _, err := l.Read(b.Context(), "big", after)
				if err != nil || int64(len(evs)) != 10000-after {
					b.Fatalf("%d events, %v", len(evs), err)
				}
			}
			_, r1 := recs.counts()
			b.ReportMetric(float64(r1-r0)/float64(b.N), "batches-read/op")
		})
	}
}

// TestBoundedData: past the size bound, written before or after the last
// batch below it was flushed, the store holds the events below the bound
// and the final one, each with its own data; a reader of this process
// gets every event with its data, the first past the bound too; Append
// copies the data it is given.
func TestBoundedData(t *testing.T) {
	for _, flushFirst := range []bool{false, true} {
		t.Run(fmt.Sprint("flushed=", flushFirst), func(t *testing.T) {
			l := &runlog.Log{Records: memstore.New(), MaxBytes: 200, FlushInterval: time.Millisecond}
			if !flushFirst {
				l.FlushInterval = time.Hour
			}
			w, _ := l.Writer("b")
			reused := make([]byte, 0, 64)
			for i := range int64(3) {
				reused = append(reused[:0], ev(i).Data...)
				w.Append(runlog.Event{Seq: i, Type: "delta", Data: reused})
			}
			if flushFirst {
				for evs, _, _ := l.Read(t.Context(), "b", -1); len(evs) < 3; evs, _, _ = l.Read(t.Context(), "b", -1) {
					time.Sleep(time.Millisecond)
				}
			}
			for i := int64(3); i < 20; i++ {
				reused = append(reused[:0], ev(i).Data...)
				w.Append(runlog.Event{Seq: i, Type: "delta", Data: reused})
			}
			followed := make(chan []runlog.Event, 1)
			go func() {
				var got []runlog.Event
				for e, err := range l.Follow(t.Context(), "b", -1, nil) {
					if err != nil {
						break
					}
					got = append(got, e)
				}
				followed <- got
			}()
			time.Sleep(10 * time.Millisecond)
			if err := w.Close(t.Context(), final(20)); err != nil {
				t.Fatal(err)
			}
			evs, fin, err := l.Read(t.Context(), "b", -1)
			if err != nil || !fin || len(evs) < 3 || len(evs) >= 20 || evs[len(evs)-1].Seq != 20 {
				t.Fatalf("stored %s final %v %v", seqs(evs), fin, err)
			}
			for i, e := range evs[:len(evs)-1] {
				if e.Seq != int64(i) || string(e.Data) != string(ev(int64(i)).Data) {
					t.Fatalf("stored event %d: %d %s", i, e.Seq, e.Data)
				}
			}
			got := <-followed
			if len(got) != 21 {
				t.Fatalf("followed %s", seqs(got))
			}
			for i, e := range got[:20] {
				if e.Seq != int64(i) || e.Type != "delta" || string(e.Data) != string(ev(int64(i)).Data) {
					t.Fatalf("followed event %d: %d %s %s", i, e.Seq, e.Type, e.Data)
				}
			}
			if string(got[20].Data) != string(final(20).Data) {
				t.Fatalf("final event %s", got[20].Data)
			}
		})
	}
}

// TestAppendFunc: the data AppendFunc returns is the event's, as readers
// get it; an empty encoding is null.
func TestAppendFunc(t *testing.T) {
	l := &runlog.Log{Records: memstore.New()}
	w, _ := l.Writer("f")
	data := w.AppendFunc(0, "x", func(b []byte) []byte { return append(b, `{"a":"<b>"}`...) })
	if string(data) != `{"a":"<b>"}` {
		t.Fatalf("AppendFunc returned %s", data)
	}
	if data := w.AppendFunc(1, "y", func(b []byte) []byte { return b }); string(data) != "null" {
		t.Fatalf("an empty event is %s", data)
	}
	if err := w.Close(t.Context(), final(2)); err != nil {
		t.Fatal(err)
	}
	if w.AppendFunc(3, "z", func(b []byte) []byte { return append(b, '1') }) != nil {
		t.Fatal("a closed writer took an event")
	}
	evs, fin, err := l.Read(t.Context(), "f", -1)
	if err != nil || !fin || len(evs) != 3 || string(evs[0].Data) != `{"a":"<b>"}` || string(evs[1].Data) != "null" {
		t.Fatalf("stored %v final %v %v", evs, fin, err)
	}
}

// BenchmarkWriterAppend appends a run's events (200 of a streamed
// answer's size) and closes it: the write path of a background turn,
// one write for a run shorter than the flush interval.
func BenchmarkWriterAppend(b *testing.B) {
	l := &runlog.Log{Records: memstore.New()}
	data := []byte(`{"content_index":0,"delta":"word ","item_id":"msg_0123456789abcdef01234567","logprobs":[],"output_index":0,"sequence_number":100,"type":"response.output_text.delta"}`)
	b.ReportAllocs()
	for i := range b.N {
		w, err := l.Writer("run" + strconv.Itoa(i))
		if err != nil {
			b.Fatal(err)
		}
		for j := range int64(200) {
			w.AppendFunc(j, "response.output_text.delta", func(b []byte) []byte { return append(b, data...) })
		}
		if err := w.Close(b.Context(), final(200)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReusedBuffers: the events a reader of this process got keep their
// data after the run closed and other runs wrote theirs (a closed run's
// buffer serves the next only when no reader took its events); a run
// read from memory after Close is read from the store.
func TestReusedBuffers(t *testing.T) {
	l := &runlog.Log{Records: memstore.New(), FlushInterval: time.Hour}
	w, _ := l.Writer("first")
	for i := range int64(50) {
		w.Append(ev(i))
	}
	var got []runlog.Event
	for e, err := range l.Follow(t.Context(), "first", 44, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
		if e.Seq == 49 {
			break
		}
	}
	if err := w.Close(t.Context(), final(50)); err != nil {
		t.Fatal(err)
	}
	for r := range 3 {
		w, _ := l.Writer("next" + strconv.Itoa(r))
		for i := range int64(60) {
			w.Append(runlog.Event{Seq: i, Type: "other", Data: []byte(`{"x":"` + strconv.Itoa(r) + `"}`)})
		}
		if err := w.Close(t.Context(), final(60)); err != nil {
			t.Fatal(err)
		}
		var again []runlog.Event
		for e, err := range l.Follow(t.Context(), "next"+strconv.Itoa(r), 57, nil) {
			if err != nil {
				t.Fatal(err)
			}
			again = append(again, e)
		}
		if seqs(again) != "[58 59 60]" || string(again[0].Data) != `{"x":"`+strconv.Itoa(r)+`"}` {
			t.Fatalf("run %d read after Close: %v", r, again)
		}
	}
	if len(got) != 5 {
		t.Fatalf("followed %s", seqs(got))
	}
	for _, e := range got {
		if e.Type != "delta" || string(e.Data) != string(ev(e.Seq).Data) {
			t.Fatalf("event %d followed: %s %s", e.Seq, e.Type, e.Data)
		}
	}
}
