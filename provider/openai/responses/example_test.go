package responses_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/openai/responses"
)

// A stand-in for OpenAI's Responses API, so the example runs offline.
func fakeServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"response.created","response":{"id":"resp_1","model":"gpt-5","status":"in_progress","output":[]}}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}`,
			`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAA..."}}`,
			`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
			`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"Hello"}`,
			`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":" there!"}`,
			`{"type":"response.completed","response":{"id":"resp_1","model":"gpt-5","status":"completed","usage":{"input_tokens":9,"output_tokens":3}}}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
	}))
}

func ExampleNew() {
	srv := fakeServer()
	defer srv.Close()

	// Real code: responses.New(responses.WithModel("gpt-5")) reads
	// OPENAI_API_KEY and OPENAI_BASE_URL.
	m := responses.New(responses.WithBaseURL(srv.URL+"/v1"), responses.WithAPIKey("sk-demo"), responses.WithModel("gpt-5"))

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
			// The reasoning item is kept, encrypted, for the next request.
			th := ev.Response.Message.Content[0].(llm.Thinking)
			fmt.Printf("\n%s, %d tokens in, %d out; reasoning %s from %s\n", ev.Response.FinishReason,
				ev.Response.Usage.InputTokens, ev.Response.Usage.OutputTokens, th.ID, th.Provider)
		}
	}
	// Output:
	// Hello there!
	// stop, 9 tokens in, 3 out; reasoning rs_1 from openai-responses
}
