package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRunStreamsFromTheConfiguredServer runs the example against a local
// OpenAI-compatible server named by OPENAI_BASE_URL.
func TestRunStreamsFromTheConfiguredServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"id":"1","model":"local","choices":[{"index":0,"delta":{"content":"Hello"}}]}`+"\n\n")
		io.WriteString(w, `data: {"id":"1","choices":[{"index":0,"delta":{"content":", world"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("DEEPSEEK_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	var out, diag strings.Builder
	if err := run(context.Background(), "local", "hi", &out, &diag); err != nil {
		t.Fatal(err)
	}
	if out.String() != "Hello, world\n" {
		t.Fatalf("out = %q (diag %q)", out.String(), diag.String())
	}
}

func TestRunWithoutProvider(t *testing.T) {
	for _, k := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "DEEPSEEK_API_KEY"} {
		t.Setenv(k, "")
	}
	if err := run(context.Background(), "", "hi", io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}
