package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/openai"
)

// A stand-in for an OpenAI-compatible server, so the example runs offline.
func fakeServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, chunk := range []string{
			`{"id":"c1","model":"demo","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"}}]}`,
			`{"id":"c1","model":"demo","choices":[{"index":0,"delta":{"content":" there!"}}]}`,
			`{"id":"c1","model":"demo","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"id":"c1","model":"demo","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`,
			`[DONE]`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", chunk)
		}
	}))
}

func Example() {
	srv := fakeServer()
	defer srv.Close()

	// Real code: openai.New() reads OPENAI_API_KEY and OPENAI_BASE_URL;
	// openai.New(openai.DeepSeek()) reads DEEPSEEK_API_KEY.
	m := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("sk-demo"), openai.WithModel("demo"))

	req := &llm.Request{Messages: []llm.Message{llm.UserText("Say hello")}}
	for ev, err := range m.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Type {
		case llm.EventTextDelta:
			fmt.Print(ev.Delta)
		case llm.EventComplete:
			fmt.Printf("\n%s, %d tokens in, %d out\n", ev.Response.FinishReason, ev.Response.Usage.InputTokens, ev.Response.Usage.OutputTokens)
		}
	}
	// Output:
	// Hello there!
	// stop, 9 tokens in, 3 out
}

func ExampleModel_Generate() {
	// A stand-in DeepSeek answering without streaming.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c2","model":"deepseek-chat","choices":[{"index":0,"message":{"role":"assistant","content":"4"},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":1,"prompt_cache_hit_tokens":16}}`)
	}))
	defer srv.Close()

	m := openai.New(openai.DeepSeek(), openai.WithBaseURL(srv.URL), openai.WithAPIKey("sk-demo"), openai.WithModel("deepseek-chat"))
	resp, err := m.Generate(context.Background(), &llm.Request{Messages: []llm.Message{llm.UserText("2+2?")}})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(resp.Message.Text(), resp.FinishReason, resp.Usage.CachedInputTokens, "cached")
	// Output:
	// 4 stop 16 cached
}
