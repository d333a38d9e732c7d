package main_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// In agcore chat, /prompts lists the MCP servers' prompts and /prompt
// sends one, its arguments filled in, as the next turn's input (text, and
// its image attached).
func TestMCPPromptsAsChatCommands(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "v1"}, nil)
	srv.AddPrompt(&sdk.Prompt{Name: "review", Description: "Review a document", Arguments: []*sdk.PromptArgument{{Name: "doc", Required: true}, {Name: "tone"}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			a := req.Params.Arguments
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: "Review " + a["doc"] + " in a " + a["tone"] + " tone."}},
				{Role: "user", Content: &sdk.ImageContent{Data: []byte("\x89PNG\r\n\x1a\nfake"), MIMEType: "image/png"}},
			}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	model := newFake(t, openaiReply(turn{text: "Reviewed."}))
	c := newCLI(t).openai(model, "sk-test")
	tm := c.startTerminal("chat", "--raw", "--tools", "", "--mcp-url", ts.URL)
	tm.expect("> ")
	tm.send("/prompts\r")
	tm.expect("http/review doc* tone — Review a document")
	tm.expect("> ")
	tm.send("/prompt review tone=kind\r")
	tm.expect("the prompt http/review needs doc")
	tm.expect("> ")
	tm.send("/prompt review doc=\"design notes.md\" tone=kind\r")
	tm.expect("Reviewed.")
	tm.expect("> ")
	tm.send("\x04")
	if code := tm.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
	got := model.messages(0)
	if !strings.Contains(got, "Review design notes.md in a kind tone.") || !strings.Contains(got, "data:image/png;base64,") {
		t.Errorf("the turn sent: %s", got)
	}
	if len(model.got()) != 1 {
		t.Errorf("%d model calls, want 1: the listing and the refused prompt are answered by agcore", len(model.got()))
	}
}
