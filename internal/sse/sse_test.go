package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"
)

type got struct {
	Type, Data, ID string
	Retry          int
}

func decodeAll(t testing.TB, r io.Reader, opts Options) ([]got, error) {
	t.Helper()
	d := NewDecoder(r, opts)
	var out []got
	for {
		ev, err := d.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, got{ev.Type, string(ev.Data), ev.ID, ev.Retry})
	}
}

func TestDecoder(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 200<<10) // beyond bufio.Scanner's 64 KiB default
	tests := []struct {
		name string
		in   string
		want []got
	}{
		{"data line dispatched by blank line", "data: hello\n\n", []got{{"message", "hello", "", 0}}},
		{"CRLF line endings", "event: a\r\ndata: x\r\n\r\n", []got{{"a", "x", "", 0}}},
		{"lone CR line endings", "data: x\rdata: y\r\r", []got{{"message", "x\ny", "", 0}}},
		{"multi-line data joined with newline", "data: a\ndata: b\ndata\n\n", []got{{"message", "a\nb\n", "", 0}}},
		{"comment lines are ignored", ": keep-alive\n\ndata: x\n: inside\n\n", []got{{"message", "x", "", 0}}},
		{"space after colon is optional", "data:x\n\n", []got{{"message", "x", "", 0}}},
		{"only one leading space is removed", "data:  x\n\n", []got{{"message", " x", "", 0}}},
		{"event type applies to one event", "event: e\ndata: 1\n\ndata: 2\n\n", []got{{"e", "1", "", 0}, {"message", "2", "", 0}}},
		{"id persists across events", "id: 7\ndata: 1\n\ndata: 2\n\n", []got{{"message", "1", "7", 0}, {"message", "2", "7", 0}}},
		{"retry field is parsed", "retry: 3000\ndata: 1\n\n", []got{{"message", "1", "", 3000}}},
		{"malformed retry is ignored", "retry: soon\ndata: 1\n\n", []got{{"message", "1", "", 0}}},
		{"unknown fields are ignored", "foo: bar\ndata: 1\n\n", []got{{"message", "1", "", 0}}},
		{"event without data is not dispatched", "event: ping\n\ndata: 1\n\n", []got{{"message", "1", "", 0}}},
		{"leading BOM is skipped", "\xEF\xBB\xBFdata: 1\n\n", []got{{"message", "1", "", 0}}},
		{"unterminated last event is dropped", "data: 1\n\ndata: 2", []got{{"message", "1", "", 0}}},
		{"lines longer than 64 KiB", "data: " + long + "\n\n", []got{{"message", long, "", 0}}},
		{"empty stream", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "byte-at-a-time"} {
				var r io.Reader = strings.NewReader(tc.in)
				if mode != "whole" {
					r = iotest.OneByteReader(r)
				}
				out, err := decodeAll(t, r, Options{})
				if err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				if len(out) != len(tc.want) {
					t.Fatalf("%s: got %d events %+v, want %d", mode, len(out), out, len(tc.want))
				}
				for i := range out {
					if out[i] != tc.want[i] {
						t.Errorf("%s: event %d = %+v, want %+v", mode, i, out[i], tc.want[i])
					}
				}
			}
		})
	}
}

func TestDecoderMaxEventSize(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"one long line", "data: " + strings.Repeat("a", 2000) + "\n\n"},
		{"many data lines", strings.Repeat("data: "+strings.Repeat("a", 100)+"\n", 30) + "\n"},
		{"a long line without a terminator", strings.Repeat("b", 5000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeAll(t, strings.NewReader(tc.in), Options{MaxEventSize: 1024})
			if !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("err = %v, want ErrEventTooLarge", err)
			}
		})
	}
}

func TestDecoderReaderError(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: 1\n\ndata: 2\n"), iotest.ErrReader(boom))
	out, err := decodeAll(t, r, Options{})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
	if len(out) != 1 || out[0].Data != "1" {
		t.Fatalf("events before the error = %+v", out)
	}
}

type blockingBody struct {
	closed chan struct{}
}

func (b *blockingBody) Read(p []byte) (int, error) {
	<-b.closed
	return 0, errors.New("use of closed connection")
}
func (b *blockingBody) Close() error {
	select {
	case <-b.closed:
	default:
		close(b.closed)
	}
	return nil
}

func TestIdleReaderTimesOut(t *testing.T) {
	t.Parallel()
	body := &blockingBody{closed: make(chan struct{})}
	ir := NewIdleReader(body, 20*time.Millisecond)
	defer ir.Close()
	_, err := ir.Read(make([]byte, 10))
	if !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("err = %v, want ErrIdleTimeout", err)
	}
	if _, err := ir.Read(make([]byte, 10)); !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("second read err = %v, want ErrIdleTimeout", err)
	}
}

// TestIdleReaderSlowConsumerIsNotIdle runs in a synctest bubble, so the
// consumer's pauses are exact and a loaded machine cannot stretch a Read
// past the idle timeout.
func TestIdleReaderSlowConsumerIsNotIdle(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ir := NewIdleReader(io.NopCloser(strings.NewReader("abc")), 10*time.Millisecond)
		defer ir.Close()
		buf := make([]byte, 1)
		for i := 0; i < 3; i++ {
			if _, err := ir.Read(buf); err != nil {
				t.Fatal(err)
			}
			time.Sleep(15 * time.Millisecond) // the consumer is slow, not the server
		}
	})
}

func FuzzDecoder(f *testing.F) {
	for _, s := range []string{"data: x\n\n", "event: a\r\ndata: b\r\n\r\n", ": c\rdata:\r\r", "id: 1\nretry: 5\ndata: a\ndata: b\n\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		whole, err1 := decodeAll(t, bytes.NewReader(in), Options{MaxEventSize: 1 << 16})
		bytewise, err2 := decodeAll(t, iotest.OneByteReader(bytes.NewReader(in)), Options{MaxEventSize: 1 << 16})
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("errors differ: %v vs %v", err1, err2)
		}
		if err1 == nil && len(whole) != len(bytewise) {
			t.Fatalf("event counts differ: %d vs %d", len(whole), len(bytewise))
		}
		for i := range whole {
			if err1 == nil && whole[i] != bytewise[i] {
				t.Fatalf("event %d differs: %+v vs %+v", i, whole[i], bytewise[i])
			}
		}
	})
}

func BenchmarkDecoder(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 1000; i++ {
		sb.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n")
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		d := NewDecoder(strings.NewReader(in), Options{})
		for {
			if _, err := d.Next(); err != nil {
				break
			}
		}
	}
}
