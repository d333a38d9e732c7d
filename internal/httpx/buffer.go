package httpx

import (
	"errors"
	"io"
	"sync"
)

// Request bodies in reused buffers. An adapter that writes its whole
// request body for every call (a long conversation's history, again and
// again) can write it into a buffer from GetBuffer and send it with
// Client.PostBuffer: the buffer goes back to the pool once nothing can read
// it any more, so the next call writes into it instead of allocating (and
// zeroing) as much again, and the garbage collector has that much less to
// do.
//
// "Nothing can read it": net/http reads a request body in its own
// goroutine, may go on after the response has arrived, may close the body
// from another goroutine while it is being written, and may ask GetBody
// for fresh readers to retry the request on another connection. So the
// body is handed out as readers that count themselves: the buffer is
// returned only when the caller is done with the response, every reader
// handed out has been closed, and no read is under way; a reader that is
// closed reads nothing more. A reader the transport never closes keeps the
// buffer out of the pool, where the garbage collector frees it as any
// other.

var bufPool sync.Pool // of *[]byte

// putBuffer puts a buffer back into the pool (a variable, so tests can
// watch the returns).
var putBuffer = func(p *[]byte) { bufPool.Put(p) }

// GetBuffer returns an empty buffer with room for at least n bytes: one
// from the pool when it holds one large enough, else a new one. Write into
// it by appending to *p (storing the grown slice back in *p), then give it
// to Client.PostBuffer or back to PutBuffer.
func GetBuffer(n int) *[]byte {
	if p, _ := bufPool.Get().(*[]byte); p != nil && cap(*p) >= n {
		*p = (*p)[:0]
		return p
	}
	// A pooled buffer too small for this body is dropped: the larger one
	// made here takes its place when it is put back. It has an eighth
	// more room, so that the next bodies of a growing conversation (each
	// call sends the last one's messages and a few more) fit it too.
	b := make([]byte, 0, n+n/8)
	return &b
}

// PutBuffer puts a buffer from GetBuffer back into the pool; the caller
// must not use it afterwards.
func PutBuffer(p *[]byte) {
	if p != nil {
		putBuffer(p)
	}
}

// errBodyClosed is the error of a read from a closed body reader, or of
// GetBody once the buffer is back in the pool (which happens only after
// the response was closed: no transport asks then).
var errBodyClosed = errors.New("httpx: request body read after it was closed")

// sharedBody counts the readers of one pooled body (see the top of the
// file).
type sharedBody struct {
	mu       sync.Mutex
	buf      *[]byte // nil once returned to the pool
	readers  int     // readers handed out and not closed
	active   int     // reads under way
	finished bool    // the caller is done with the response
}

// reader returns a new reader of the whole body (net/http's GetBody).
func (s *sharedBody) reader() (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buf == nil {
		return nil, errBodyClosed
	}
	s.readers++
	return &bodyReader{s: s}, nil
}

// finish records that the caller is done with the response.
func (s *sharedBody) finish() {
	s.mu.Lock()
	s.finished = true
	s.releaseLocked()
	s.mu.Unlock()
}

// releaseLocked returns the buffer to the pool if nothing can read it.
func (s *sharedBody) releaseLocked() {
	if s.finished && s.readers == 0 && s.active == 0 && s.buf != nil {
		PutBuffer(s.buf)
		s.buf = nil
	}
}

// start begins a read of r's rest: the bytes to read, or an error.
func (s *sharedBody) start(r *bodyReader) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.closed {
		return nil, errBodyClosed
	}
	data := (*s.buf)[r.off:] // open readers keep buf
	if len(data) == 0 {
		return nil, io.EOF
	}
	s.active++
	return data, nil
}

// end ends a read that consumed n bytes.
func (s *sharedBody) end(r *bodyReader, n int) {
	s.mu.Lock()
	s.active--
	r.off += n
	s.releaseLocked()
	s.mu.Unlock()
}

// bodyReader is one reader of a shared body. Its fields are guarded by
// the body's mutex; like any io.Reader, it is read by one goroutine at a
// time, but may be closed by another.
type bodyReader struct {
	s      *sharedBody
	off    int
	closed bool
}

func (r *bodyReader) Read(p []byte) (int, error) {
	data, err := r.s.start(r)
	if err != nil {
		return 0, err
	}
	n := copy(p, data)
	r.s.end(r, n)
	return n, nil
}

// WriteTo writes the rest of the body in one Write, as bytes.Reader does,
// so that the transport sends it without copying it first.
func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	data, err := r.s.start(r)
	if err == io.EOF {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := w.Write(data)
	r.s.end(r, n)
	return int64(n), err
}

func (r *bodyReader) Close() error {
	s := r.s
	s.mu.Lock()
	if !r.closed {
		r.closed = true
		s.readers--
		s.releaseLocked()
	}
	s.mu.Unlock()
	return nil
}

// finishBody is a response body whose Close also tells the shared request
// body that the caller is done.
type finishBody struct {
	io.ReadCloser
	s    *sharedBody
	once sync.Once
}

func (b *finishBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.s.finish)
	return err
}
