package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// DefaultMaxEventSize is the largest event a Decoder accepts by default.
const DefaultMaxEventSize = 8 << 20

// ErrEventTooLarge is returned (wrapped) when an event or a single line
// exceeds the decoder's maximum size.
var ErrEventTooLarge = errors.New("sse: event exceeds the maximum size")

// Event is one dispatched event. Type is "message" when the stream named
// none. Data is valid until the next call to Decoder.Next.
type Event struct {
	Type  string
	Data  []byte
	ID    string
	Retry int // reconnection time in ms, 0 if not sent
}

// Options configure a Decoder. The zero value is usable.
type Options struct {
	// MaxEventSize bounds the bytes of one event's data and of any one line;
	// 0 means DefaultMaxEventSize.
	MaxEventSize int
}

// Decoder reads events from an event stream.
type Decoder struct {
	r      io.Reader
	max    int
	buf    []byte
	start  int // first unread byte in buf
	end    int // end of valid bytes in buf
	err    error
	data   []byte
	typ    []byte
	hasTyp bool
	id     string
	lastID []byte
	// lastType caches the string of the previous event type so repeated
	// types ("content_block_delta") cost no allocation.
	lastType string
	retry    int
	scanned  int // bytes after start known to hold no line terminator
	bomDone  bool
	skipLF   bool // the previous line ended in CR: a following LF belongs to it
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader, opts Options) *Decoder {
	max := opts.MaxEventSize
	if max <= 0 {
		max = DefaultMaxEventSize
	}
	return &Decoder{r: r, max: max, buf: make([]byte, 4096)}
}

// Next returns the next event. At the end of the stream it returns io.EOF;
// a partial event not terminated by a blank line is discarded, as the format
// requires (callers treat a stream without its final event as truncated).
func (d *Decoder) Next() (Event, error) {
	d.data = d.data[:0]
	d.hasTyp = false
	hasData := false
	for {
		line, err := d.line()
		if err != nil {
			return Event{}, err
		}
		if len(line) == 0 {
			if !hasData {
				// A blank line with no data resets the type and keeps going.
				d.hasTyp = false
				continue
			}
			return d.dispatch(), nil
		}
		if line[0] == ':' {
			continue // comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if hasData {
				d.data = append(d.data, '\n')
			}
			hasData = true
			if len(d.data)+len(value) > d.max {
				return Event{}, fmt.Errorf("%w (%d bytes)", ErrEventTooLarge, d.max)
			}
			d.data = append(d.data, value...)
		case "event":
			d.typ = append(d.typ[:0], value...)
			d.hasTyp = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				d.lastID = append(d.lastID[:0], value...)
			}
		case "retry":
			// Malformed values are ignored, as the format says.
			if n, err := strconv.Atoi(string(value)); err == nil && n >= 0 {
				d.retry = n
			}
		}
	}
}

func (d *Decoder) dispatch() Event {
	ev := Event{Data: d.data, Retry: d.retry}
	if d.hasTyp && len(d.typ) > 0 {
		if string(d.typ) != d.lastType {
			d.lastType = string(d.typ)
		}
		ev.Type = d.lastType
	} else {
		ev.Type = "message"
	}
	if string(d.lastID) != d.id {
		d.id = string(d.lastID)
	}
	ev.ID = d.id
	return ev
}

// line returns the next line without its terminator. The slice is valid
// until the next call.
func (d *Decoder) line() ([]byte, error) {
	for {
		if d.skipLF && d.start < d.end {
			if d.buf[d.start] == '\n' {
				d.start++
				d.scanned = 0
			}
			d.skipLF = false
		}
		if !d.bomDone && d.end-d.start >= 3 {
			if bytes.HasPrefix(d.buf[d.start:d.end], []byte("\xEF\xBB\xBF")) {
				d.start += 3
				d.scanned = 0
			}
			d.bomDone = true
		}
		window := d.buf[d.start:d.end]
		// Bytes before d.scanned were already searched: a line that arrives
		// in many small reads is scanned once, not once per read.
		if i := bytes.IndexAny(window[d.scanned:], "\r\n"); i >= 0 {
			i += d.scanned
			d.scanned = 0
			line := window[:i]
			d.start += i + 1
			if window[i] == '\r' {
				d.skipLF = true
			}
			d.bomDone = true
			return line, nil
		}
		if d.err != nil {
			if d.end > d.start {
				// The last line has no terminator: the event is incomplete.
				d.start = d.end
			}
			return nil, d.err
		}
		d.scanned = len(window)
		if d.end-d.start > d.max {
			return nil, fmt.Errorf("%w (a line is over %d bytes)", ErrEventTooLarge, d.max)
		}
		d.fill()
	}
}

// fill reads more bytes, compacting or growing the buffer as needed.
func (d *Decoder) fill() {
	if d.start > 0 && (d.start == d.end || d.end == len(d.buf)) {
		n := copy(d.buf, d.buf[d.start:d.end])
		d.start, d.end = 0, n
	}
	if d.end == len(d.buf) {
		nb := make([]byte, len(d.buf)*2)
		copy(nb, d.buf[d.start:d.end])
		d.end -= d.start
		d.start = 0
		d.buf = nb
	}
	n, err := d.r.Read(d.buf[d.end:])
	d.end += n
	if err != nil {
		d.err = err
	}
}
