package faultserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/internal/testkit/faultserver"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/anthropic"
	"github.com/agcore/agcore/provider/gemini"
	"github.com/agcore/agcore/provider/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func model(t *testing.T, s *faultserver.Server, f faultserver.Format) llm.Model {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr}
	switch f {
	case faultserver.Anthropic:
		return anthropic.New(anthropic.WithAPIKey("k"), anthropic.WithBaseURL(s.AnthropicBaseURL()), anthropic.WithHTTPClient(c), anthropic.WithModel("m"))
	case faultserver.Gemini:
		return gemini.New(gemini.WithAPIKey("k"), gemini.WithBaseURL(s.GeminiBaseURL()), gemini.WithHTTPClient(c), gemini.WithModel("m"))
	}
	return openai.New(openai.WithAPIKey("k"), openai.WithBaseURL(s.OpenAIBaseURL()), openai.WithHTTPClient(c), openai.WithModel("m"))
}

// TestReplyParsesInBothFormats proves the server's correct answers are
// what real adapters accept: text in chunks, then tool calls, blocking and
// streamed, in both wire formats.
func TestReplyParsesInBothFormats(t *testing.T) {
	reply := faultserver.Reply{
		Text:   "héllo wörld, this is a streamed answer",
		Chunks: 7,
		ToolCalls: []faultserver.ToolCall{
			{ID: "c1", Name: "add", Args: `{"a":1,"b":2}`},
			{ID: "c2", Name: "noargs"},
		},
		InputTokens: 42,
	}
	for _, f := range []faultserver.Format{faultserver.OpenAI, faultserver.Anthropic, faultserver.Gemini} {
		for _, stream := range []bool{false, true} {
			t.Run(f.String()+map[bool]string{false: "/blocking", true: "/stream"}[stream], func(t *testing.T) {
				s := faultserver.New()
				defer s.Close()
				s.Enqueue(faultserver.Step{Reply: reply})
				m := model(t, s, f)
				req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
				var resp *llm.Response
				var err error
				deltas := 0
				if stream {
					for ev, e := range m.Stream(t.Context(), req) {
						if e != nil {
							err = e
							break
						}
						if ev.Type == llm.EventTextDelta {
							deltas++
						}
						if ev.Type == llm.EventComplete {
							resp = ev.Response
						}
					}
				} else {
					resp, err = m.Generate(t.Context(), req)
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.Message.Text(); got != reply.Text {
					t.Errorf("text %q, want %q", got, reply.Text)
				}
				if stream && deltas != reply.Chunks {
					t.Errorf("%d text deltas, want %d", deltas, reply.Chunks)
				}
				uses := resp.Message.ToolUses()
				if len(uses) != 2 || uses[0].ID != "c1" || uses[1].Name != "noargs" || !json.Valid(uses[0].Input) {
					t.Errorf("tool uses %+v", uses)
				}
				if resp.FinishReason != llm.FinishToolUse || resp.Usage.InputTokens != 42 {
					t.Errorf("finish %q, usage %+v", resp.FinishReason, resp.Usage)
				}
				if s.Requests() != 1 || s.Calls()[0].Format != f || s.Calls()[0].Stream != stream || s.Calls()[0].Model != "m" {
					t.Errorf("calls %+v", s.Calls())
				}
			})
		}
	}
}

// TestScriptThenHandler proves the order of decisions: the script first,
// then the handler, which sees the request's tool results.
func TestScriptThenHandler(t *testing.T) {
	var seen []int
	s := faultserver.New(faultserver.WithHandler(func(r faultserver.Request) faultserver.Step {
		seen = append(seen, r.ToolResults)
		return faultserver.Step{Fault: faultserver.Status, Status: 418}
	}))
	defer s.Close()
	s.Enqueue(faultserver.Step{Fault: faultserver.Status, Status: 429, RetryAfter: 1500 * time.Millisecond})
	body := `{"model":"m","messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"a","content":"1"}]}`
	for i, want := range []int{429, 418} {
		resp, err := http.Post(s.OpenAIBaseURL()+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("request %d: status %d, want %d", i, resp.StatusCode, want)
		}
		if i == 0 && resp.Header.Get("Retry-After") != "2" {
			t.Fatalf("Retry-After %q, want 2 (seconds, rounded up)", resp.Header.Get("Retry-After"))
		}
	}
	if len(seen) != 1 || seen[0] != 1 {
		t.Fatalf("handler saw tool results %v, want [1]", seen)
	}
	http.DefaultClient.CloseIdleConnections()
}

// TestCloseEndsStalls proves Close does not wait for stalled responses.
func TestCloseEndsStalls(t *testing.T) {
	s := faultserver.New()
	s.Enqueue(faultserver.Step{Fault: faultserver.StallHeaders}, faultserver.Step{Fault: faultserver.Stall})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.URL+"/v1/messages", strings.NewReader(`{"stream":true}`))
			resp, err := tr.RoundTrip(req)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	for s.Requests() < 2 {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waits for stalled responses")
	}
	for range 2 {
		<-errs // either error or a cut body: both are fine, as long as they return
	}
}

// TestResetIsConnectionError proves Reset cuts the connection: the client
// sees an error, not a clean end.
func TestResetIsConnectionError(t *testing.T) {
	s := faultserver.New()
	defer s.Close()
	s.Enqueue(faultserver.Step{Fault: faultserver.Reset, Bytes: 5, Reply: faultserver.Reply{Text: strings.Repeat("a", 1000)}})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Post(s.OpenAIBaseURL()+"/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil || errors.Is(err, io.EOF) {
		t.Fatalf("read %d bytes and %v, want a connection error", len(b), err)
	}
	if len(b) > 5 {
		t.Fatalf("read %d bytes, want at most 5", len(b))
	}
}
