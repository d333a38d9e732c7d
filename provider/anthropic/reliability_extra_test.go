package anthropic

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
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

// TestEchoedKeyIsRedacted is a regression test (issue 7's canary key): a
// server or gateway that echoes the API key in an error body put the key
// into the error (and so into logs); like the OpenAI adapter, this one now
// redacts it, from HTTP errors, error documents and in-band stream errors.
func TestEchoedKeyIsRedacted(t *testing.T) {
	const key = "sk-ant-canary-0123456789"
	bodies := []struct {
		name, contentType string
		status            int
		body              string
	}{
		{"HTTP error", "application/json", 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + key + `"}}`},
		{"error document", "application/json", 200, `{"type":"error","error":{"type":"api_error","message":"bad key ` + key + `"}}`},
		{"in-band stream error", "text/event-stream", 200, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"" + key + "\"}}\n\n"},
	}
	for _, tc := range bodies {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.status)
				w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			m := New(WithAPIKey(key), WithBaseURL(srv.URL))
			req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
			var err error
			if tc.contentType == "text/event-stream" {
				_, err = llm.Collect(m.Stream(context.Background(), req))
			} else {
				_, err = m.Generate(context.Background(), req)
			}
			if err == nil || llm.KindOf(err) == llm.KindUnknown {
				t.Fatalf("err = %v, want a typed error", err)
			}
			if strings.Contains(err.Error(), key) {
				t.Fatalf("the error holds the API key: %v", err)
			}
		})
	}
}
