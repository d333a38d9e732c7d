package anthropic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// conversation is the neutral conversation of the request golden test: a
// system prompt, an image, thinking with a signature, parallel tool calls
// with results (one an error), a user remark after the results, and tools.
func conversation() *llm.Request {
	temp := 0.5
	return &llm.Request{
		Messages: []llm.Message{
			llm.SystemText("You are a weather assistant."),
			{Role: llm.RoleUser, Content: []llm.Block{
				llm.Image{Data: pngBytes, MediaType: "image/png"},
				llm.Text{Text: "What's the weather in Paris and Rome? The map shows both."},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.Thinking{Text: "Two cities, two calls.", Signature: "EqQBCkYIBxgCKkB-sig"},
				llm.Text{Text: "I'll check both cities."},
				llm.ToolUse{ID: "toolu_01", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
				llm.ToolUse{ID: "toolu_02", Name: "get_weather", Input: json.RawMessage(`{"city":"Rome"}`)},
			}},
			llm.ToolResultText("toolu_01", "Sunny, 24°C", false),
			llm.ToolResultText("toolu_02", "weather service timed out", true),
			llm.UserText("Retry Rome if you can."),
		},
		Tools: []llm.ToolDefinition{
			{Name: "get_weather", Description: "Current weather for a city.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "get_time", Description: "Local time in a city."},
		},
		MaxTokens:     4096,
		Temperature:   &temp,
		StopSequences: []string{"\n\nHuman:"},
		Reasoning:     &llm.Reasoning{BudgetTokens: 2048},
	}
}

// TestRequestGolden records the exact bytes sent for the neutral
// conversation, with and without the automatic cache breakpoints.
func TestRequestGolden(t *testing.T) {
	sse := []byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"x\",\"usage\":{}}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	for _, tc := range []struct {
		golden string
		opts   []Option
	}{
		{"request-auto-cache.json", nil},
		{"request-no-cache.json", []Option{WithAutoCache(false)}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var body []byte
			srv := serve(t, 200, "text/event-stream", sse, 0, &body)
			if _, _, err := drain(t, newTestModel(srv.URL, tc.opts...).Stream(bg, conversation())); err != nil {
				t.Fatal(err)
			}
			var pretty bytes.Buffer
			if err := json.Indent(&pretty, body, "", "  "); err != nil {
				t.Fatalf("sent invalid JSON: %v\n%s", err, body)
			}
			checkGolden(t, tc.golden, json.RawMessage(pretty.Bytes()))
		})
	}
}

// TestRequestHeaders checks the endpoint and headers, and that extra
// headers are sent.
func TestRequestHeaders(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(r.Context())
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"m","type":"message","model":"x","content":[],"stop_reason":"end_turn","usage":{}}`))
	}))
	defer srv.Close()
	m := New(WithAPIKey(testKey), WithBaseURL(srv.URL+"/"), WithHeader("anthropic-beta", "files-api-2025-04-14"))
	if _, err := m.Generate(bg, fixtureRequest); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"X-Api-Key":         testKey,
		"Anthropic-Version": "2023-06-01",
		"Content-Type":      "application/json",
		"Anthropic-Beta":    "files-api-2025-04-14",
	}
	for k, v := range want {
		if g := got.Header.Get(k); g != v {
			t.Errorf("header %s = %q, want %q", k, g, v)
		}
	}
	if got.Method != http.MethodPost || got.URL.Path != "/v1/messages" {
		t.Errorf("request %s %s, want POST /v1/messages", got.Method, got.URL.Path)
	}
}

// TestEnvironmentConfiguresTheModel checks ANTHROPIC_API_KEY and
// ANTHROPIC_BASE_URL, and that options win over them.
func TestEnvironmentConfiguresTheModel(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "env-key")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1/")
	m := New()
	if m.o.APIKey != "env-key" || m.transport.Endpoint != "http://127.0.0.1:1/v1/messages" {
		t.Errorf("from env: key %q endpoint %q", m.o.APIKey, m.transport.Endpoint)
	}
	m = New(WithAPIKey("opt"), WithBaseURL("http://h"))
	if m.o.APIKey != "opt" || m.transport.Endpoint != "http://h/v1/messages" {
		t.Errorf("options: key %q endpoint %q", m.o.APIKey, m.transport.Endpoint)
	}
	t.Setenv("ANTHROPIC_BASE_URL", "")
	t.Setenv("ANTHROPIC_API_KEY", "")
	if m := New(); m.transport.Endpoint != DefaultBaseURL+"/v1/messages" {
		t.Errorf("default endpoint %q", m.transport.Endpoint)
	}
	_, err := New().Generate(bg, fixtureRequest)
	mustKind(t, err, llm.KindAuth)
}

// TestInvalidBaseURLFailsEveryCall: a malformed base URL (from the option
// or ANTHROPIC_BASE_URL) makes Generate and Stream fail with a
// KindInvalidRequest error that names the provider, the value and a good
// example, before anything is sent, and never shows the key (not even one
// put in the base URL's query string).
func TestInvalidBaseURLFailsEveryCall(t *testing.T) {
	const key = "sk-ant-canary-0123456789abcdef"
	tests := []struct {
		name, base, env, shown string
	}{
		{"no scheme", "api.anthropic.com", "", `"api.anthropic.com"`},
		{"another scheme", "ftp://gw.example", "", `"ftp://gw.example"`},
		{"unparsable", "http://[::1", "", `"http://[::1"`},
		{"no host, the key in the query", "https://?key=" + key, "", `"https://?…"`},
		{"from the environment", "", "gw.example:8080/anthropic", `"gw.example:8080/anthropic"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("ANTHROPIC_BASE_URL", tc.env)
			opts := []Option{WithAPIKey(key)}
			if tc.base != "" {
				opts = append(opts, WithBaseURL(tc.base))
			}
			m := New(opts...)
			_, gerr := m.Generate(bg, fixtureRequest)
			_, _, serr := drain(t, m.Stream(bg, fixtureRequest))
			for call, err := range map[string]error{"Generate": gerr, "Stream": serr} {
				var e *llm.Error
				if !errors.As(err, &e) || e.Kind != llm.KindInvalidRequest || !errors.Is(err, llm.ErrInvalidRequest) || e.Provider != "anthropic" {
					t.Fatalf("%s: err = %#v, want a KindInvalidRequest error", call, err)
				}
				for _, part := range []string{"anthropic", tc.shown, DefaultBaseURL} {
					if !strings.Contains(e.Message, part) {
						t.Errorf("%s: message %q does not name %s", call, e.Message, part)
					}
				}
				if strings.Contains(fmt.Sprintf("%v %+v", err, err), key) {
					t.Errorf("%s: the error shows the key: %v", call, err)
				}
			}
		})
	}
}

// TestKeyNeverInTransportErrors: a dead server's transport error and a
// proxy that echoes the key hold no key (the in-band and HTTP error cases
// are TestEchoedKeyIsRedacted's).
func TestKeyNeverInTransportErrors(t *testing.T) {
	const key = "sk-ant-canary-0123456789abcdef"
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	echo := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New("proxy refused x-api-key " + r.Header.Get("X-Api-Key"))
	})}
	for name, m := range map[string]*Model{
		"dead server":   New(WithAPIKey(key), WithBaseURL(dead.URL)),
		"echoing proxy": New(WithAPIKey(key), WithHTTPClient(echo)),
	} {
		_, gerr := m.Generate(bg, fixtureRequest)
		_, _, serr := drain(t, m.Stream(bg, fixtureRequest))
		for call, err := range map[string]error{"Generate": gerr, "Stream": serr} {
			if !errors.Is(err, llm.ErrNetwork) || strings.Contains(fmt.Sprintf("%v %+v", err, err), key) {
				t.Errorf("%s, %s: err = %v", name, call, err)
			}
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// wire builds the JSON body for req and returns it decoded.
func wire(t *testing.T, req *llm.Request, opts ...Option) map[string]any {
	t.Helper()
	body, err := newTestModel("http://127.0.0.1:1", opts...).encodeRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func user(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.RoleUser, Content: blocks}
}

func assistant(blocks ...llm.Block) llm.Message {
	return llm.Message{Role: llm.RoleAssistant, Content: blocks}
}

func msgs(ms ...llm.Message) *llm.Request { return &llm.Request{Messages: ms} }

func TestRequestMappingRules(t *testing.T) {
	noCache := []Option{WithAutoCache(false)}
	tests := []struct {
		name string
		req  *llm.Request
		opts []Option
		key  string // top-level field compared
		want string // its JSON; "<absent>" when it must not be sent
	}{
		{"system messages become the top-level system field", msgs(llm.SystemText("a"), llm.UserText("q"), llm.SystemText("b")), noCache,
			"system", `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`},
		{"no system field without system messages", msgs(llm.UserText("q")), noCache, "system", `<absent>`},
		{"consecutive tool results share one user message, ids and is_error kept",
			msgs(llm.UserText("q"), assistant(llm.ToolUse{ID: "a", Name: "f"}, llm.ToolUse{ID: "b", Name: "f"}),
				llm.ToolResultText("a", "ok", false), llm.ToolResultText("b", "bad", true)), noCache,
			"messages", `[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"f","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"ok"}]},
			{"type":"tool_result","tool_use_id":"b","content":[{"type":"text","text":"bad"}],"is_error":true}]}]`},
		{"user text after tool results joins their message after the results",
			msgs(assistant(llm.ToolUse{ID: "a", Name: "f"}), llm.ToolResultText("a", "ok", false), llm.UserText("thanks")), noCache,
			"messages", `[{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"ok"}]},{"type":"text","text":"thanks"}]}]`},
		{"tool results stay before other content in a merged user message",
			msgs(llm.UserText("note"), llm.ToolResultText("a", "ok", false)), noCache,
			"messages", `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"ok"}]},{"type":"text","text":"note"}]}]`},
		{"consecutive messages of one role are merged",
			msgs(llm.UserText("a"), llm.UserText("b"), llm.AssistantText("c"), llm.AssistantText("d")), noCache,
			"messages", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
			{"role":"assistant","content":[{"type":"text","text":"c"},{"type":"text","text":"d"}]}]`},
		{"an error result without content sends no content", msgs(llm.Message{Role: llm.RoleTool, ToolCallID: "a", IsError: true}), noCache,
			"messages", `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","is_error":true}]}]`},
		{"thinking with a signature and redacted thinking go back unchanged",
			msgs(llm.UserText("q"), assistant(llm.Thinking{Text: "t", Signature: "s"}, llm.RedactedThinking{Data: "opaque"}, llm.Text{Text: "a"})), noCache,
			"messages", `[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"redacted_thinking","data":"opaque"},{"type":"text","text":"a"}]}]`},
		{"thinking without a signature is dropped, and a message left empty with it",
			msgs(llm.UserText("q"), assistant(llm.Thinking{Text: "deepseek reasoning"}), llm.UserText("r")), noCache,
			"messages", `[{"role":"user","content":[{"type":"text","text":"q"},{"type":"text","text":"r"}]}]`},
		{"empty text blocks are dropped", msgs(user(llm.Text{}, llm.Text{Text: "q"})), noCache,
			"messages", `[{"role":"user","content":[{"type":"text","text":"q"}]}]`},
		{"images: bytes as base64, data URLs as base64, others as url sources",
			msgs(user(llm.Image{Data: []byte("GIF89a"), MediaType: "image/gif"}, llm.Image{URL: "data:image/png;base64,AAAA"}, llm.Image{URL: "https://x/cat.jpg"})), noCache,
			"messages", `[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGODlh"}},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},
			{"type":"image","source":{"type":"url","url":"https://x/cat.jpg"}}]}]`},
		{"files become documents: base64, text, url and file sources, name as title",
			msgs(user(llm.File{Data: []byte("%PDF-1.4"), MediaType: "application/pdf", Name: "a.pdf"}, llm.File{Data: []byte("plain"), MediaType: "text/markdown"},
				llm.File{URL: "https://x/b.pdf"}, llm.File{FileID: "file_01"})), noCache,
			"messages", `[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjQ="},"title":"a.pdf"},
			{"type":"document","source":{"type":"text","media_type":"text/plain","data":"plain"}},
			{"type":"document","source":{"type":"url","url":"https://x/b.pdf"}},
			{"type":"document","source":{"type":"file","file_id":"file_01"}}]}]`},
		{"a tool result may hold images", msgs(llm.Message{Role: llm.RoleTool, ToolCallID: "a", Content: []llm.Block{llm.Image{URL: "https://x/p.png"}}}), noCache,
			"messages", `[{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"image","source":{"type":"url","url":"https://x/p.png"}}]}]}]`},
		{"anthropic extension blocks are sent back verbatim, others dropped",
			msgs(llm.UserText("q"), assistant(llm.Extension{Kind: "server_tool_use", Data: json.RawMessage(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go"}}`)},
				llm.Extension{Kind: "foreign", Data: json.RawMessage(`{"x":1}`)})), noCache,
			"messages", `[{"role":"user","content":[{"type":"text","text":"q"}]},
			{"role":"assistant","content":[{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"go"}}]}]`},
		{"tools carry name, description and input_schema; empty parameters are an empty object schema",
			&llm.Request{Tools: []llm.ToolDefinition{{Name: "f", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "g"}}}, noCache,
			"tools", `[{"name":"f","description":"d","input_schema":{"type":"object"}},{"name":"g","input_schema":{"type":"object","properties":{}}}]`},
		{"tool choice auto sends nothing", &llm.Request{Tools: []llm.ToolDefinition{{Name: "f"}}}, noCache, "tool_choice", `<absent>`},
		{"tool choice required is any", &llm.Request{Tools: []llm.ToolDefinition{{Name: "f"}}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceRequired}}, noCache,
			"tool_choice", `{"type":"any"}`},
		{"tool choice none", &llm.Request{Tools: []llm.ToolDefinition{{Name: "f"}}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}}, noCache,
			"tool_choice", `{"type":"none"}`},
		{"tool choice of a named tool", &llm.Request{Tools: []llm.ToolDefinition{{Name: "f"}}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "f"}}, noCache,
			"tool_choice", `{"type":"tool","name":"f"}`},
		{"a thinking budget enables thinking", &llm.Request{Reasoning: &llm.Reasoning{BudgetTokens: 1024}}, noCache,
			"thinking", `{"type":"enabled","budget_tokens":1024}`},
		{"an effort goes to output_config, minimal as low", &llm.Request{Reasoning: &llm.Reasoning{Effort: "minimal"}}, noCache,
			"output_config", `{"effort":"low"}`},
		{"a json_schema response format is output_config.format",
			&llm.Request{ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Name: "x", Schema: json.RawMessage(`{"type":"object","additionalProperties":false}`)}}, noCache,
			"output_config", `{"format":{"type":"json_schema","schema":{"type":"object","additionalProperties":false}}}`},
		{"max_tokens defaults to DefaultMaxTokens", &llm.Request{}, noCache, "max_tokens", `8192`},
		{"max_tokens from WithMaxTokens", &llm.Request{}, []Option{WithMaxTokens(100)}, "max_tokens", `100`},
		{"the request's max_tokens wins", &llm.Request{MaxTokens: 7}, []Option{WithMaxTokens(100)}, "max_tokens", `7`},
		{"a default max_tokens is raised above the thinking budget", &llm.Request{Reasoning: &llm.Reasoning{BudgetTokens: 10000}}, noCache,
			"max_tokens", `18192`},
		{"the request's model wins over the default", &llm.Request{Model: "claude-opus-4-1"}, noCache, "model", `"claude-opus-4-1"`},
		{"sampling fields are sent when set", &llm.Request{TopP: ptr(0.9)}, noCache, "top_p", `0.9`},
		{"Extra is merged last and overrides", &llm.Request{MaxTokens: 5, Extra: map[string]any{"max_tokens": 9, "metadata": map[string]string{"user_id": "u"}}}, noCache,
			"max_tokens", `9`},
		{"a nil Extra value removes a field", &llm.Request{Temperature: ptr(1), Extra: map[string]any{"temperature": nil}}, noCache,
			"temperature", `<absent>`},
		{"Metadata is never sent", &llm.Request{Metadata: map[string]string{"secret": "x"}}, noCache, "metadata", `<absent>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, present := wire(t, tc.req, tc.opts...)[tc.key]
			if tc.want == "<absent>" {
				if present {
					t.Fatalf("%s sent: %v", tc.key, got)
				}
				return
			}
			var want any
			if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatalf("bad want: %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(want)
				t.Errorf("%s =\n %s\nwant\n %s", tc.key, g, w)
			}
		})
	}
}

func ptr(f float64) *float64 { return &f }

// TestCacheBreakpoints checks where the automatic breakpoints go.
func TestCacheBreakpoints(t *testing.T) {
	tools := []llm.ToolDefinition{{Name: "f"}, {Name: "g"}}
	tests := []struct {
		name string
		req  *llm.Request
		want []string // paths of the blocks holding cache_control
	}{
		{"the last tool, the last system block and the end of the previous turn",
			&llm.Request{Tools: tools, Messages: []llm.Message{llm.SystemText("s1"), llm.SystemText("s2"), llm.UserText("q1"), llm.AssistantText("a1"), llm.UserText("q2")}},
			[]string{"tools.1", "system.1", "messages.1.0"}},
		{"a first turn has no previous turn to mark",
			&llm.Request{Messages: []llm.Message{llm.SystemText("s"), llm.UserText("q")}},
			[]string{"system.0"}},
		{"in a tool loop the assistant's tool call ends the previous turn",
			&llm.Request{Messages: []llm.Message{llm.UserText("q"), assistant(llm.Thinking{Text: "t", Signature: "s"}, llm.ToolUse{ID: "a", Name: "f"}), llm.ToolResultText("a", "r", false)}},
			[]string{"messages.1.1"}},
		{"thinking cannot carry a breakpoint, the block before it does",
			&llm.Request{Messages: []llm.Message{llm.UserText("q"), assistant(llm.Text{Text: "a"}, llm.Thinking{Text: "t", Signature: "s"}), llm.UserText("q2")}},
			[]string{"messages.1.0"}},
		{"a conversation ending in an assistant prefill marks the turn before the last user message",
			&llm.Request{Messages: []llm.Message{llm.UserText("q1"), llm.AssistantText("a1"), llm.UserText("q2"), llm.AssistantText("{")}},
			[]string{"messages.1.0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := cachePaths(wire(t, tc.req), "")
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("breakpoints at %v, want %v", got, tc.want)
			}
			if len(got) > 4 {
				t.Errorf("%d breakpoints, the API allows 4", len(got))
			}
			if off := cachePaths(wire(t, tc.req, WithAutoCache(false)), ""); len(off) != 0 {
				t.Errorf("WithAutoCache(false) still placed %v", off)
			}
		})
	}
}

// cachePaths lists, in tools, system, messages order, the paths of objects
// holding cache_control.
func cachePaths(v any, path string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["cache_control"]; ok {
			out = append(out, path)
		}
		for _, k := range []string{"tools", "system", "messages", "content"} {
			if c, ok := v[k]; ok {
				p := k
				if path != "" && k == "content" {
					p = path
				} else if path != "" {
					p = path + "." + k
				}
				out = append(out, cachePaths(c, p)...)
			}
		}
	case []any:
		for i, c := range v {
			out = append(out, cachePaths(c, path+"."+itoa(i))...)
		}
	}
	return out
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestRequestsTheAPICannotExpressAreInvalid(t *testing.T) {
	tests := []struct {
		name string
		req  *llm.Request
	}{
		{"audio input", msgs(user(llm.Audio{Data: []byte("RIFF"), MediaType: "audio/wav"}))},
		{"a json_object response format", &llm.Request{ResponseFormat: &llm.ResponseFormat{Type: "json_object"}}},
		{"a json_schema format without a schema", &llm.Request{ResponseFormat: &llm.ResponseFormat{Type: "json_schema"}}},
		{"an image in a system message", msgs(llm.Message{Role: llm.RoleSystem, Content: []llm.Block{llm.Image{URL: "https://x"}}})},
		{"an image with neither data nor URL", msgs(user(llm.Image{}))},
		{"a non-base64 data URL", msgs(user(llm.Image{URL: "data:image/png,abc"}))},
		{"a named tool choice without a name", &llm.Request{ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool}}},
		{"a tool without a name", &llm.Request{Tools: []llm.ToolDefinition{{}}}},
		{"a tool use inside a tool result", msgs(llm.Message{Role: llm.RoleTool, ToolCallID: "a", Content: []llm.Block{llm.ToolUse{ID: "x"}}})},
		{"an unknown role", msgs(llm.Message{Role: "narrator"})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
				t.Error("an invalid request reached the server")
			}))
			defer srv.Close()
			_, err := newTestModel(srv.URL).Generate(bg, tc.req)
			mustKind(t, err, llm.KindInvalidRequest)
			if !errors.Is(err, llm.ErrInvalidRequest) {
				t.Errorf("errors.Is(%v, ErrInvalidRequest) = false", err)
			}
		})
	}
}

// TestInfoAndMaxTokensComeFromTheCatalog: Info is the catalog's entry, and
// the default max_tokens never exceeds the model's maximum output.
func TestInfoAndMaxTokensComeFromTheCatalog(t *testing.T) {
	t.Setenv("ANTHROPIC_BASE_URL", "")
	info := New(WithModel("claude-sonnet-4-5-20250929")).Info()
	if info.Provider != "anthropic" || info.Name != "claude-sonnet-4-5-20250929" || info.ContextWindow <= 0 || info.MaxOutputTokens <= 0 || info.Price == nil {
		t.Errorf("Info() = %+v, want the catalog's entry", info)
	}
	if info := New(WithModel("claude-unknown")).Info(); info != (llm.ModelInfo{Provider: "anthropic", Name: "claude-unknown", Structured: llm.StructuredSchema}) {
		t.Errorf("unknown model: Info() = %+v", info)
	}
	// Another base URL is a compatible server: Claude's limits, no price.
	gw := New(WithModel("claude-sonnet-4-5"), WithBaseURL("https://gateway.example"))
	if info := gw.Info(); info.Provider != "compatible" || info.ContextWindow != 200_000 || info.Price != nil {
		t.Errorf("through a gateway: Info() = %+v", info)
	}
	mine := catalog.Default()
	mine.Add(llm.ModelInfo{Provider: "anthropic", Name: "claude-test-small", ContextWindow: 100_000, MaxOutputTokens: 4096})
	tests := []struct {
		name   string
		req    *llm.Request
		tokens float64
	}{
		{"the default is capped at the model's maximum output", &llm.Request{Model: "claude-test-small"}, 4096},
		{"a raised default stays within the maximum output", &llm.Request{Model: "claude-test-small", Reasoning: &llm.Reasoning{BudgetTokens: 3000}}, 4096},
		{"a default within the maximum is kept", &llm.Request{Model: "claude-sonnet-4-5"}, DefaultMaxTokens},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := wire(t, tc.req, WithAutoCache(false), WithCatalog(mine))["max_tokens"]; got != tc.tokens {
				t.Errorf("max_tokens = %v, want %v", got, tc.tokens)
			}
		})
	}
}

func TestThinkingSignedByAnotherProviderIsLeftOut(t *testing.T) {
	req := &llm.Request{Messages: []llm.Message{
		llm.UserText("q"),
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.Thinking{Text: "mine", Signature: "sig-a"},
			llm.Thinking{Text: "also mine", Signature: "sig-b", Provider: "anthropic"},
			llm.Thinking{Text: "gemini's", Signature: "sig-g", Provider: "gemini"},
			llm.Text{Text: "answer"},
		}},
		llm.UserText("next"),
	}}
	body, err := newTestModel("http://x.invalid").encodeRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if !strings.Contains(s, "sig-a") || !strings.Contains(s, "sig-b") || strings.Contains(s, "sig-g") || strings.Contains(s, "gemini's") {
		t.Fatalf("body %s: want Anthropic's signed thinking only", s)
	}
}
