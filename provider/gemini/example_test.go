package gemini_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/gemini"
)

// The example streams from a local server standing in for
// generativelanguage.googleapis.com; with a real key, New() alone reads
// GEMINI_API_KEY (or GOOGLE_API_KEY).
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, `data: {"candidates":[{"content":{"parts":[{"text":"Hello"}],"role":"model"},"index":0}],"modelVersion":"gemini-2.5-flash","responseId":"r1"}`+"\r\n\r\n"+
			`data: {"candidates":[{"content":{"parts":[{"text":", world."}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":4,"thoughtsTokenCount":20},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`+"\r\n\r\n")
	}))
	defer srv.Close()

	model := gemini.New(gemini.WithAPIKey("AIza-example"), gemini.WithBaseURL(srv.URL), gemini.WithModel("gemini-2.5-flash"))
	req := &llm.Request{Messages: []llm.Message{
		llm.SystemText("Be brief."),
		llm.UserText("Say hello."),
	}}
	for ev, err := range model.Stream(context.Background(), req) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch ev.Type {
		case llm.EventTextDelta:
			fmt.Print(ev.Delta)
		case llm.EventComplete:
			u := ev.Response.Usage
			fmt.Println()
			fmt.Println(ev.Response.FinishReason, u.InputTokens, u.OutputTokens, u.ReasoningTokens)
		}
	}
	// Output:
	// Hello, world.
	// stop 12 24 20
}
