package openai

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

// What compatible servers add to Chat Completions survives the turn:
// url_citation annotations, OpenRouter's reasoning_details, Gemini's
// thought signatures on tool calls. The shapes follow each provider's API
// reference.

// urlCitationAnnotation is a url_citation annotation of "Café ☕ news".
const urlCitationAnnotation = `"annotations":[{"type":"url_citation","url_citation":{"url":"https://example.com/n","title":"News","start_index":5,"end_index":11}}]`

// urlCitationStream streams "Café ☕ news", its annotation in a delta of
// its own.
func urlCitationStream() string {
	return frames(
		`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"Café ","annotations":[]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"content":"☕ news"}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{`+urlCitationAnnotation+`}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	)
}

func TestURLCitationAnnotations(t *testing.T) {
	// "Café ☕ news" — the annotation's indexes count code points: 5..11
	// covers "☕ news", which starts at byte 6 (é is two bytes) and ends at
	// byte 14 (☕ is three).
	const text = "Café ☕ news"
	ann := urlCitationAnnotation
	want := []llm.Citation{{Kind: llm.CitationURL, URL: "https://example.com/n", Title: "News", Start: 6, End: 14}}
	if got := text[6:14]; got != "☕ news" {
		t.Fatalf("test text is off: %q", got)
	}
	check := func(t *testing.T, resp *llm.Response) {
		t.Helper()
		tx := resp.Message.Content[0].(llm.Text)
		if tx.Text != text || !reflect.DeepEqual(tx.Citations, want) {
			t.Fatalf("text %+v, want citations %+v", tx, want)
		}
	}
	t.Run("stream", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(urlCitationStream()), 0)
		evs, resp, err := drain(t, testModel(srv).Stream(bg, userRequest()))
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp)
		n := 0
		for _, ev := range evs {
			if ev.Type == llm.EventCitation {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d citation events, want 1", n)
		}
	})
	t.Run("generate", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "application/json", []byte(
			`{"choices":[{"index":0,"message":{"role":"assistant","content":"`+text+`",`+ann+`},"finish_reason":"stop"}]}`), 0)
		resp, err := testModel(srv).Generate(bg, userRequest())
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp)
	})
}

func TestOpenRouterReasoningDetailsRoundTrip(t *testing.T) {
	srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(frames(
		`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Think","reasoning_details":[{"type":"reasoning.text","text":"Think","format":"anthropic-claude-v1","index":0}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"content":"","reasoning":"ing.","reasoning_details":[{"type":"reasoning.text","text":"ing.","signature":"sig-1","format":"anthropic-claude-v1","index":0}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"content":"Done."}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	)), 0)
	evs, resp, err := drain(t, testModel(srv).Stream(bg, userRequest()))
	if err != nil {
		t.Fatal(err)
	}
	checkEvents(t, evs, true)
	var ext *llm.Extension
	for _, b := range resp.Message.Content {
		if e, ok := b.(llm.Extension); ok && e.Kind == ReasoningDetailsKind {
			ext = &e
		}
	}
	if ext == nil {
		t.Fatalf("no reasoning_details in %+v", resp.Message.Content)
	}
	var items []map[string]any
	if err := json.Unmarshal(ext.Data, &items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0]["text"] != "Thinking." || items[0]["signature"] != "sig-1" || items[0]["format"] != "anthropic-claude-v1" {
		t.Fatalf("gathered %s, want one item with the joined text and the signature", ext.Data)
	}
	if resp.Message.Text() != "Done." {
		t.Fatalf("text %q", resp.Message.Text())
	}

	// Sent back on the assistant message to OpenRouter, never to OpenAI.
	req := userRequest()
	req.Messages = append(req.Messages, resp.Message, llm.UserText("next"))
	for _, tc := range []struct {
		name string
		m    *Model
		want bool
	}{
		{"openrouter", New(OpenRouter(), WithAPIKey("k"), WithModel("anthropic/claude-sonnet-4")), true},
		{"openai", New(WithAPIKey("k"), WithModel("gpt-4o")), false},
	} {
		body, err := tc.m.encodeRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(body), `"reasoning_details":[{`); got != tc.want {
			t.Errorf("%s: reasoning_details sent %v, want %v: %s", tc.name, got, tc.want, body)
		}
	}
}

// geminiSignedCall is a tool call with Gemini's thought signature, as its
// OpenAI-compatible endpoint sends it.
const geminiSignedCall = `{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"},"extra_content":{"google":{"thought_signature":"Cs0BAdHtim9"}}}`

// signedCallStream streams call (a tool call's JSON) as the answer.
func signedCallStream(call string) string {
	var m map[string]any
	json.Unmarshal([]byte(call), &m)
	m["index"] = 0
	b, _ := json.Marshal(m)
	return frames(
		`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[`+string(b)+`]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	)
}

func TestGeminiThoughtSignatureOnToolCalls(t *testing.T) {
	call := geminiSignedCall
	check := func(t *testing.T, resp *llm.Response) {
		t.Helper()
		tu := resp.Message.ToolUses()
		if len(tu) != 1 || tu[0].Signature != "Cs0BAdHtim9" || tu[0].Provider != "gemini" || tu[0].ID != "c1" {
			t.Fatalf("tool calls %+v, want the signature kept as Gemini's", tu)
		}
		// Sent back on the same call.
		req := userRequest()
		req.Messages = append(req.Messages, resp.Message, llm.ToolResultText("c1", "contents", false))
		body, err := New(WithAPIKey("k"), WithModel("gemini-3-pro-preview"), WithBaseURL("http://x.invalid/v1beta/openai")).encodeRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), `"extra_content":{"google":{"thought_signature":"Cs0BAdHtim9"}}`) {
			t.Fatalf("the signature was not sent back: %s", body)
		}
	}
	t.Run("stream", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(signedCallStream(call)), 0)
		_, resp, err := drain(t, testModel(srv).Stream(bg, userRequest()))
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp)
	})
	t.Run("generate", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "application/json", []byte(
			`{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[`+call+`]},"finish_reason":"tool_calls"}]}`), 0)
		resp, err := testModel(srv).Generate(bg, userRequest())
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp)
	})
	t.Run("another provider's signature is not sent", func(t *testing.T) {
		req := userRequest()
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse{ID: "c1", Name: "read", Input: json.RawMessage(`{}`), Signature: "x", Provider: "other"}}},
			llm.ToolResultText("c1", "r", false))
		body, _ := New(WithAPIKey("k"), WithModel("m")).encodeRequest(req, false)
		if strings.Contains(string(body), "extra_content") {
			t.Fatalf("sent: %s", body)
		}
	})
}
