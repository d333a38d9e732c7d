package anthropic_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/anthropic"
)

// The example streams from a local server standing in for
// api.anthropic.com; with a real key, New() alone reads ANTHROPIC_API_KEY.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\n"+
			`data: {"type":"message_start","message":{"id":"msg_1","model":"claude-sonnet-4-5","usage":{"input_tokens":12,"output_tokens":1}}}`+"\n\n"+
			"event: content_block_start\n"+
			`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`+"\n\n"+
			"event: content_block_delta\n"+
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`+"\n\n"+
			"event: content_block_delta\n"+
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world."}}`+"\n\n"+
			"event: content_block_stop\n"+
			`data: {"type":"content_block_stop","index":0}`+"\n\n"+
			"event: message_delta\n"+
			`data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}`+"\n\n"+
			"event: message_stop\n"+
			`data: {"type":"message_stop"}`+"\n\n")
	}))
	defer srv.Close()

	model := anthropic.New(anthropic.WithAPIKey("sk-ant-example"), anthropic.WithBaseURL(srv.URL))
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
			fmt.Println()
			fmt.Println(ev.Response.FinishReason, ev.Response.Usage.InputTokens, ev.Response.Usage.OutputTokens)
		}
	}
	// Output:
	// Hello, world.
	// stop 12 4
}
