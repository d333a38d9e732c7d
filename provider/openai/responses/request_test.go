package responses

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

// pngPixel is a 1x1 PNG.
var pngPixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// conversation is the neutral conversation of the request golden: a
// system prompt; an exchange whose thinking came from Anthropic (signed by
// Anthropic, so left out here); a user message with an image and two
// documents; an assistant turn with this API's reasoning (encrypted), a web
// search the server ran, text and two parallel tool calls; their results,
// one an error; the answer, with an extension of another provider; and a
// follow-up question.
func conversation() *llm.Request {
	temp := 0.2
	return &llm.Request{
		Messages: []llm.Message{
			llm.SystemText("You are a weather assistant."),
			llm.UserText("hello"),
			{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.Thinking{Text: "A greeting.", Signature: "anthropic-sig", Provider: "anthropic"},
				llm.RedactedThinking{Data: "opaque"},
				llm.Text{Text: "Hi! Ask me about the weather."},
			}},
			{Role: llm.RoleUser, Content: []llm.Block{
				llm.Text{Text: "Where was this taken, and what is the weather there and in Paris?"},
				llm.Image{Data: pngPixel, MediaType: "image/png", Detail: "low"},
				llm.File{FileID: "file-abc123"},
				llm.File{Data: []byte("%PDF-1.4 tiny"), MediaType: "application/pdf", Name: "notes.pdf"},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.Thinking{Text: "**Locating the photo**\n\nThe photo shows Berlin.", Signature: "gAAAAAB-encrypted", Provider: Provider, ID: "rs_1"},
				llm.Extension{Kind: "openai.web_search_call", Data: json.RawMessage(`{"id":"ws_1","type":"web_search_call","status":"completed","action":{"type":"search","query":"Berlin weather"}}`)},
				llm.Text{Text: "Let me check "},
				llm.Text{Text: "both cities."},
				llm.ToolUse{ID: "call_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Berlin"}`)},
				llm.ToolUse{ID: "call_2", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
			}},
			llm.ToolResultText("call_1", "Sunny, 21°C", false),
			llm.ToolResultText("call_2", "weather service unavailable", true),
			{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.Text{Text: "Berlin is sunny at 21°C; Paris could not be checked."},
				llm.Extension{Kind: "gemini.grounding", Data: json.RawMessage(`{"type":"grounding"}`)},
			}},
			llm.UserText("Thanks! <3 & bye"),
		},
		Tools: []llm.ToolDefinition{
			{Name: "get_weather", Description: "Current weather for a city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "get_time", Description: "Current local time."},
		},
		ToolChoice:     llm.ToolChoice{Mode: llm.ToolChoiceRequired},
		MaxTokens:      1024,
		Temperature:    &temp,
		ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Name: "weather", Schema: json.RawMessage(`{"type":"object"}`), Strict: true},
		Reasoning:      &llm.Reasoning{Effort: "low"},
	}
}

const minimalStream = "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"id\":\"msg_1\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"ok\",\"annotations\":[]}]}]}}\n\n"

// send streams req through m against a server that answers with body, and
// returns the request body the server saw, checked to be compact JSON.
func send(t *testing.T, m func(url string) *Model, req *llm.Request, body string) (*llm.Response, []byte) {
	t.Helper()
	srv, rec := replay(t, http.StatusOK, "text/event-stream", []byte(body), 0)
	_, resp, err := drain(t, m(srv.URL).Stream(bg, req))
	if err != nil {
		t.Fatal(err)
	}
	path, hdr, sent := rec.Get()
	if path != "/v1/responses" {
		t.Errorf("path = %q", path)
	}
	if got := hdr.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	if hdr.Get("Content-Type") != "application/json" || hdr.Get("Accept") != "text/event-stream" {
		t.Errorf("headers = %v", hdr)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, sent); err != nil || !bytes.Equal(compact.Bytes(), sent) {
		t.Fatalf("the body is not compact JSON (%v): %s", err, sent)
	}
	return resp, sent
}

func pretty(b []byte) []byte {
	var out bytes.Buffer
	json.Indent(&out, b, "", "  ")
	out.WriteByte('\n')
	return out.Bytes()
}

func modelAt(opts ...Option) func(string) *Model {
	return func(url string) *Model {
		return New(append([]Option{WithBaseURL(url + "/v1"), WithAPIKey(testKey)}, opts...)...)
	}
}

// TestRequestGolden pins the exact JSON sent for the neutral conversation.
func TestRequestGolden(t *testing.T) {
	req := conversation()
	req.Model = "gpt-5"
	_, body := send(t, modelAt(WithReasoningSummary("auto")), req, minimalStream)
	checkGolden(t, "request/conversation", pretty(body))
}

// TestToolLoopSendsEncryptedReasoningBack replays a real stateless tool
// loop: the first step's recorded stream (reasoning with encrypted content,
// then a call), kept in a session's storage JSON, the tool's result, and
// the second step's request, which must carry the reasoning item back
// unchanged, right before its call.
func TestToolLoopSendsEncryptedReasoningBack(t *testing.T) {
	m := modelAt(WithModel("gpt-5"), WithReasoningSummary("auto"))
	tools := []llm.ToolDefinition{{Name: "weather", Description: "Get weather information for a location",
		Parameters: json.RawMessage(`{"properties":{"location":{"description":"the city","type":"string"}},"required":["location"],"type":"object"}`)}}
	req := &llm.Request{
		Messages:  []llm.Message{llm.SystemText("You are a helpful assistant"), llm.UserText("What's the weather in Florence, Italy?")},
		Tools:     tools,
		Reasoning: &llm.Reasoning{Effort: "high"},
	}
	first, body1 := send(t, m, req, string(readFixture(t, fixtureSet+"/responses-stream-reasoning-summary-encrypted-function-call.sse")))
	if !strings.Contains(string(body1), `"include":["reasoning.encrypted_content"]`) || !strings.Contains(string(body1), `"store":false`) {
		t.Fatalf("the first step does not ask for encrypted reasoning: %s", body1)
	}
	calls := first.Message.ToolUses()
	if len(calls) != 1 {
		t.Fatalf("first step: %+v", first.Message)
	}
	// The turn goes through the storage JSON a session keeps it in.
	stored, err := json.Marshal(first.Message)
	if err != nil {
		t.Fatal(err)
	}
	var kept llm.Message
	if err := json.Unmarshal(stored, &kept); err != nil {
		t.Fatal(err)
	}
	req.Messages = append(req.Messages, kept, llm.ToolResultText(calls[0].ID, "40 C", false))
	second, body2 := send(t, m, req, string(readFixture(t, fixtureSet+"/responses-stream-reasoning-summary-text-after-tool.sse")))
	checkGolden(t, "request/tool-loop-encrypted-reasoning", pretty(body2))
	if !strings.HasPrefix(second.Message.Text(), "Right now in Florence") {
		t.Fatalf("second step: %q", second.Message.Text())
	}

	// What the golden shows, checked against the recording itself: the
	// reasoning item of output_item.done, as it was, then the call.
	var sent struct{ Input []map[string]any }
	if err := json.Unmarshal(body2, &sent); err != nil {
		t.Fatal(err)
	}
	encrypted := doneItemField(t, "responses-stream-reasoning-summary-encrypted-function-call.sse", "reasoning", "encrypted_content")
	in := sent.Input
	if len(in) != 5 || in[2]["type"] != "reasoning" || in[2]["id"] != "rs_017e85da2ae23b69016a3c1251dcec819daf72930a854fd4d1" ||
		in[2]["encrypted_content"] != encrypted || in[3]["type"] != "function_call" || in[4]["type"] != "function_call_output" {
		t.Fatalf("input items = %v", in)
	}

	// The recording's own second request (made by a client that did not
	// send reasoning back) agrees on every other item.
	var recorded struct {
		Input []map[string]any
		Tools []map[string]any
	}
	if err := json.Unmarshal(readFixture(t, fixtureSet+"/responses-stream-reasoning-summary-text-after-tool.request.json"), &recorded); err != nil {
		t.Fatal(err)
	}
	var tools2 struct{ Tools []map[string]any }
	json.Unmarshal(body2, &tools2)
	if !reflect.DeepEqual(tools2.Tools, recorded.Tools) {
		t.Errorf("tools = %v, recorded %v", tools2.Tools, recorded.Tools)
	}
	ours := append(append([]map[string]any{}, in[:2]...), in[3:]...)
	for i := range ours {
		delete(ours[i], "type")
		delete(recorded.Input[i], "type")
	}
	ours[0]["role"] = "developer" // the recording's client sends instructions as a developer message
	if !reflect.DeepEqual(ours, recorded.Input) {
		t.Errorf("input = %v\nrecorded %v", ours, recorded.Input)
	}
}

// doneItemField returns a field of the first finished item of type typ
// (its output_item.done event) in a recorded stream.
func doneItemField(t *testing.T, name, typ, field string) any {
	t.Helper()
	for _, line := range strings.Split(string(readFixture(t, fixtureSet+"/"+name)), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type string
			Item map[string]any
		}
		if json.Unmarshal([]byte(data), &ev) == nil && ev.Type == "response.output_item.done" && ev.Item["type"] == typ {
			return ev.Item[field]
		}
	}
	t.Fatalf("no finished %s item in %s", typ, name)
	return nil
}

// encode returns the body sent for req as a generic value.
func encode(t *testing.T, m *Model, req *llm.Request, stream bool) map[string]any {
	t.Helper()
	b, err := m.encodeRequest(req, stream)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRequestFieldMapping(t *testing.T) {
	user := []llm.Message{llm.UserText("hi")}
	tests := []struct {
		name  string
		opts  []Option
		req   llm.Request
		check map[string]string // field → its JSON; "" means absent
	}{
		{"a non-reasoning model gets no include", nil, llm.Request{Model: "gpt-4o", Messages: user},
			map[string]string{"store": "false", "include": "", "reasoning": "", "stream": ""}},
		{"a reasoning model gets encrypted reasoning", nil, llm.Request{Model: "o4-mini", Messages: user},
			map[string]string{"store": "false", "include": `["reasoning.encrypted_content"]`}},
		{"a vendor-prefixed gpt-5.1", nil, llm.Request{Model: "openai/GPT-5.1-mini", Messages: user},
			map[string]string{"include": `["reasoning.encrypted_content"]`}},
		{"a budget alone does not", nil, llm.Request{Model: "gpt-4o", Messages: user, Reasoning: &llm.Reasoning{BudgetTokens: 2048}},
			map[string]string{"include": ""}},
		{"Request.Reasoning asks for it too", nil, llm.Request{Model: "my-deployment", Messages: user, Reasoning: &llm.Reasoning{Effort: "minimal"}},
			map[string]string{"include": `["reasoning.encrypted_content"]`, "reasoning": `{"effort":"minimal"}`}},
		{"BudgetTokens alone sends no reasoning", nil, llm.Request{Model: "gpt-4o", Messages: user, Reasoning: &llm.Reasoning{BudgetTokens: 1000}},
			map[string]string{"reasoning": ""}},
		{"store on: no include", []Option{WithStore(true)}, llm.Request{Model: "gpt-5", Messages: user},
			map[string]string{"store": "true", "include": ""}},
		{"forced on", []Option{WithEncryptedReasoning(true)}, llm.Request{Model: "gpt-4o", Messages: user},
			map[string]string{"include": `["reasoning.encrypted_content"]`}},
		{"forced off", []Option{WithEncryptedReasoning(false)}, llm.Request{Model: "gpt-5", Messages: user},
			map[string]string{"include": ""}},
		{"a summary without an effort", []Option{WithReasoningSummary("detailed")}, llm.Request{Model: "gpt-5", Messages: user},
			map[string]string{"reasoning": `{"summary":"detailed"}`}},
		{"Extra chains a stored response and replaces fields", []Option{WithStore(true)},
			llm.Request{Model: "gpt-5", Messages: user, Extra: map[string]any{"previous_response_id": "resp_9", "store": nil, "instructions": "Be brief."}},
			map[string]string{"previous_response_id": `"resp_9"`, "store": "", "instructions": `"Be brief."`}},
		{"tool choice none", nil, llm.Request{Model: "gpt-4o", Messages: user, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}},
			map[string]string{"tool_choice": `"none"`}},
		{"a named tool", nil, llm.Request{Model: "gpt-4o", Messages: user, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "f"}},
			map[string]string{"tool_choice": `{"name":"f","type":"function"}`}},
		{"json_object and max output tokens", nil, llm.Request{Model: "gpt-4o", Messages: user, MaxTokens: 77, ResponseFormat: &llm.ResponseFormat{Type: "json_object"}},
			map[string]string{"text": `{"format":{"type":"json_object"}}`, "max_output_tokens": "77"}},
		{"the default model", []Option{WithModel("gpt-4.1")}, llm.Request{Messages: user},
			map[string]string{"model": `"gpt-4.1"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(append([]Option{WithAPIKey("k")}, tc.opts...)...)
			body := encode(t, m, &tc.req, false)
			for field, want := range tc.check {
				v, ok := body[field]
				got := ""
				if ok {
					got = jsonOf(v)
				}
				if got != want {
					t.Errorf("%s = %s, want %s (body %s)", field, got, want, jsonOf(body))
				}
			}
		})
	}
	if b := encode(t, New(WithAPIKey("k")), &llm.Request{Model: "gpt-4o", Messages: user}, true); b["stream"] != true {
		t.Errorf("a stream request = %v", b)
	}
}

// TestReasoningGoesBackOnlyToItsAPI: only this API's reasoning (with an
// id) is sent, with its encrypted content; without encrypted content only
// when store is on.
func TestReasoningGoesBackOnlyToItsAPI(t *testing.T) {
	msgs := func(th llm.Thinking) []llm.Message {
		return []llm.Message{llm.UserText("q"), {Role: llm.RoleAssistant, Content: []llm.Block{th, llm.Text{Text: "a"}}}, llm.UserText("q2")}
	}
	tests := []struct {
		name  string
		store bool
		th    llm.Thinking
		want  string // the reasoning item, or "" for none
	}{
		{"ours, encrypted", false, llm.Thinking{Text: "s", Signature: "enc", Provider: Provider, ID: "rs_1"},
			`{"encrypted_content":"enc","id":"rs_1","summary":[{"text":"s","type":"summary_text"}],"type":"reasoning"}`},
		{"ours, no summary", false, llm.Thinking{Signature: "enc", Provider: Provider, ID: "rs_1"},
			`{"encrypted_content":"enc","id":"rs_1","summary":[],"type":"reasoning"}`},
		{"ours, not encrypted, store off", false, llm.Thinking{Text: "s", Provider: Provider, ID: "rs_1"}, ""},
		{"ours, not encrypted, store on", true, llm.Thinking{Text: "s", Provider: Provider, ID: "rs_1"},
			`{"id":"rs_1","summary":[{"text":"s","type":"summary_text"}],"type":"reasoning"}`},
		{"ours without an id", false, llm.Thinking{Signature: "enc", Provider: Provider}, ""},
		{"Anthropic's", false, llm.Thinking{Text: "s", Signature: "sig"}, ""},
		{"Gemini's", false, llm.Thinking{Text: "s", Signature: "sig", Provider: "gemini", ID: "x"}, ""},
		{"unsigned thinking of a compatible server", false, llm.Thinking{Text: "s"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(WithAPIKey("k"), WithStore(tc.store))
			body := encode(t, m, &llm.Request{Model: "gpt-5", Messages: msgs(tc.th)}, false)
			got := ""
			for _, it := range body["input"].([]any) {
				if it.(map[string]any)["type"] == "reasoning" {
					got = jsonOf(it)
				}
			}
			if got != tc.want {
				t.Fatalf("reasoning item = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestMessageMapping(t *testing.T) {
	tests := []struct {
		name string
		msgs []llm.Message
		want string // the input items
	}{
		{"a nested tool result comes before the user's text", []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResult{ToolUseID: "c1", Content: []llm.Block{llm.Text{Text: "42"}}}, llm.Text{Text: "and now?"}}}},
			`[{"call_id":"c1","output":"42","type":"function_call_output"},{"content":[{"text":"and now?","type":"input_text"}],"role":"user","type":"message"}]`},
		{"an error result that says so keeps its text", []llm.Message{llm.ToolResultText("c1", "error: boom", true)},
			`[{"call_id":"c1","output":"error: boom","type":"function_call_output"}]`},
		{"a result with an image is content parts", []llm.Message{{Role: llm.RoleTool, ToolCallID: "c1", IsError: true, Content: []llm.Block{
			llm.Text{Text: "see"}, llm.Image{URL: "https://x/y.png"}}}},
			`[{"call_id":"c1","output":[{"text":"Error:","type":"input_text"},{"text":"see","type":"input_text"},{"detail":"auto","image_url":"https://x/y.png","type":"input_image"}],"type":"function_call_output"}]`},
		{"malformed arguments go back as the model wrote them", []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.MalformedInput("c1", "f", `{"a":`)}}},
			`[{"arguments":"{\"a\":","call_id":"c1","name":"f","type":"function_call"}]`},
		{"a file by URL and a text document", []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
			llm.File{URL: "https://x/doc.pdf"}, llm.File{Data: []byte("plain words"), MediaType: "text/plain"}}}},
			`[{"content":[{"file_url":"https://x/doc.pdf","type":"input_file"},{"text":"plain words","type":"input_text"}],"role":"user","type":"message"}]`},
		{"a user's provider item is sent; another kind is not", []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
			llm.Extension{Kind: "openai.mcp_approval_response", Data: json.RawMessage(`{"type":"mcp_approval_response","approval_request_id":"mcpr_1","approve":true}`)},
			llm.Extension{Kind: "openai.mcp_approval_response", Data: json.RawMessage(`{"type":"something_else"}`)},
			llm.Extension{Kind: "openai.reasoning", Data: json.RawMessage(`{"type":"reasoning"}`)},
		}}},
			`[{"approval_request_id":"mcpr_1","approve":true,"type":"mcp_approval_response"}]`},
		{"an empty assistant message sends nothing", []llm.Message{{Role: llm.RoleAssistant}}, `[]`},
		{"reasoning that nothing follows is left out", []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Thinking{Signature: "e1", Provider: Provider, ID: "rs_1"}, llm.Text{Text: "a"},
			llm.Thinking{Signature: "e2", Provider: Provider, ID: "rs_2"}}}},
			`[{"encrypted_content":"e1","id":"rs_1","summary":[],"type":"reasoning"},{"content":"a","role":"assistant","type":"message"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := encode(t, New(WithAPIKey("k")), &llm.Request{Model: "gpt-4o", Messages: tc.msgs}, false)
			if got := jsonOf(body["input"]); got != tc.want {
				t.Fatalf("input = %s\nwant    %s", got, tc.want)
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	user := []llm.Message{llm.UserText("hi")}
	tests := []struct {
		name string
		req  *llm.Request
		msg  string
	}{
		{"nil request", nil, "nil request"},
		{"stop sequences", &llm.Request{Model: "m", Messages: user, StopSequences: []string{"x"}}, "stop sequences"},
		{"unknown role", &llm.Request{Model: "m", Messages: []llm.Message{{Role: "robot"}}}, "unknown role"},
		{"audio", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Audio{Data: []byte{1}}}}}}, "no audio"},
		{"an image in a system message", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleSystem, Content: []llm.Block{llm.Image{URL: "u"}}}}}, "only text"},
		{"an image in an assistant message", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{llm.Image{URL: "u"}}}}}, "cannot hold"},
		{"an empty image", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Image{}}}}}, "neither data nor URL"},
		{"an empty file", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.File{}}}}}, "neither data"},
		{"a nameless tool choice", &llm.Request{Model: "m", Messages: user, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool}}, "names no tool"},
		{"an unknown tool choice", &llm.Request{Model: "m", Messages: user, ToolChoice: llm.ToolChoice{Mode: "maybe"}}, "unknown tool choice"},
		{"an unknown format", &llm.Request{Model: "m", Messages: user, ResponseFormat: &llm.ResponseFormat{Type: "xml"}}, "unknown response format"},
		{"an Extra value that does not encode", &llm.Request{Model: "m", Messages: user, Extra: map[string]any{"x": make(chan int)}}, "Extra"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(WithAPIKey("k")).encodeRequest(tc.req, false)
			var le *llm.Error
			if !errors.As(err, &le) || le.Kind != llm.KindInvalidRequest || !strings.Contains(le.Message, tc.msg) {
				t.Fatalf("err = %v, want an invalid request about %q", err, tc.msg)
			}
		})
	}
}
