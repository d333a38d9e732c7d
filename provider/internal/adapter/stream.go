package adapter

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

// The call loop of the OpenAI dialects (provider/openai,
// provider/openai/responses): a blocking answer read and decoded, and a
// streamed one read event by event, or replayed from one JSON document
// when the server ignored "stream": true.

// ErrStreamDone is what an [Events] reader returns after its last event.
var ErrStreamDone = errors.New("stream done")

// Events reads the events of a stream: Next returns the next one,
// ErrStreamDone after the last, or the error that ends the stream.
type Events interface {
	Next() (llm.Event, error)
}

// Queue holds the events a stream reader has decoded and not yet handed
// out. The reader reads from its body only when the queue is empty (see
// Next), so a slow consumer slows the reads and nothing runs in the
// background. The zero Queue is empty.
type Queue struct {
	events []llm.Event
	head   int
	done   bool
}

// Push queues ev.
func (q *Queue) Push(ev llm.Event) { q.events = append(q.events, ev) }

// Finish marks the stream's end: once the events queued are handed out,
// Next returns ErrStreamDone.
func (q *Queue) Finish() { q.done = true }

// Next returns the next queued event. While none is queued it calls pull,
// which reads the stream on and queues what that yields (perhaps
// nothing), and returns pull's error as it is; ErrStreamDone after the
// last event.
func (q *Queue) Next(pull func() error) (llm.Event, error) {
	for q.head >= len(q.events) {
		if q.done {
			return llm.Event{}, ErrStreamDone
		}
		q.events, q.head = q.events[:0], 0
		if err := pull(); err != nil {
			return llm.Event{}, err
		}
	}
	ev := q.events[q.head]
	q.events[q.head] = llm.Event{} // drop the references the queue holds
	q.head++
	return ev, nil
}

// Decode maps a whole response body, received with an HTTP status, to the
// answer.
type Decode func(data []byte, status int) (*llm.Response, error)

// Answer reads the body of a blocking call's response (at most maxBody
// bytes), closes it and decodes it. A failed read is typed by the
// transport.
func Answer(ctx context.Context, c *httpx.Client, resp *http.Response, maxBody int64, decode Decode) (*llm.Response, error) {
	defer resp.Body.Close()
	data, err := httpx.ReadBody(c.Provider, resp.Body, maxBody)
	if err != nil {
		return nil, c.TransportError(ctx, err)
	}
	return decode(data, resp.StatusCode)
}

// Pump yields the events of a streamed call's response and closes its
// body (which also cancels the request): an event stream is read with the
// reader open makes until ErrStreamDone, or until a failure, which ends the
// stream typed by the transport; a JSON document in its place (a server
// that ignored "stream": true) is decoded and replayed as a stream. Pump
// returns when yield returns false.
func Pump(ctx context.Context, c *httpx.Client, resp *http.Response, maxBody int64, decode Decode, open func(io.Reader) Events, yield func(llm.Event, error) bool) {
	defer resp.Body.Close()
	if !isEventStream(resp.Header.Get("Content-Type")) {
		r, err := Answer(ctx, c, resp, maxBody, decode)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		for ev, err := range llm.StreamOf(r) {
			if !yield(ev, err) {
				return
			}
		}
		return
	}
	s := open(resp.Body)
	for {
		ev, err := s.Next()
		if err != nil {
			if err != ErrStreamDone {
				yield(llm.Event{}, c.TransportError(ctx, err))
			}
			return
		}
		if !yield(ev, nil) {
			return
		}
	}
}

func isEventStream(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		// No or a malformed Content-Type: assume the stream we asked for.
		return true
	}
	return mt != "application/json"
}
