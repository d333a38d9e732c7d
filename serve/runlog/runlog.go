package runlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agcore/agcore/internal/jsonw"
	"github.com/agcore/agcore/session"
)

// Namespace is the records namespace of the logs.
const Namespace = "agcore.runlog"

// Defaults of a Log's limits.
const (
	// DefaultMaxBytes is Log.MaxBytes's default: the stored events of one
	// run, their encoded size.
	DefaultMaxBytes = 8 << 20
	// DefaultRetention is Log.Retention's default.
	DefaultRetention = 24 * time.Hour
	// DefaultFlushInterval is Log.FlushInterval's default.
	DefaultFlushInterval = 50 * time.Millisecond
	// DefaultPollInterval is how often Follow reads the store for a run
	// of another process when Log.PollInterval is 0.
	DefaultPollInterval = 100 * time.Millisecond
)

// ErrNoLog is returned (wrapped) by Follow for a run of which nothing is
// stored (never, or no longer: its retention passed).
var ErrNoLog = errors.New("runlog: no events stored for the run")

// Event is one event of a run: its number (increasing within the run),
// its type, and its data, already encoded as JSON.
type Event struct {
	Seq  int64           `json:"s"`
	Type string          `json:"t"`
	Data json.RawMessage `json:"d"`
}

// Log is the event log of the runs of the processes sharing Records. Its
// zero limits take their defaults. A Log is safe for concurrent use; give
// each process one (it knows its own process's runs).
type Log struct {
	// Records keeps the events; required.
	Records session.Records
	// MaxBytes bounds a run's stored events (their encoded size); past
	// it only the final event is stored. 0 means DefaultMaxBytes.
	MaxBytes int64
	// Retention is how long a batch of events is kept after it was
	// written. 0 means DefaultRetention.
	Retention time.Duration
	// FlushInterval is the shortest time between two writes of a run's
	// events (the final write excepted). 0 means DefaultFlushInterval.
	FlushInterval time.Duration
	// PollInterval is how often Follow reads the store for new events of
	// a run of another process. 0 means DefaultPollInterval.
	PollInterval time.Duration
	// Logger receives the failures of background writes; nil logs
	// nothing.
	Logger *slog.Logger

	mu   sync.Mutex
	live map[string]*Writer
	// sizeHint is the buffer size the last run closed needed (at most
	// maxHint): a new run's buffer starts that large, one allocation for
	// a run like the last.
	sizeHint atomic.Int64
	// countHint is, the same way, the last run's count of events.
	countHint atomic.Int64
}

func (l *Log) maxBytes() int64 {
	if l.MaxBytes > 0 {
		return l.MaxBytes
	}
	return DefaultMaxBytes
}

func (l *Log) retention() time.Duration {
	if l.Retention > 0 {
		return l.Retention
	}
	return DefaultRetention
}

func (l *Log) flushInterval() time.Duration {
	if l.FlushInterval > 0 {
		return l.FlushInterval
	}
	return DefaultFlushInterval
}

func (l *Log) pollInterval() time.Duration {
	if l.PollInterval > 0 {
		return l.PollInterval
	}
	return DefaultPollInterval
}

// prefix and key name a run's batches: RUN/ then the batch's last event
// number, 20 digits, so that byte order is number order.
func prefix(run string) string { return run + "/" }

func key(run string, seq int64) string {
	if seq < 0 {
		return prefix(run)
	}
	var b [20]byte
	s := strconv.AppendInt(b[:0], seq, 10)
	return prefix(run) + "00000000000000000000"[:20-len(s)] + string(s)
}

// batch is a record's value.
type batch struct {
	Events []Event `json:"e"`
	// Final marks the batch holding the run's last event.
	Final bool `json:"f,omitempty"`
	// Dropped counts the events before this batch that the size bound
	// kept out of the log.
	Dropped int64 `json:"x,omitempty"`
}

// Writer writes one run's events. Append never blocks on the store: the
// events are written by a timer, batched.
//
// The events are kept once, in one growing buffer (buf) that holds each
// as the member of a batch it will be written in, `,{"s":N,"t":T,"d":DATA}`,
// so that a batch's value is a slice of it between two brackets; the
// buffer is only appended to, never written over, so a slice of it
// stays valid (the readers of this process and the store's write use
// its bytes without copying, after the lock is released).
type Writer struct {
	log *Log
	run string

	mu       sync.Mutex
	buf      []byte  // every event, as its batch member
	evs      []entry // where each event is in buf, in order
	flushed  int     // evs[:flushed] is written (or being written)
	full     int     // with fullSet, evs[full:] is over the size bound
	fullSet  bool
	changed  chan struct{}
	waiting  bool  // a reader waits on changed
	stored   int64 // bytes stored or pending
	last     time.Time
	timer    *time.Timer
	closed   bool
	finalSet bool       // closed by Close, with the final event
	flushing sync.Mutex // one write at a time, in order
}

// entry is one event of a Writer: its number and type, and where it is
// in the buffer: buf[start:end] its batch member, buf[data:end-1] its
// data.
type entry struct {
	seq              int64
	typ              string
	start, data, end int
}

// Writer starts the log of run, a key prefix unique to the run (a
// response id and a nonce): 1 to 400 bytes that sort after nothing
// another run's key starts with (no '/').
func (l *Log) Writer(run string) (*Writer, error) {
	if err := session.CheckRecord(Namespace, key(run, 0)); err != nil || run == "" || len(run) > 400 {
		return nil, fmt.Errorf("runlog: run %q: %w", run, session.ErrInvalidID)
	}
	for i := 0; i < len(run); i++ {
		if run[i] == '/' {
			return nil, fmt.Errorf("runlog: run %q holds '/': %w", run, session.ErrInvalidID)
		}
	}
	// The first batch too waits for the interval: a run shorter than it
	// is one write.
	w := &Writer{log: l, run: run, changed: make(chan struct{}), last: time.Now()}
	l.mu.Lock()
	if l.live == nil {
		l.live = make(map[string]*Writer)
	}
	l.live[run] = w
	l.mu.Unlock()
	return w, nil
}

// Append adds ev to the log; ev.Seq must be greater than the last
// event's. ev.Data is copied: the caller may reuse it. Past the log's
// size bound the event is only given to the process's own readers.
func (w *Writer) Append(ev Event) {
	w.AppendFunc(ev.Seq, ev.Type, func(b []byte) []byte { return append(b, ev.Data...) })
}

// AppendFunc adds the event seq of type typ whose data (JSON) enc
// appends to the slice it is given, and returns that data: the event is
// encoded once, into the log's own buffer, and its bytes, which are never
// written over, may be given to a client as they are. seq must be
// greater than the last event's. enc is called with w's lock held: it
// must only append. A closed writer calls nothing and returns nil. Past
// the log's size bound the event is only given to the process's own
// readers.
func (w *Writer) AppendFunc(seq int64, typ string, enc func([]byte) []byte) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	e := w.appendLocked(seq, typ, enc)
	if w.waiting { // only then: a channel per event would cost every turn
		close(w.changed)
		w.changed, w.waiting = make(chan struct{}), false
	}
	data := w.buf[e.data : e.end-1 : e.end-1]
	if w.fullSet {
		return data
	}
	size := int64(e.end - e.data - 1 + len(typ) + 32)
	if w.stored+size > w.log.maxBytes() {
		// Past the bound: this event and every one after it but the
		// final one stay out of the log.
		w.full, w.fullSet = len(w.evs)-1, true
		return data
	}
	w.stored += size
	if w.timer == nil {
		wait := time.Until(w.last.Add(w.log.flushInterval()))
		w.timer = time.AfterFunc(max(wait, 0), w.timed)
	}
	return data
}

// The sizes of a Writer's buffer: its first at least, and at most as a
// hint, and the room left for an event below which it is doubled.
const (
	initialBuffer = 4 << 10
	maxHint       = 1 << 20
	minRoom       = 1 << 10
)

// appendLocked writes an event's batch member to the buffer and records
// it; w.mu is held.
func (w *Writer) appendLocked(seq int64, typ string, enc func([]byte) []byte) entry {
	if cap(w.buf)-len(w.buf) < minRoom {
		// Doubled (append grows a large slice by a quarter: more copies),
		// or first as large as the last run's.
		n := 2 * cap(w.buf)
		if n == 0 {
			n = max(int(w.log.sizeHint.Load()), initialBuffer)
		}
		w.buf = append(make([]byte, 0, n), w.buf...)
	}
	e := entry{seq: seq, typ: typ, start: len(w.buf)}
	b := appendHead(w.buf, seq, typ)
	e.data = len(b)
	b = enc(b)
	if len(b) == e.data {
		b = append(b, "null"...)
	}
	b = append(b, '}')
	e.end = len(b)
	w.buf = b
	if w.evs == nil {
		w.evs = make([]entry, 0, max(int(w.log.countHint.Load()), 16))
	}
	w.evs = append(w.evs, e)
	return e
}

// appendHead appends the start of an event's batch member, up to its
// data.
func appendHead(b []byte, seq int64, typ string) []byte {
	b = append(b, `,{"s":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"t":`...)
	b = jsonw.AppendString(b, typ)
	return append(b, `,"d":`...)
}

// appendMember appends ev as a batch member.
func appendMember(b []byte, ev Event) []byte {
	b = appendHead(b, ev.Seq, ev.Type)
	if len(ev.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, ev.Data...)
	}
	return append(b, '}')
}

// pending is a batch of a Writer's events to write: members, a slice of
// its buffer, the last event's number, and the count of the events
// before them that the bound kept out.
type pending struct {
	members []byte
	last    int64
	dropped int64
}

// pendingLocked returns the events not yet written and marks them
// written; w.mu is held.
func (w *Writer) pendingLocked() pending {
	end := len(w.evs)
	if w.fullSet {
		end = max(w.full, w.flushed)
	}
	var p pending
	if end > w.flushed {
		from, to := w.evs[w.flushed].start, w.evs[end-1].end
		p.members, p.last = w.buf[from:to:to], w.evs[end-1].seq
	}
	if w.fullSet && w.flushed <= w.full {
		p.dropped = int64(len(w.evs) - w.full)
	}
	w.flushed = len(w.evs)
	return p
}

func (w *Writer) timed() {
	w.flushing.Lock()
	defer w.flushing.Unlock()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	p := w.pendingLocked()
	w.timer, w.last = nil, time.Now()
	w.mu.Unlock()
	if len(p.members) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.log.write(ctx, w.run, p.last, false, p.dropped, p.members, nil); err != nil && w.log.Logger != nil {
		w.log.Logger.LogAttrs(ctx, slog.LevelWarn, "runlog: writing events", slog.String("run", w.run), slog.String("error", err.Error()))
	}
}

// Close writes what is pending with final, the run's last event, in one
// write, and ends the run in this process: its readers read the store
// from now on.
func (w *Writer) Close(ctx context.Context, final Event) error {
	w.flushing.Lock()
	defer w.flushing.Unlock()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.closed, w.finalSet = true, true
	p := w.pendingLocked()
	e := w.appendLocked(final.Seq, final.Type, func(b []byte) []byte { return append(b, final.Data...) })
	w.flushed = len(w.evs)
	fin := w.buf[e.start:e.end:e.end]
	close(w.changed)
	w.log.sizeHint.Store(int64(min(len(w.buf)+minRoom, maxHint)))
	w.log.countHint.Store(int64(min(len(w.evs)+1, maxHint/64)))
	w.mu.Unlock()
	err := w.log.write(ctx, w.run, final.Seq, true, p.dropped, p.members, fin)
	w.log.mu.Lock()
	if w.log.live[w.run] == w {
		delete(w.log.live, w.run)
	}
	w.log.mu.Unlock()
	return err
}

// Abandon ends the run in this process without writing anything more
// (the process is going away; another will end the log with AppendFinal).
func (w *Writer) Abandon() {
	w.mu.Lock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if !w.closed {
		w.closed = true
		close(w.changed)
	}
	w.mu.Unlock()
	w.log.mu.Lock()
	if w.log.live[w.run] == w {
		delete(w.log.live, w.run)
	}
	w.log.mu.Unlock()
}

// write stores one batch, keyed by its last event: its members (a and
// then b, each a run of batch members), final when it holds the run's
// last event, dropped the events before it the bound kept out.
func (l *Log) write(ctx context.Context, run string, last int64, final bool, dropped int64, a, b []byte) error {
	rec := session.Record{Key: key(run, last), Value: encodeBatch(a, b, final, dropped), Expires: time.Now().Add(l.retention())}
	_, err := l.Records.CreateRecord(ctx, Namespace, rec)
	if errors.Is(err, session.ErrExists) {
		return fmt.Errorf("runlog: run %s: event %d written twice: %w", run, last, err)
	}
	return err
}

// writeEvents stores events as one batch.
func (l *Log) writeEvents(ctx context.Context, run string, events []Event, final bool) error {
	n := 0
	for _, e := range events {
		n += len(e.Data) + len(e.Type) + 48
	}
	b := make([]byte, 0, n)
	for _, e := range events {
		b = appendMember(b, e)
	}
	return l.write(ctx, run, events[len(events)-1].Seq, final, 0, b, nil)
}

// encodeBatch writes a batch's value, the batch type as JSON, from its
// members (a then b, each a run of `,{...}`), without encoding the
// events again.
func encodeBatch(a, b []byte, final bool, dropped int64) []byte {
	out := make([]byte, 0, len(a)+len(b)+48)
	out = append(out, `{"e":[`...)
	if len(a) > 0 { // the first member without its comma
		out = append(out, a[1:]...)
		out = append(out, b...)
	} else if len(b) > 0 {
		out = append(out, b[1:]...)
	}
	out = append(out, ']')
	if final {
		out = append(out, `,"f":true`...)
	}
	if dropped > 0 {
		out = append(out, `,"x":`...)
		out = strconv.AppendInt(out, dropped, 10)
	}
	return append(out, '}')
}

// AppendFinal ends the stored log of run with ev, the final event of a
// run whose process was lost (ev.Seq after every stored event). A log
// already ended, or ended meanwhile by another process, is left as it is:
// the error is nil.
func (l *Log) AppendFinal(ctx context.Context, run string, ev Event) error {
	err := l.writeEvents(ctx, run, []Event{ev}, true)
	if errors.Is(err, session.ErrExists) {
		return nil
	}
	return err
}

// AppendBatch stores events, numbers increasing and greater than those
// of every event of run already stored, in one write; final marks the
// last of them as the run's final event. It is for a writer in another
// process than the run's Writer (a durable runner's worker, which
// batches the events itself): the same batch written again (a retried
// write) is not an error. No size bound applies.
func (l *Log) AppendBatch(ctx context.Context, run string, events []Event, final bool) error {
	if len(events) == 0 {
		return nil
	}
	err := l.writeEvents(ctx, run, events, final)
	if errors.Is(err, session.ErrExists) {
		return nil
	}
	return err
}

// Read returns the stored events of run after event after (-1: all), in
// order, and whether they end with the run's final event. It reads only
// the batches that hold events after after.
func (l *Log) Read(ctx context.Context, run string, after int64) (events []Event, final bool, err error) {
	recs, err := session.ListRecordsAfter(ctx, l.Records, Namespace, prefix(run), key(run, after))
	if err != nil {
		return nil, false, err
	}
	for _, rec := range recs {
		var b batch
		if err := json.Unmarshal(rec.Value, &b); err != nil {
			return nil, false, fmt.Errorf("runlog: run %s: batch %s: %w", run, rec.Key, err)
		}
		for _, e := range b.Events {
			if e.Seq > after {
				events = append(events, e)
			}
		}
		if b.Final {
			return events, true, nil
		}
	}
	return events, false, nil
}

// Running reports whether run is running in this process.
func (l *Log) Running(run string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.live[run] != nil
}

// Follow yields the events of run after event after (-1: all) as they
// come, until the final one, which it yields last. A run of this process
// is followed in memory; another's through the store, every
// PollInterval. Each time a read of the store found nothing new, idle is
// called (if not nil) with the last event number seen: it returns an
// error to stop following (the run is lost and cannot be ended), or ends
// the log itself with AppendFinal. Without idle, a run of which nothing
// is stored (not yet: its first batch waits FlushInterval) yields
// ErrNoLog. Breaking
// the loop stops following; the run goes on.
func (l *Log) Follow(ctx context.Context, run string, after int64, idle func(ctx context.Context, last int64) error) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		last := after
		for {
			l.mu.Lock()
			w := l.live[run]
			l.mu.Unlock()
			if w != nil {
				done, ok := w.follow(ctx, &last, yield)
				if done || !ok {
					return
				}
				// The run ended in this process: the rest (its final event,
				// when it was not given in memory) is in the store.
			}
			evs, final, err := l.Read(ctx, run, last)
			if err != nil {
				yield(Event{}, err)
				return
			}
			for _, e := range evs {
				last = e.Seq
				if !yield(e, nil) {
					return
				}
			}
			if final {
				return
			}
			if len(evs) == 0 {
				if idle != nil {
					if err := idle(ctx, last); err != nil {
						yield(Event{}, err)
						return
					}
				}
				if idle == nil && last == after && w == nil && !l.Running(run) {
					// Nothing stored: is it there at all?
					if evs, _, err := l.Read(ctx, run, -1); err == nil && len(evs) == 0 {
						yield(Event{}, fmt.Errorf("runlog: run %s: %w", run, ErrNoLog))
						return
					}
				}
				t := time.NewTimer(l.pollInterval())
				select {
				case <-ctx.Done():
					t.Stop()
					yield(Event{}, context.Cause(ctx))
					return
				case <-t.C:
				}
			}
		}
	}
}

// follow yields w's events after *last from memory until the run ends in
// this process (done: its final event was yielded) or the reader stops
// (ok false).
func (w *Writer) follow(ctx context.Context, last *int64, yield func(Event, error) bool) (done, ok bool) {
	for {
		w.mu.Lock()
		// Events are in order: find the first after *last.
		i := len(w.evs)
		for i > 0 && w.evs[i-1].seq > *last {
			i--
		}
		evs, buf := w.evs[i:], w.buf
		closed, changed := w.closed, w.changed
		w.waiting = true
		w.mu.Unlock()
		for _, e := range evs {
			*last = e.seq
			if !yield(Event{Seq: e.seq, Type: e.typ, Data: buf[e.data : e.end-1 : e.end-1]}, nil) {
				return false, false
			}
		}
		if closed {
			// Closed with a final event (Close) or abandoned (read the store).
			w.mu.Lock()
			n := len(w.evs)
			fin := n > 0 && w.evs[n-1].seq == *last && w.final()
			w.mu.Unlock()
			return fin, true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			yield(Event{}, context.Cause(ctx))
			return false, false
		}
	}
}

// final reports whether the run was closed with its final event (not
// abandoned); w.mu is held.
func (w *Writer) final() bool { return w.finalSet }
