package main_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// agcore serve --timeout bounds each turn (serve.Options.TurnTimeout): a
// model that never finishes gets the turn failed at the limit with the
// API's timeout error (504, code "timeout"; the failure event of a
// stream), the provider's request is cancelled, and nothing is stored.
func TestServeTimeoutBoundsATurn(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "blocking", true: "streamed"}[stream]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			gone := make(chan struct{})
			srv := newFake(t, func(w http.ResponseWriter, r *http.Request) {
				s := newSSE(w)
				s.data(map[string]any{"id": "c1", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": "thinking about it"}}}})
				<-r.Context().Done() // never finishes; the server must give up
				close(gone)
			})
			c := newCLI(t).openai(srv, "sk-test")
			base, cmd, lines := c.startServe(t, "--store", "memory:", "--timeout", "700ms")
			body := `{"model":"agcore","stream":` + map[bool]string{false: "false", true: "true"}[stream] + `,"messages":[{"role":"user","content":"hi"}]}`
			start := time.Now()
			client := &http.Client{Timeout: 15 * time.Second}
			resp, err := client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatalf("the turn did not end at --timeout 700ms: %v", err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(start)
			if took < 700*time.Millisecond || took > 10*time.Second {
				t.Errorf("the turn ended after %s; --timeout is 700ms", took.Round(time.Millisecond))
			}
			if !stream {
				var e struct {
					Error struct{ Code, Message string }
				}
				if resp.StatusCode != http.StatusGatewayTimeout || json.Unmarshal(got, &e) != nil || e.Error.Code != "timeout" {
					t.Errorf("status %d, body %s; want 504 with the code timeout", resp.StatusCode, got)
				}
			} else if !strings.Contains(string(got), `"code":"timeout"`) || strings.Contains(string(got), "data: [DONE]\n\ndata: [DONE]") {
				t.Errorf("the stream does not end with the timeout error:\n%s", got)
			}
			select {
			case <-gone:
			case <-time.After(10 * time.Second):
				t.Error("the provider's request was not cancelled at the timeout")
			}
			// Nothing was stored.
			sresp, err := http.Get(base + "/api/sessions")
			if err != nil {
				t.Fatal(err)
			}
			list, _ := io.ReadAll(sresp.Body)
			sresp.Body.Close()
			if sresp.StatusCode != 200 || !strings.Contains(string(list), `"sessions"`) || strings.Contains(string(list), `"id"`) {
				t.Errorf("a timed-out turn was stored: %s", list)
			}
			if log, err := interrupt(t, cmd, lines); err != nil {
				t.Fatalf("exit: %v\n%s", err, log)
			}
		})
	}
}
