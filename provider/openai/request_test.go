package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

// pngPixel is a 1x1 PNG.
var pngPixel = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// conversation is the neutral conversation of the request golden tests: a
// system prompt; a first exchange with thinking and no tool call; a user
// message with an image; an assistant turn with thinking (signed), text and
// two parallel tool calls; their results, one an error; the answer; and a
// follow-up question.
func conversation() *llm.Request {
	temp := 0.2
	return &llm.Request{
		Messages: []llm.Message{
			llm.SystemText("You are a weather assistant."),
			llm.UserText("hello"),
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.Thinking{Text: "A greeting."}, llm.Text{Text: "Hi! Ask me about the weather."}}},
			{Role: llm.RoleUser, Content: []llm.Block{
				llm.Text{Text: "Where was this taken, and what is the weather there and in Paris?"},
				llm.Image{Data: pngPixel, MediaType: "image/png", Detail: "low"},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.Thinking{Text: "The photo shows Berlin. I need the weather for two cities.", Signature: "sig-abc123"},
				llm.Text{Text: "Let me check both cities."},
				llm.ToolUse{ID: "call_1", Name: "get_weather", Input: json.RawMessage(`{"city":"Berlin"}`)},
				llm.ToolUse{ID: "call_2", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
			}},
			llm.ToolResultText("call_1", "Sunny, 21°C", false),
			llm.ToolResultText("call_2", "weather service unavailable", true),
			llm.AssistantText("Berlin is sunny at 21°C; Paris could not be checked."),
			llm.UserText("Thanks! <3 & bye"),
		},
		Tools: []llm.ToolDefinition{
			{Name: "get_weather", Description: "Current weather for a city.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "get_time", Description: "Current local time."},
		},
		ToolChoice:    llm.ToolChoice{Mode: llm.ToolChoiceRequired},
		MaxTokens:     1024,
		Temperature:   &temp,
		StopSequences: []string{"\n\nUser:"},
		Reasoning:     &llm.Reasoning{Effort: "low"},
	}
}

const minimalStream = "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

// TestRequestGolden pins the exact JSON sent for the neutral conversation,
// to OpenAI (thinking dropped, max_completion_tokens for gpt-5) and to
// DeepSeek (reasoning_content on the assistant messages of the span with
// tool calls, max_tokens).
func TestRequestGolden(t *testing.T) {
	tests := []struct {
		name, model, path string
		opts              []Option
	}{
		{"openai", "gpt-5", "/v1/chat/completions", nil},
		{"deepseek", "deepseek-reasoner", "/chat/completions", []Option{DeepSeek()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, rec := replay(t, http.StatusOK, "text/event-stream", []byte(minimalStream), 0)
			base := srv.URL
			if tc.name == "openai" {
				base += "/v1"
			}
			m := New(append(tc.opts, WithBaseURL(base), WithAPIKey(testKey))...)
			req := conversation()
			req.Model = tc.model
			if _, _, err := drain(t, m.Stream(bg, req)); err != nil {
				t.Fatal(err)
			}
			path, hdr, body := rec.Get()
			if path != tc.path {
				t.Errorf("path = %q, want %q", path, tc.path)
			}
			if got := hdr.Get("Authorization"); got != "Bearer "+testKey {
				t.Errorf("Authorization = %q", got)
			}
			if hdr.Get("Content-Type") != "application/json" || hdr.Get("Accept") != "text/event-stream" {
				t.Errorf("headers = %v", hdr)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, body); err != nil || !bytes.Equal(compact.Bytes(), body) {
				t.Fatalf("the body is not compact JSON (%v): %s", err, body)
			}
			var pretty bytes.Buffer
			json.Indent(&pretty, body, "", "  ")
			pretty.WriteByte('\n')
			checkGolden(t, "request/"+tc.name, pretty.Bytes())
		})
	}
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

func TestMaxTokensParamFollowsModelFamily(t *testing.T) {
	tests := []struct {
		model, option, want string
	}{
		{"gpt-4o", "", "max_tokens"},
		{"gpt-4.1-mini", "", "max_tokens"},
		{"gpt-3.5-turbo", "", "max_tokens"},
		{"o1", "", "max_completion_tokens"},
		{"o3-mini", "", "max_completion_tokens"},
		{"o4-mini-2025-04-16", "", "max_completion_tokens"},
		{"gpt-5", "", "max_completion_tokens"},
		{"gpt-5-nano-2025-08-07", "", "max_completion_tokens"},
		{"GPT-5.1", "", "max_completion_tokens"},
		{"openai/gpt-5", "", "max_completion_tokens"},
		{"deepseek-chat", "", "max_tokens"},
		{"llama3.2", "", "max_tokens"},
		{"omni-moderation", "", "max_tokens"},
		{"my-azure-deployment", "max_completion_tokens", "max_completion_tokens"},
		{"gpt-5", "max_tokens", "max_tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.model+"/"+tc.option, func(t *testing.T) {
			m := New(WithAPIKey(""), WithMaxTokensParam(tc.option))
			v := encode(t, m, &llm.Request{Model: tc.model, MaxTokens: 77, Messages: []llm.Message{llm.UserText("x")}}, false)
			if v[tc.want] != 77.0 || len(v) != 3 {
				t.Fatalf("body = %s, want %s: 77", jsonOf(v), tc.want)
			}
		})
	}
}

func TestRequestFieldMapping(t *testing.T) {
	m := New(WithAPIKey(""), WithModel("default-model"))
	tests := []struct {
		name  string
		edit  func(r *llm.Request)
		field string
		want  string // JSON of the field; "" means absent
	}{
		{"the default model is used when the request names none", func(r *llm.Request) {}, "model", `"default-model"`},
		{"the request's model wins", func(r *llm.Request) { r.Model = "other" }, "model", `"other"`},
		{"auto tool choice is not sent", func(r *llm.Request) {}, "tool_choice", ``},
		{"tool choice none", func(r *llm.Request) { r.ToolChoice.Mode = llm.ToolChoiceNone }, "tool_choice", `"none"`},
		{"tool choice required", func(r *llm.Request) { r.ToolChoice.Mode = llm.ToolChoiceRequired }, "tool_choice", `"required"`},
		{"a named tool", func(r *llm.Request) { r.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "f"} }, "tool_choice", `{"function":{"name":"f"},"type":"function"}`},
		{"a tool without parameters gets an empty object schema", func(r *llm.Request) { r.Tools = []llm.ToolDefinition{{Name: "f"}} }, "tools", `[{"function":{"name":"f","parameters":{"properties":{},"type":"object"}},"type":"function"}]`},
		{"json_object", func(r *llm.Request) { r.ResponseFormat = &llm.ResponseFormat{Type: "json_object"} }, "response_format", `{"type":"json_object"}`},
		{"json_schema", func(r *llm.Request) {
			r.ResponseFormat = &llm.ResponseFormat{Type: "json_schema", Name: "answer", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}
		}, "response_format", `{"json_schema":{"name":"answer","schema":{"type":"object"},"strict":true},"type":"json_schema"}`},
		{"json_schema without a name", func(r *llm.Request) {
			r.ResponseFormat = &llm.ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`{}`)}
		}, "response_format", `{"json_schema":{"name":"response","schema":{}},"type":"json_schema"}`},
		{"top_p", func(r *llm.Request) { p := 0.5; r.TopP = &p }, "top_p", `0.5`},
		{"temperature zero is sent", func(r *llm.Request) { z := 0.0; r.Temperature = &z }, "temperature", `0`},
		{"stop sequences", func(r *llm.Request) { r.StopSequences = []string{"a", "b"} }, "stop", `["a","b"]`},
		{"reasoning effort", func(r *llm.Request) { r.Reasoning = &llm.Reasoning{Effort: "high"} }, "reasoning_effort", `"high"`},
		{"a budget alone sends nothing", func(r *llm.Request) { r.Reasoning = &llm.Reasoning{BudgetTokens: 100} }, "reasoning_effort", ``},
		{"Extra adds a field", func(r *llm.Request) { r.Extra = map[string]any{"seed": 7} }, "seed", `7`},
		{"Extra overrides the adapter's field", func(r *llm.Request) { r.Extra = map[string]any{"model": "x"} }, "model", `"x"`},
		{"a nil Extra value removes a field", func(r *llm.Request) { r.Extra = map[string]any{"messages": nil} }, "messages", ``},
		{"metadata is never sent", func(r *llm.Request) { r.Metadata = map[string]string{"metadata": "x"} }, "metadata", ``},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &llm.Request{Messages: []llm.Message{llm.UserText("x")}}
			tc.edit(r)
			v := encode(t, m, r, false)
			got, ok := v[tc.field]
			if tc.want == "" {
				if ok {
					t.Fatalf("%s = %s, want it absent", tc.field, jsonOf(got))
				}
				return
			}
			if jsonOf(got) != tc.want {
				t.Fatalf("%s = %s, want %s", tc.field, jsonOf(got), tc.want)
			}
		})
	}
}

func TestStreamRequestAsksForUsage(t *testing.T) {
	v := encode(t, New(WithAPIKey(""), WithModel("m")), userRequest(), true)
	if v["stream"] != true || jsonOf(v["stream_options"]) != `{"include_usage":true}` {
		t.Fatalf("body = %s", jsonOf(v))
	}
	v = encode(t, New(WithAPIKey(""), WithModel("m")), userRequest(), false)
	if _, ok := v["stream"]; ok {
		t.Fatalf("a blocking request sent stream: %s", jsonOf(v))
	}
}

func TestMessageMapping(t *testing.T) {
	tests := []struct {
		name string
		msgs []llm.Message
		opts []Option
		want string // JSON of "messages"
	}{
		{"a text-only user message is a string",
			[]llm.Message{llm.UserText("hi")}, nil, `[{"content":"hi","role":"user"}]`},
		{"an image without a media type is sniffed",
			[]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Image{Data: pngPixel[:16]}}}}, nil,
			`[{"content":[{"image_url":{"url":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUg=="},"type":"image_url"}],"role":"user"}]`},
		{"an image URL is passed on",
			[]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Image{URL: "https://x/y.jpg", Detail: "high"}}}}, nil,
			`[{"content":[{"image_url":{"detail":"high","url":"https://x/y.jpg"},"type":"image_url"}],"role":"user"}]`},
		{"wav audio is input_audio",
			[]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Audio{Data: []byte("RIFF"), MediaType: "audio/wav"}}}}, nil,
			`[{"content":[{"input_audio":{"data":"UklGRg==","format":"wav"},"type":"input_audio"}],"role":"user"}]`},
		{"audio in a data URL is decoded",
			[]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Audio{URL: "data:audio/mpeg;base64,SUQz"}}}}, nil,
			`[{"content":[{"input_audio":{"data":"SUQz","format":"mp3"},"type":"input_audio"}],"role":"user"}]`},
		{"a PDF is a file part",
			[]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.File{Data: []byte("%PDF-1.4"), MediaType: "application/pdf", Name: "a.pdf"}}}}, nil,
			`[{"content":[{"file":{"file_data":"data:application/pdf;base64,JVBERi0xLjQ=","filename":"a.pdf"},"type":"file"}],"role":"user"}]`},
		{"an uploaded file is referenced by id",
			[]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.File{FileID: "file-1"}}}}, nil,
			`[{"content":[{"file":{"file_id":"file-1"},"type":"file"}],"role":"user"}]`},
		{"a text document is sent as text",
			[]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.File{Data: []byte("a,b\n1,2"), MediaType: "text/csv"}}}}, nil,
			`[{"content":[{"text":"a,b\n1,2","type":"text"}],"role":"user"}]`},
		{"an error tool result is prefixed",
			[]llm.Message{llm.ToolResultText("c1", "boom", true)}, nil, `[{"content":"Error: boom","role":"tool","tool_call_id":"c1"}]`},
		{"an error tool result that says so is kept",
			[]llm.Message{llm.ToolResultText("c1", "error: boom", true)}, nil, `[{"content":"error: boom","role":"tool","tool_call_id":"c1"}]`},
		{"tool results nested in a user message become tool messages",
			[]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
				llm.ToolResult{ToolUseID: "a", Content: []llm.Block{llm.Text{Text: "1"}}},
				llm.ToolResult{ToolUseID: "b", Content: []llm.Block{llm.Text{Text: "2"}}, IsError: true},
				llm.Text{Text: "and now?"},
			}}}, nil,
			`[{"content":"1","role":"tool","tool_call_id":"a"},{"content":"Error: 2","role":"tool","tool_call_id":"b"},{"content":"and now?","role":"user"}]`},
		{"an assistant tool call without text has no content",
			[]llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: "c", Name: "f"}}}}, nil,
			`[{"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"f"},"id":"c","type":"function"}]}]`},
		{"thinking, redacted thinking and extensions are not sent to OpenAI",
			[]llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{llm.Thinking{Text: "t", Signature: "s"}, llm.RedactedThinking{Data: "x"}, llm.Extension{Kind: "k"}, llm.Text{Text: "a"}}}}, nil,
			`[{"content":"a","role":"assistant"}]`},
		{"DeepSeek: no reasoning_content outside a tool span",
			[]llm.Message{llm.UserText("q"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.Thinking{Text: "t"}, llm.Text{Text: "a"}}}}, []Option{DeepSeek()},
			`[{"content":"q","role":"user"},{"content":"a","role":"assistant"}]`},
		{"DeepSeek: every assistant message of a tool span carries reasoning_content",
			[]llm.Message{
				llm.UserText("q"),
				{Role: llm.RoleAssistant, Content: []llm.Block{llm.Thinking{Text: "t1"}, llm.ToolUse{ID: "c", Name: "f", Input: json.RawMessage(`{"x":1}`)}}},
				llm.ToolResultText("c", "r", false),
				llm.AssistantText("done"),
				llm.UserText("next"),
			}, []Option{DeepSeek()},
			`[{"content":"q","role":"user"},{"content":"","reasoning_content":"t1","role":"assistant","tool_calls":[{"function":{"arguments":"{\"x\":1}","name":"f"},"id":"c","type":"function"}]},{"content":"r","role":"tool","tool_call_id":"c"},{"content":"done","reasoning_content":"","role":"assistant"},{"content":"next","role":"user"}]`},
		{"WithReasoningContent turns the rule on for any server",
			[]llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{llm.Thinking{Text: "t"}, llm.ToolUse{ID: "c", Name: "f"}}}}, []Option{WithReasoningContent(true)},
			`[{"content":"","reasoning_content":"t","role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"f"},"id":"c","type":"function"}]}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(append(tc.opts, WithAPIKey(""), WithModel("m"))...)
			v := encode(t, m, &llm.Request{Messages: tc.msgs}, false)
			if got := jsonOf(v["messages"]); got != tc.want {
				t.Fatalf("messages =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		req  *llm.Request
		want string
	}{
		{"a named tool choice without a name", &llm.Request{Model: "m", ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool}}, "names no tool"},
		{"an unknown response format", &llm.Request{Model: "m", ResponseFormat: &llm.ResponseFormat{Type: "yaml"}}, "unknown response format"},
		{"audio by URL", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Audio{URL: "https://x/a.wav"}}}}}, "only inline"},
		{"ogg audio", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Audio{Data: []byte("x"), MediaType: "audio/ogg"}}}}}, "wav or mp3"},
		{"a file by URL", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.File{URL: "https://x/a.pdf"}}}}}, "by URL"},
		{"a spreadsheet", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.File{Data: []byte("x"), MediaType: "application/vnd.ms-excel"}}}}}, "PDF or text"},
		{"an image in a tool result", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleTool, ToolCallID: "c", Content: []llm.Block{llm.Image{URL: "https://x"}}}}}, "only text"},
		{"an image in a system message", &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleSystem, Content: []llm.Block{llm.Image{URL: "https://x"}}}}}, "only text"},
		{"an unknown role", &llm.Request{Model: "m", Messages: []llm.Message{{Role: "robot"}}}, "unknown role"},
		{"an Extra value that cannot be encoded", &llm.Request{Model: "m", Extra: map[string]any{"f": func() {}}}, "Extra"},
		{"invalid tool parameters", &llm.Request{Model: "m", Tools: []llm.ToolDefinition{{Name: "f", Parameters: json.RawMessage(`{`)}}}, "encoding the request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(WithAPIKey(""))
			_, err := m.encodeRequest(tc.req, false)
			if !errors.Is(err, llm.ErrInvalidRequest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want an invalid request error mentioning %q", err, tc.want)
			}
		})
	}
}
