package runlog

import (
	"bytes"
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
	// spares holds the buffers of closed runs that no reader of this
	// process saw (*spare): a new run's buffer is one of them, memory
	// already touched and likely still cached rather than a new
	// allocation the size of a run.
	spares sync.Pool
}

// spare is a closed run's buffers, for another run.
type spare struct {
	buf []byte
	evs []entry
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
// The events are kept once, in one growing buffer (buf) that holds them
// as the values of the batch records they are written in, one after the
// other: `{"e":[` (the first event of a batch), each event as
// `{"s":N,"t":T,"d":DATA}` (after a comma but the first), then `]}` or
// `],"f":true}` when the batch is written. A batch's record value is thus
// a slice of the buffer, not a copy. The buffer is only appended to, its
// bytes never written over once an event's data is given out, so a slice
// of it stays valid: the readers of this process and the store's write
// use its bytes after the lock is released.
type Writer struct {
	log *Log
	run string

	mu      sync.Mutex
	buf     []byte  // every event, most within the batches
	evs     []entry // where each event's data is in buf, in order
	open    int     // with openSet, buf[open:] is the batch in the making
	openSet bool
	// pinned: a reader of this process took the buffers (their bytes
	// are not given to another run when this one closes).
	pinned bool
	// sealed, when not empty, is the last batch before the size bound,
	// ended and not yet written.
	sealed   []byte
	sealedAt int64 // its last event's number
	flushed  int   // evs[:flushed] is written (or being written)
	full     int   // with fullSet, evs[full:] is over the size bound
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

// entry is one event of a Writer: its number and type, and where its
// data is in the buffer, buf[data:end].
type entry struct {
	seq       int64
	typ       string
	data, end int
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
// encoded once, into the log's own buffer, and its bytes, which are not
// written over while the run lasts, may be given to a client as they are
// until Close (after it they may be another run's). seq must be
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
	if w.waiting { // only then: a channel per event would cost every turn
		close(w.changed)
		w.changed, w.waiting = make(chan struct{}), false
	}
	if w.fullSet {
		e := w.appendLocked(seq, typ, enc, false)
		return w.buf[e.data:e.end:e.end]
	}
	e := w.appendLocked(seq, typ, enc, true)
	size := int64(e.end - e.data + len(typ) + 32)
	if w.stored+size > w.log.maxBytes() {
		// Past the bound: this event and every one after it but the
		// final one stay out of the log.
		w.full, w.fullSet = len(w.evs)-1, true
		e = w.unbatchLastLocked()
		return w.buf[e.data:e.end:e.end]
	}
	w.stored += size
	if w.timer == nil {
		wait := time.Until(w.last.Add(w.log.flushInterval()))
		w.timer = time.AfterFunc(max(wait, 0), w.timed)
	}
	return w.buf[e.data:e.end:e.end]
}

// The sizes of a Writer's buffer: its first at least, and at most as a
// hint, and the room left for an event below which it is doubled.
const (
	initialBuffer = 4 << 10
	maxHint       = 1 << 20
	minRoom       = 1 << 10
)

// appendLocked writes an event to the buffer, in the batch in the making
// when batched (which it begins if there is none), and records it; w.mu
// is held.
func (w *Writer) appendLocked(seq int64, typ string, enc func([]byte) []byte, batched bool) entry {
	if cap(w.buf)-len(w.buf) < minRoom {
		// Doubled (append grows a large slice by a quarter: more copies),
		// or first as large as the last run's.
		n := 2 * cap(w.buf)
		if n == 0 {
			if sp, _ := w.log.spares.Get().(*spare); sp != nil {
				w.buf, w.evs = sp.buf, sp.evs
			}
			n = max(int(w.log.sizeHint.Load()), initialBuffer)
		}
		if cap(w.buf)-len(w.buf) < minRoom {
			w.buf = append(make([]byte, 0, n), w.buf...)
		}
	}
	b := w.buf
	switch {
	case !batched:
	case w.openSet:
		b = append(b, ',')
	default:
		w.open, w.openSet = len(b), true
		b = append(b, `{"e":[`...)
	}
	if batched {
		b = appendHead(b, seq, typ)
	}
	e := entry{seq: seq, typ: typ, data: len(b)}
	b = enc(b)
	if len(b) == e.data {
		b = append(b, "null"...)
	}
	e.end = len(b)
	if batched {
		b = append(b, '}')
	}
	w.buf = b
	if cap(w.evs) == 0 {
		w.evs = make([]entry, 0, max(int(w.log.countHint.Load()), 16))
	}
	w.evs = append(w.evs, e)
	return e
}

// unbatchLastLocked takes the last event, just written, out of the batch
// in the making (the size bound keeps it out of the log): that batch
// ends before it (sealed, to be written) and the event's data is moved
// to its place, outside any batch; nobody has seen its bytes yet. w.mu is
// held.
func (w *Writer) unbatchLastLocked() entry {
	i := len(w.evs) - 1
	e := w.evs[i]
	data := bytes.Clone(w.buf[e.data:e.end])
	cut := e.data - len(appendHead(nil, e.seq, e.typ)) - 1 // its comma, or its batch's start
	if w.open == cut+1-len(`{"e":[`) && w.buf[cut] == '[' {
		cut = w.open // the batch's first event: no batch is left
	} else {
		w.buf = append(w.buf[:cut], "]}"...)
		w.sealed, w.sealedAt = w.buf[w.open:len(w.buf):len(w.buf)], w.evs[i-1].seq
		cut = len(w.buf)
	}
	w.openSet = false
	e.data = cut
	w.buf = append(w.buf[:cut], data...)
	e.end = len(w.buf)
	w.evs[i] = e
	return e
}

// appendHead appends the start of an event's batch member, up to its
// data.
func appendHead(b []byte, seq int64, typ string) []byte {
	b = append(b, `{"s":`...)
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

// pending is a batch of a Writer's events to write: its record value,
// a slice of the buffer, and its last event's number.
type pending struct {
	value []byte
	last  int64
}

// pendingLocked ends the batch in the making (or takes the sealed one),
// returns it and marks its events written; w.mu is held.
func (w *Writer) pendingLocked() pending {
	var p pending
	switch {
	case w.sealed != nil:
		p = pending{value: w.sealed, last: w.sealedAt}
		w.sealed = nil
	case w.openSet:
		w.buf = append(w.buf, "]}"...)
		p = pending{value: w.buf[w.open:len(w.buf):len(w.buf)], last: w.evs[len(w.evs)-1].seq}
		w.openSet = false
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
	if p.value == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.log.write(ctx, w.run, p.last, p.value); err != nil && w.log.Logger != nil {
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
	sealed := w.sealed
	w.sealed = nil
	e := w.appendLocked(final.Seq, final.Type, func(b []byte) []byte { return append(b, final.Data...) }, true)
	value := w.endFinalLocked()
	if sealed != nil {
		// The batch before the bound was not written yet: one write
		// still, the two joined (a copy, in this case only).
		joined := make([]byte, 0, len(sealed)+len(value))
		joined = append(joined, sealed[:len(sealed)-2]...)
		joined = append(joined, ',')
		value = append(joined, value[len(`{"e":[`):]...)
	}
	w.flushed = len(w.evs)
	w.log.sizeHint.Store(int64(min(len(w.buf)+minRoom, maxHint)))
	w.log.countHint.Store(int64(min(len(w.evs), maxHint/64)))
	close(w.changed)
	w.mu.Unlock()
	err := w.log.write(ctx, w.run, e.seq, value)
	w.log.mu.Lock()
	if w.log.live[w.run] == w {
		delete(w.log.live, w.run)
	}
	w.log.mu.Unlock()
	w.recycle()
	return err
}

// recycle gives the buffers of a closed run to the next run unless a
// reader of this process took them (or they are too large to keep); the
// store's write of the final batch is over. The run's readers that come
// now find no event in memory and read the store.
func (w *Writer) recycle() {
	w.mu.Lock()
	buf, evs := w.buf, w.evs
	keep := !w.pinned && cap(buf) <= maxHint
	if keep {
		w.buf, w.evs = nil, nil
	}
	w.mu.Unlock()
	if keep {
		clear(evs) // their types
		w.log.spares.Put(&spare{buf: buf[:0], evs: evs[:0]})
	}
}

// endFinalLocked ends the batch in the making, which holds the final
// event last: marked final, with the count of the events the bound kept
// out. w.mu is held.
func (w *Writer) endFinalLocked() []byte {
	w.buf = append(w.buf, `],"f":true`...)
	if w.fullSet {
		w.buf = append(w.buf, `,"x":`...)
		w.buf = strconv.AppendInt(w.buf, int64(len(w.evs)-1-w.full), 10)
	}
	w.buf = append(w.buf, '}')
	w.openSet = false
	return w.buf[w.open:len(w.buf):len(w.buf)]
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

// write stores one batch, its record value, keyed by its last event.
func (l *Log) write(ctx context.Context, run string, last int64, value []byte) error {
	rec := session.Record{Key: key(run, last), Value: value, Expires: time.Now().Add(l.retention())}
	_, err := l.Records.CreateRecord(ctx, Namespace, rec)
	if errors.Is(err, session.ErrExists) {
		return fmt.Errorf("runlog: run %s: event %d written twice: %w", run, last, err)
	}
	return err
}

// writeEvents stores events as one batch.
func (l *Log) writeEvents(ctx context.Context, run string, events []Event, final bool) error {
	n := 32
	for _, e := range events {
		n += len(e.Data) + len(e.Type) + 48
	}
	b := make([]byte, 0, n)
	b = append(b, `{"e":[`...)
	for i, e := range events {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMember(b, e)
	}
	b = append(b, ']')
	if final {
		b = append(b, `,"f":true`...)
	}
	b = append(b, '}')
	return l.write(ctx, run, events[len(events)-1].Seq, b)
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
		w.waiting, w.pinned = true, true
		w.mu.Unlock()
		for _, e := range evs {
			*last = e.seq
			if !yield(Event{Seq: e.seq, Type: e.typ, Data: buf[e.data:e.end:e.end]}, nil) {
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
