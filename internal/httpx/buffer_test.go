package httpx

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// watchReturns replaces putBuffer for the test: the buffers put back are
// sent on the returned channel (and not pooled).
func watchReturns(t *testing.T) <-chan *[]byte {
	t.Helper()
	ch := make(chan *[]byte, 16)
	old := putBuffer
	putBuffer = func(p *[]byte) { ch <- p }
	t.Cleanup(func() { putBuffer = old })
	return ch
}

func bufferOf(s string) *[]byte {
	p := GetBuffer(len(s))
	*p = append(*p, s...)
	return p
}

// returned waits a little for a buffer to be put back.
func returned(ch <-chan *[]byte, within time.Duration) *[]byte {
	select {
	case p := <-ch:
		return p
	case <-time.After(within):
		return nil
	}
}

func TestGetBuffer(t *testing.T) {
	p := GetBuffer(100)
	if len(*p) != 0 || cap(*p) < 100 {
		t.Fatalf("len %d cap %d", len(*p), cap(*p))
	}
	*p = append(*p, "x"...)
	PutBuffer(p)
	PutBuffer(nil)
	if q := GetBuffer(10); len(*q) != 0 || cap(*q) < 10 {
		t.Fatalf("len %d cap %d", len(*q), cap(*q))
	}
	if q := GetBuffer(1 << 20); cap(*q) < 1<<20 {
		t.Fatalf("cap %d", cap(*q))
	}
}

// TestPostBufferReturnsTheBufferWhenTheResponseIsClosed sends a body
// through a real server: the server gets it whole, with its length, and
// the buffer comes back once, after the response is closed.
func TestPostBufferReturnsTheBufferWhenTheResponseIsClosed(t *testing.T) {
	ch := watchReturns(t)
	body := bytes.Repeat([]byte(`{"a":"0123456789"},`), 50_000)
	var got []byte
	var length string
	srv := server(t, func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
		w.Write([]byte("data: x\n\n"))
	})
	// server drains the body before the handler: record it in a wrapper.
	c := &Client{Provider: "p", Endpoint: srv.URL, HTTP: &http.Client{Transport: recordingTransport{func(r *http.Request) {
		length = r.Header.Get("Content-Length") + "/" + strconv.FormatInt(r.ContentLength, 10)
		got, _ = io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(got))
		r.GetBody = nil
	}}}}
	p := bufferOf(string(body))
	resp, err := c.PostBuffer(context.Background(), p, true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, body) || length != "/"+strconv.Itoa(len(body)) {
		t.Fatalf("the server got %d bytes (length %s), want %d", len(got), length, len(body))
	}
	if q := returned(ch, 50*time.Millisecond); q != nil {
		t.Fatal("the buffer came back before the response was closed")
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body.Close()
	if q := returned(ch, 5*time.Second); q != p {
		t.Fatalf("returned %p, want %p", q, p)
	}
	if q := returned(ch, 50*time.Millisecond); q != nil {
		t.Fatal("the buffer came back twice")
	}
}

// recordingTransport lets a test see (and replace) the request before the
// default transport sends it.
type recordingTransport struct{ see func(*http.Request) }

func (rt recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rt.see(r)
	return http.DefaultTransport.RoundTrip(r)
}

// TestPostBufferOverTheWire checks the body the way net/http sends it
// (WriteTo on the connection, Content-Length from the request).
func TestPostBufferOverTheWire(t *testing.T) {
	ch := watchReturns(t)
	body := bytes.Repeat([]byte("0123456789abcdef"), 100_000)
	seen := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if r.ContentLength != int64(len(b)) {
			b = nil
		}
		seen <- b
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	c := &Client{Provider: "p", Endpoint: srv.URL}
	p := bufferOf(string(body))
	resp, err := c.PostBuffer(context.Background(), p, false)
	if err != nil {
		t.Fatal(err)
	}
	if b := <-seen; !bytes.Equal(b, body) {
		t.Fatalf("the server got %d bytes with its length, want %d", len(b), len(body))
	}
	resp.Body.Close()
	if q := returned(ch, 5*time.Second); q != p {
		t.Fatalf("returned %p, want %p", q, p)
	}
}

// TestPostBufferErrorsReturnTheBuffer: a failed status and a failed
// connection give the buffer back without a response to close.
func TestPostBufferErrorsReturnTheBuffer(t *testing.T) {
	ch := watchReturns(t)
	srv := server(t, func(w http.ResponseWriter, r *http.Request, release <-chan struct{}) {
		w.WriteHeader(http.StatusTooManyRequests)
	})
	c := &Client{Provider: "p", Endpoint: srv.URL}
	p := bufferOf(`{"x":1}`)
	if _, err := c.PostBuffer(context.Background(), p, true); err == nil {
		t.Fatal("no error")
	}
	if q := returned(ch, 5*time.Second); q != p {
		t.Fatalf("returned %p, want %p", q, p)
	}
	c = &Client{Provider: "p", Endpoint: "http://127.0.0.1:1/v1"}
	p = bufferOf(`{"x":1}`)
	if _, err := c.PostBuffer(context.Background(), p, false); err == nil {
		t.Fatal("no error")
	}
	if q := returned(ch, 5*time.Second); q != p {
		t.Fatalf("returned %p, want %p", q, p)
	}
}

// lateTransport answers at once and reads the body afterwards, in another
// goroutine: once through the request's Body (WriteTo, slowly) and once
// through a GetBody reader (Read), as a transport retrying on another
// connection would, then closes both.
type lateTransport struct {
	gate chan struct{} // the reads start when it is closed
	got  chan [2][]byte
}

func (lt lateTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	second, err := r.GetBody()
	if err != nil {
		return nil, err
	}
	go func() {
		<-lt.gate
		var a bytes.Buffer
		r.Body.(io.WriterTo).WriteTo(slowWriter{&a})
		b, _ := io.ReadAll(second)
		r.Body.Close()
		second.Close()
		lt.got <- [2][]byte{a.Bytes(), b}
	}()
	return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader([]byte("{}"))), Request: r}, nil
}

type slowWriter struct{ w io.Writer }

func (s slowWriter) Write(p []byte) (int, error) {
	time.Sleep(20 * time.Millisecond)
	return s.w.Write(p)
}

// TestPostBufferWaitsForLateReaders: the response is closed before the
// transport has read the body; the buffer comes back only after every
// reader is closed, and both read it whole.
func TestPostBufferWaitsForLateReaders(t *testing.T) {
	ch := watchReturns(t)
	lt := lateTransport{gate: make(chan struct{}), got: make(chan [2][]byte, 1)}
	c := &Client{Provider: "p", Endpoint: "http://x.invalid/v1", HTTP: &http.Client{Transport: lt}}
	want := bytes.Repeat([]byte("abc"), 1000)
	p := bufferOf(string(want))
	resp, err := c.PostBuffer(context.Background(), p, false)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if q := returned(ch, 50*time.Millisecond); q != nil {
		t.Fatal("the buffer came back while the transport still held readers")
	}
	close(lt.gate)
	got := <-lt.got
	if !bytes.Equal(got[0], want) || !bytes.Equal(got[1], want) {
		t.Fatalf("the readers got %d and %d bytes, want %d", len(got[0]), len(got[1]), len(want))
	}
	if q := returned(ch, 5*time.Second); q != p {
		t.Fatalf("returned %p, want %p", q, p)
	}
}

// TestBodyReaderClosedWhileReading closes readers from other goroutines
// while they are read: a closed reader reads nothing more, and the buffer
// comes back once, after the last read ended (run with -race).
func TestBodyReaderClosedWhileReading(t *testing.T) {
	for range 50 {
		ch := watchReturns(t)
		p := bufferOf(string(bytes.Repeat([]byte("x"), 64<<10)))
		s := &sharedBody{buf: p}
		var wg sync.WaitGroup
		for range 3 {
			r, err := s.reader()
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(2)
			go func() {
				defer wg.Done()
				buf := make([]byte, 1024)
				for {
					if _, err := r.Read(buf); err != nil {
						if err != io.EOF && !errors.Is(err, errBodyClosed) {
							t.Error(err)
						}
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				r.Close()
			}()
		}
		s.finish()
		wg.Wait()
		if q := returned(ch, 5*time.Second); q != p {
			t.Fatalf("returned %p, want %p", q, p)
		}
		if _, err := s.reader(); !errors.Is(err, errBodyClosed) {
			t.Fatalf("a reader after the return: %v", err)
		}
		if q := returned(ch, 10*time.Millisecond); q != nil {
			t.Fatal("the buffer came back twice")
		}
	}
}
