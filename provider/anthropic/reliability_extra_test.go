package anthropic

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
)

// TestGenerateStalledBodyIsIdleTimeout is a regression test (issue 7's
// fault matrix): a server that sends the headers of a blocking answer and
// then nothing made Generate hang until the caller's deadline; the idle
// timeout now bounds the body's reading, as it does for streams.
func TestGenerateStalledBodyIsIdleTimeout(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer srv.Close()
	defer close(stop)
	m := New(WithAPIKey("k"), WithBaseURL(srv.URL), WithIdleTimeout(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := m.Generate(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}})
	if !errors.Is(err, llm.ErrIdleTimeout) {
		t.Fatalf("err = %v, want llm.ErrIdleTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Generate took %v to give up on a stalled body", d)
	}
}

// TestStreamHeaderWaitIsIdleTimeout is a regression test (issue 7's fault
// matrix): a server that accepts a streaming request and never sends its
// headers hung the stream until the caller's deadline; the idle timeout now
// bounds that wait, as it does in the OpenAI adapter.
func TestStreamHeaderWaitIsIdleTimeout(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer srv.Close()
	defer close(stop)
	m := New(WithAPIKey("k"), WithBaseURL(srv.URL), WithIdleTimeout(100*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := llm.Collect(m.Stream(ctx, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}))
	if !errors.Is(err, llm.ErrIdleTimeout) {
		t.Fatalf("err = %v, want llm.ErrIdleTimeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Stream took %v to give up waiting for headers", d)
	}
}
