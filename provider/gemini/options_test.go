package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
)

// TestEnvironmentConfiguresTheModel: the keys and base URLs Google's SDKs
// read, in their order, and options over the environment.
func TestEnvironmentConfiguresTheModel(t *testing.T) {
	var got recorded
	srv := serve(t, 200, "text/event-stream", finalChunk, 0, &got)
	for _, tc := range []struct {
		env     map[string]string
		opts    []Option
		wantKey string
	}{
		{map[string]string{"GEMINI_API_KEY": "gemini-key-0001", "GOOGLE_GEMINI_BASE_URL": srv.URL}, nil, "gemini-key-0001"},
		{map[string]string{"GOOGLE_API_KEY": "google-key-0001", "GEMINI_API_KEY": "gemini-key-0001", "GEMINI_BASE_URL": srv.URL}, nil, "gemini-key-0001"},
		{map[string]string{"GOOGLE_API_KEY": "google-key-0001", "GEMINI_BASE_URL": srv.URL}, nil, "google-key-0001"},
		{map[string]string{"GEMINI_API_KEY": "gemini-key-0001", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1"}, []Option{WithAPIKey("option-key-0001"), WithBaseURL(srv.URL)}, "option-key-0001"},
	} {
		for _, k := range []string{"GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL"} {
			t.Setenv(k, tc.env[k])
		}
		if _, _, err := drain(t, New(tc.opts...).Stream(bg, fixtureRequest)); err != nil {
			t.Fatal(err)
		}
		if k := got.header.Get("X-Goog-Api-Key"); k != tc.wantKey {
			t.Errorf("%v: sent key %q, want %q", tc.env, k, tc.wantKey)
		}
		if !strings.HasPrefix(got.url, "/v1beta/models/"+DefaultModel+":streamGenerateContent") {
			t.Errorf("posted to %s", got.url)
		}
	}
}

// TestInfoComesFromTheCatalog: Google's endpoints are priced as "google",
// any other base URL keeps the limits without the price.
func TestInfoComesFromTheCatalog(t *testing.T) {
	info := New(WithAPIKey("k"), WithModel("gemini-2.5-flash")).Info()
	if info.Provider != "google" || info.ContextWindow != 1_048_576 || info.MaxOutputTokens != 65_536 || info.Price == nil || info.Price.Input != 0.30 {
		t.Errorf("Gemini API: %+v", info)
	}
	info = New(WithAPIKey("k"), WithModel("gemini-2.5-pro"), WithVertex("p", "us-central1")).Info()
	if info.Provider != "google" || info.Price == nil || info.Price.LongContext == nil {
		t.Errorf("Vertex AI: %+v", info)
	}
	info = New(WithAPIKey("k"), WithModel("gemini-2.5-pro"), WithBaseURL("https://gateway.example.com")).Info()
	if info.Provider != "compatible" || info.ContextWindow != 1_048_576 || info.Price != nil {
		t.Errorf("a gateway: %+v", info)
	}
	c := catalog.Default()
	c.Add(llm.ModelInfo{Provider: "google", Name: "gemini-custom", ContextWindow: 32_000})
	if info := New(WithAPIKey("k"), WithModel("gemini-custom"), WithCatalog(c)).Info(); info.ContextWindow != 32_000 {
		t.Errorf("WithCatalog: %+v", info)
	}
	if info := New(WithAPIKey("k"), WithModel("unknown-model")).Info(); info.Known() || info.Name != "unknown-model" {
		t.Errorf("an unknown model: %+v", info)
	}
}

// TestRequestMappingRules covers the mapping rules one at a time, on the
// body sent.
func TestRequestMappingRules(t *testing.T) {
	user := llm.UserText("hi")
	tool := []llm.ToolDefinition{{Name: "f"}}
	tests := []struct {
		name string
		req  *llm.Request
		opts []Option
		want []string // substrings of the compact body
		not  []string
	}{
		{"auto tool choice sends no toolConfig", &llm.Request{Messages: []llm.Message{user}, Tools: tool}, nil,
			[]string{`"functionDeclarations":[{"name":"f","parametersJsonSchema":{"type":"object","properties":{}}}]`}, []string{"toolConfig"}},
		{"none", &llm.Request{Messages: []llm.Message{user}, Tools: tool, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}}, nil,
			[]string{`"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}`}, nil},
		{"none without tools sends nothing", &llm.Request{Messages: []llm.Message{user}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}}, nil,
			nil, []string{"toolConfig"}},
		{"required", &llm.Request{Messages: []llm.Message{user}, Tools: tool, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceRequired}}, nil,
			[]string{`"functionCallingConfig":{"mode":"ANY"}`}, nil},
		{"json_object", &llm.Request{Messages: []llm.Message{user}, ResponseFormat: &llm.ResponseFormat{Type: "json_object"}}, nil,
			[]string{`"generationConfig":{"responseMimeType":"application/json"}`}, nil},
		{"effort is a thinking level", &llm.Request{Messages: []llm.Message{user}, Reasoning: &llm.Reasoning{Effort: "low"}}, nil,
			[]string{`"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"low"}`}, nil},
		{"WithMaxTokens is the default", &llm.Request{Messages: []llm.Message{user}}, []Option{WithMaxTokens(123)},
			[]string{`"generationConfig":{"maxOutputTokens":123}`}, nil},
		{"the request's MaxTokens wins", &llm.Request{Messages: []llm.Message{user}, MaxTokens: 7}, []Option{WithMaxTokens(123)},
			[]string{`"maxOutputTokens":7`}, nil},
		{"nothing to configure sends no generationConfig", &llm.Request{Messages: []llm.Message{user}}, nil,
			nil, []string{"generationConfig", "systemInstruction", "tools"}},
		{"built-in tools", &llm.Request{Messages: []llm.Message{user}}, []Option{WithBuiltinTool("codeExecution"), WithBuiltinTool("urlContext")},
			[]string{`"tools":[{"codeExecution":{}},{"urlContext":{}}]`}, nil},
		{"Extra replaces and removes fields", &llm.Request{Messages: []llm.Message{user}, MaxTokens: 5,
			Extra: map[string]any{"cachedContent": "cachedContents/abc", "generationConfig": nil}}, nil,
			[]string{`"cachedContent":"cachedContents/abc"`}, []string{"generationConfig"}},
		{"consecutive messages of a role merge", &llm.Request{Messages: []llm.Message{user, llm.UserText("again"), llm.AssistantText("a"), llm.AssistantText("b")}}, nil,
			[]string{`"contents":[{"role":"user","parts":[{"text":"hi"},{"text":"again"}]},{"role":"model","parts":[{"text":"a"},{"text":"b"}]}]`}, nil},
		{"empty texts and others' reasoning are left out", &llm.Request{Messages: []llm.Message{user, {Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Text{}, llm.Thinking{Text: "deepseek reasoning"}, llm.Thinking{Text: "r", Signature: "s", Provider: "openai-responses", ID: "rs_1"},
			llm.RedactedThinking{Data: "x"}, llm.Extension{Kind: "web_search_call", Data: json.RawMessage(`{"type":"web_search_call"}`)},
			llm.Extension{Kind: groundingKind, Data: json.RawMessage(`{"webSearchQueries":["q"]}`)}, llm.Text{Text: "ok"}}}}}, nil,
			[]string{`{"role":"model","parts":[{"text":"ok"}]}`}, []string{"reasoning", "rs_1", "web_search", "webSearchQueries"}},
		{"an assistant message with nothing to send is left out", &llm.Request{Messages: []llm.Message{user, {Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Thinking{Text: "t", Signature: "anthropic-sig"}}}, llm.UserText("next")}}, nil,
			[]string{`"contents":[{"role":"user","parts":[{"text":"hi"},{"text":"next"}]}]`}, []string{"anthropic-sig"}},
		{"a signed Gemini call keeps its own signature; no placeholder", &llm.Request{Messages: []llm.Message{user, {Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse{ID: "gcall_r_0", Name: "f", Input: json.RawMessage(`{}`), Signature: "own", Provider: "gemini"},
			llm.ToolUse{ID: "toolu_1", Name: "f", Input: json.RawMessage(`"cut`)}}}}}, nil,
			[]string{`{"functionCall":{"name":"f","args":{}},"thoughtSignature":"own"},{"functionCall":{"name":"f","args":{}}}`}, []string{skipSignature}},
		{"another provider's signature is not sent", &llm.Request{Messages: []llm.Message{user, {Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse{ID: "call_1", Name: "f", Signature: "openrouter-sig", Provider: "openrouter"}}}}}, nil,
			[]string{`{"functionCall":{"name":"f","args":{}},"thoughtSignature":"` + skipSignature + `"}`}, []string{"openrouter-sig"}},
		{"media by URL and data: URL", &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
			llm.Image{URL: "https://example.com/a.jpg", MediaType: "image/jpeg"}, llm.Audio{URL: "data:audio/wav;base64,UklGRg=="}, llm.File{Data: []byte("%PDF-1.4")}}}}}, nil,
			[]string{`{"fileData":{"mimeType":"image/jpeg","fileUri":"https://example.com/a.jpg"}}`, `{"inlineData":{"mimeType":"audio/wav","data":"UklGRg=="}}`, `{"inlineData":{"mimeType":"application/pdf","data":"JVBERi0xLjQ="}}`}, nil},
		{"a nested tool result", &llm.Request{Messages: []llm.Message{user, {Role: llm.RoleAssistant, Content: []llm.Block{
			llm.ToolUse{ID: "3ae8iwca", Name: "f", Provider: "gemini"}}}, {Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResult{ToolUseID: "3ae8iwca", Content: []llm.Block{llm.Text{Text: "a"}, llm.Text{Text: "b"}}}}}}}, nil,
			[]string{`{"functionResponse":{"id":"3ae8iwca","name":"f","response":{"output":"ab"}}}`}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := New(append([]Option{WithAPIKey("k")}, tc.opts...)...).encodeRequest(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			s := string(body)
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("body lacks %s:\n%s", w, s)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(s, n) {
					t.Errorf("body holds %s:\n%s", n, s)
				}
			}
		})
	}
}

// TestRequestsTheAPICannotExpressAreInvalid: nothing is sent, and the
// error says which message.
func TestRequestsTheAPICannotExpressAreInvalid(t *testing.T) {
	call := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: "c1", Name: "f"}}}
	for _, tc := range []struct {
		name string
		req  *llm.Request
	}{
		{"a result for no call", &llm.Request{Messages: []llm.Message{llm.ToolResultText("nope", "x", false)}}},
		{"an image in a system message", &llm.Request{Messages: []llm.Message{{Role: llm.RoleSystem, Content: []llm.Block{llm.Image{Data: pngBytes}}}}}},
		{"an unknown role", &llm.Request{Messages: []llm.Message{{Role: "critic"}}}},
		{"a tool call in a user message", &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.ToolUse{ID: "x", Name: "f"}}}}}},
		{"an image without data", &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Image{}}}}}},
		{"a data: URL that is not base64", &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Image{URL: "data:image/png,abc"}}}}}},
		{"an image by URL in a tool result", &llm.Request{Messages: []llm.Message{call, {Role: llm.RoleTool, ToolCallID: "c1", Content: []llm.Block{llm.Image{URL: "https://x/y.png"}}}}}},
		{"a tool without a name", &llm.Request{Tools: []llm.ToolDefinition{{}}}},
		{"a tool choice without a name", &llm.Request{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool}}},
		{"an unknown tool choice", &llm.Request{ToolChoice: llm.ToolChoice{Mode: "maybe"}}},
		{"json_schema without a schema", &llm.Request{ResponseFormat: &llm.ResponseFormat{Type: "json_schema"}}},
		{"an unknown response format", &llm.Request{ResponseFormat: &llm.ResponseFormat{Type: "yaml"}}},
		{"an Extra that does not encode", &llm.Request{Extra: map[string]any{"x": func() {}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(WithAPIKey("k")).encodeRequest(tc.req)
			mustKind(t, err, llm.KindInvalidRequest)
		})
	}
}
