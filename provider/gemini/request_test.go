package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// finalChunk is a minimal stream, for tests that only look at requests.
var finalChunk = sseOf(`{"candidates":[{"content":{"parts":[{"text":"ok"}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1,"totalTokenCount":2},"modelVersion":"gemini-test","responseId":"r1"}`)

// sent streams req to a recording server and returns the request it got,
// indented.
func sent(t *testing.T, req *llm.Request, opts ...Option) (json.RawMessage, *recorded) {
	t.Helper()
	var got recorded
	srv := serve(t, 200, "text/event-stream", finalChunk, 0, &got)
	if _, _, err := drain(t, newTestModel(srv.URL, opts...).Stream(bg, req)); err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got.body, "", "  "); err != nil {
		t.Fatalf("sent invalid JSON: %v\n%s", err, got.body)
	}
	return pretty.Bytes(), &got
}

// stepOf replays a recorded answer (a stream or a JSON body) and returns
// its message, as a tool loop would store it.
func stepOf(t *testing.T, file string) llm.Message {
	t.Helper()
	resp, err := replayFixture(t, file, 0, "text/event-stream")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Message
}

// resultsFor answers every call of msg.
func resultsFor(msg llm.Message, text string) []llm.Message {
	var out []llm.Message
	for _, tu := range msg.ToolUses() {
		out = append(out, llm.ToolResultText(tu.ID, text+" for "+string(tu.Input), false))
	}
	return out
}

// TestToolLoopSendsSignaturesBack runs the second step of tool loops
// whose first step is a recorded answer: the request must carry each
// thought signature unchanged on the part it came with, the calls' own ids
// (none for generated ones), and a function response per call.
func TestToolLoopSendsSignaturesBack(t *testing.T) {
	tests := []struct{ file, golden string }{
		// A thought summary, then a signed call without an id.
		{"stream-thought-summary-function-call.sse", "request-tool-loop-thought-signature.json"},
		// Gemini 3: three parallel calls with ids, the first signed.
		{"stream-parallel-function-calls-with-ids.sse", "request-tool-loop-parallel-ids.json"},
		// Gemini 3 Pro: a signed call, then an empty final part.
		{"stream-gemini-3-function-call-then-empty-final.sse", "request-tool-loop-gemini-3.json"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			step := stepOf(t, tc.file)
			msgs := append([]llm.Message{llm.UserText("What now?"), step}, resultsFor(step, "done")...)
			body, _ := sent(t, &llm.Request{Messages: msgs, Tools: []llm.ToolDefinition{{Name: "any"}}})
			checkGolden(t, tc.golden, body)

			var w struct {
				Contents []struct {
					Role  string
					Parts []map[string]json.RawMessage
				}
			}
			if err := json.Unmarshal(body, &w); err != nil || len(w.Contents) != 3 {
				t.Fatalf("contents %s (%v)", body, err)
			}
			model, results := w.Contents[1], w.Contents[2]
			calls := step.ToolUses()
			var sentCalls []map[string]json.RawMessage
			for _, p := range model.Parts {
				if p["functionCall"] != nil {
					sentCalls = append(sentCalls, p)
				}
			}
			if model.Role != "model" || len(sentCalls) != len(calls) || results.Role != "user" || len(results.Parts) != len(calls) {
				t.Fatalf("sent %d calls and %d results for %d calls", len(sentCalls), len(results.Parts), len(calls))
			}
			for i, tu := range calls {
				var sig string
				json.Unmarshal(sentCalls[i]["thoughtSignature"], &sig)
				if sig != tu.Signature {
					t.Errorf("call %d went back with signature %.20q, want %.20q", i, sig, tu.Signature)
				}
				var call, resp struct{ ID, Name string }
				json.Unmarshal(sentCalls[i]["functionCall"], &call)
				json.Unmarshal(results.Parts[i]["functionResponse"], &resp)
				wantID := tu.ID
				if strings.HasPrefix(wantID, generatedPrefix) {
					wantID = ""
				}
				if call.ID != wantID || resp.ID != wantID || call.Name != tu.Name || resp.Name != tu.Name {
					t.Errorf("call %d: sent call %+v and response %+v for %s %s", i, call, resp, tu.ID, tu.Name)
				}
			}
		})
	}
}

// TestTextAndCodeSignaturesGoBack sends recorded answers back as history:
// a signature Gemini put on a text part goes back on that text part, and
// code-execution parts go back verbatim with theirs.
func TestTextAndCodeSignaturesGoBack(t *testing.T) {
	for _, tc := range []struct{ file, golden string }{
		{"generate-thought-text.json", "request-history-thought-text.json"},
		{"generate-code-execution.json", "request-history-code-execution.json"},
		{"stream-code-execution.sse", "request-history-stream-code-execution.json"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			step := stepOf(t, tc.file)
			body, _ := sent(t, &llm.Request{Messages: []llm.Message{llm.UserText("First?"), step, llm.UserText("And then?")}})
			checkGolden(t, tc.golden, body)
			raw, err := os.ReadFile(filepath.Join(fixtureDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			// Every signature of the recording is in the request, once.
			for _, sig := range signaturesIn(raw) {
				if n := bytes.Count(body, []byte(sig)); n != 1 {
					t.Errorf("signature %.20q sent %d times", sig, n)
				}
			}
		})
	}
}

// signaturesIn lists the thoughtSignature values in a recording.
func signaturesIn(raw []byte) []string {
	var out []string
	for _, part := range bytes.Split(raw, []byte(`"thoughtSignature"`))[1:] {
		part = bytes.TrimLeft(part, ": ")
		if len(part) > 0 && part[0] == '"' {
			if end := bytes.IndexByte(part[1:], '"'); end >= 0 {
				out = append(out, string(part[1:1+end]))
			}
		}
	}
	return out
}

// conversation is the neutral conversation of the request golden test: a
// system prompt, an image, thinking and calls made by other providers
// (left out, and the calls get the placeholder signature), results (one an
// error, one with an image), a user remark after the results, tools, and
// every generation setting.
func conversation() *llm.Request {
	temp, topP := 0.5, 0.9
	return &llm.Request{
		Messages: []llm.Message{
			llm.SystemText("You are a weather assistant."),
			{Role: llm.RoleUser, Content: []llm.Block{
				llm.Image{Data: pngBytes, MediaType: "image/png"},
				llm.Text{Text: "What's the weather in Paris and Rome? The map shows both."},
				llm.File{FileID: "https://generativelanguage.googleapis.com/v1beta/files/abc", MediaType: "application/pdf"},
			}},
			{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.Thinking{Text: "Two cities, two calls.", Signature: "EqQBCkYIBxgCKkB-anthropic-sig"},
				llm.RedactedThinking{Data: "opaque"},
				llm.Text{Text: "I'll check both cities."},
				llm.ToolUse{ID: "toolu_01", Name: "get_weather", Input: json.RawMessage(`{"city":"Paris"}`)},
				llm.ToolUse{ID: "call_02", Name: "get_weather", Input: json.RawMessage(`{"city":"Rome"}`)},
			}},
			llm.ToolResultText("toolu_01", "Sunny, 24°C", false),
			{Role: llm.RoleTool, ToolCallID: "call_02", IsError: true, Content: []llm.Block{
				llm.Text{Text: "weather service timed out; radar attached"},
				llm.Image{URL: "data:image/png;base64,iVBORw0KGgo=", MediaType: "image/png"},
			}},
			llm.UserText("Retry Rome if you can."),
		},
		Tools: []llm.ToolDefinition{
			{Name: "get_weather", Description: "Current weather for a city.",
				Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "get_time", Description: "Local time in a city."},
		},
		ToolChoice:     llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "get_weather"},
		MaxTokens:      4096,
		Temperature:    &temp,
		TopP:           &topP,
		StopSequences:  []string{"\n\nUser:"},
		Reasoning:      &llm.Reasoning{BudgetTokens: 2048},
		ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`{"type":"object"}`)},
		Extra:          map[string]any{"safetySettings": []map[string]string{{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}}},
	}
}

// TestRequestGolden records the exact bytes sent for the neutral
// conversation, to the Gemini API and, with WithVertex and a built-in
// tool, to Vertex AI.
func TestRequestGolden(t *testing.T) {
	body, got := sent(t, conversation())
	checkGolden(t, "request-conversation.json", body)
	if got.url != "/v1beta/models/gemini-test:streamGenerateContent?alt=sse" {
		t.Errorf("posted to %s", got.url)
	}
	body, got = sent(t, conversation(), WithVertex("my-project", "europe-west4"), WithBuiltinTool("googleSearch"))
	checkGolden(t, "request-conversation-vertex.json", body)
	if want := "/v1/projects/my-project/locations/europe-west4/publishers/google/models/gemini-test:streamGenerateContent?alt=sse"; got.url != want {
		t.Errorf("posted to %s, want %s", got.url, want)
	}
}

// TestRequestsMatchRecordedOnes rebuilds the requests recorded next to
// the streams (what Google's SDKs and other clients sent) from neutral
// requests: after normalising what the API reads alike (snake_case names,
// systemInstruction's role, an empty generationConfig), the bodies must be
// equal.
func TestRequestsMatchRecordedOnes(t *testing.T) {
	zero := 0.0
	tests := []struct {
		file string
		req  *llm.Request
		opts []Option
	}{
		{"stream-text-multi-chunk.request.json", &llm.Request{Temperature: &zero, Messages: []llm.Message{
			llm.SystemText("You are a helpful chatbot."), llm.UserText("What is the capital of France?")}}, nil},
		{"stream-max-tokens.request.json", &llm.Request{MaxTokens: 50, Messages: []llm.Message{llm.UserText("List all U.S. states.")}}, nil},
		{"stream-thought-summaries-text.request.json", &llm.Request{Reasoning: &llm.Reasoning{BudgetTokens: 6400}, Messages: []llm.Message{
			llm.UserText("How many primes below 400 contain 79 as a substring? Answer ONLY with the number, not sharing which primes they are.")}}, nil},
		{"stream-grounding-google-search.request.json", &llm.Request{Messages: []llm.Message{
			llm.SystemText("You are a helpful chatbot."), llm.UserText("What is the weather in San Francisco today?")}},
			[]Option{WithBuiltinTool("googleSearch")}},
		{"stream-code-execution.request.json", &llm.Request{Messages: []llm.Message{
			llm.SystemText("Be concise and always use Python to do calculations no matter how small."), llm.UserText("what is 65465-6544 * 65464-6+1.02255")},
			Extra: map[string]any{"generationConfig": map[string]any{"responseModalities": []string{"TEXT"}}}},
			[]Option{WithBuiltinTool("codeExecution")}},
		{"stream-gemini-3-file-search-grounding.request.json", &llm.Request{Messages: []llm.Message{llm.UserText("What is the capital of France?")},
			Extra: map[string]any{
				"generationConfig": map[string]any{"responseModalities": []string{"TEXT"}},
				"toolConfig":       map[string]any{"includeServerSideToolInvocations": true},
				"tools": []any{map[string]any{"fileSearch": map[string]any{
					"fileSearchStoreNames": []string{"fileSearchStores/testfilesearchgroundingstre-p2hcv3cs2i69"}}}},
			}}, nil},
		{"stream-unexpected-tool-call.request.json", &llm.Request{Messages: []llm.Message{
			llm.SystemText("You are a calculator agent. You can calculate numbers.\n\nYou are an agent. Your internal name is \"calculator\". The description about you is \"calculator agent\\n Skills: add, subtract, multiply, divide\"."),
			llm.UserText("2 + 2")}}, nil},
		{"stream-parallel-function-calls-with-ids.request.json", &llm.Request{Messages: []llm.Message{
			llm.SystemText("You are a calculator assistant. You will recieve requests to add two integers. Respond with the sum of the two integers and you must use the sum tool to calculate the sum.\n\nYou are an agent. Your internal name is \"calculator\". The description about you is \"A calculator that can add two integers\"."),
			llm.UserText("Can you add 2 and 3? Also 4 and 5? And 6 and 7?")},
			Tools: []llm.ToolDefinition{{Name: "sum", Description: "sums two integers",
				Parameters: json.RawMessage(`{"additionalProperties":false,"properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"type":"object"}`)}}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			recordedBody, err := os.ReadFile(filepath.Join(fixtureDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			req := *tc.req
			req.Model = "gemini-test"
			body, _ := sent(t, &req, tc.opts...)
			want, got := normalizeRequest(t, recordedBody), normalizeRequest(t, body)
			// The ADK declares the tool's response schema too; agcore's
			// tool definitions have none.
			if decls, ok := pathOf(want, "tools", 0, "functionDeclarations").([]any); ok {
				for _, d := range decls {
					delete(d.(map[string]any), "responseJsonSchema")
				}
			}
			if !reflect.DeepEqual(want, got) {
				w, _ := json.Marshal(want)
				g, _ := json.Marshal(got)
				t.Errorf("sent\n%s\nrecorded\n%s", g, w)
			}
		})
	}
}

// normalizeRequest decodes a request body with camelCase names, without
// systemInstruction's role (the API ignores it) and an empty
// generationConfig.
func normalizeRequest(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	v = camel(v).(map[string]any)
	if si, ok := v["systemInstruction"].(map[string]any); ok {
		delete(si, "role")
	}
	if gc, ok := v["generationConfig"].(map[string]any); ok && len(gc) == 0 {
		delete(v, "generationConfig")
	}
	return v
}

func camel(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			parts := strings.Split(k, "_")
			for i := 1; i < len(parts); i++ {
				if parts[i] != "" {
					parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
				}
			}
			out[strings.Join(parts, "")] = camel(x)
		}
		return out
	case []any:
		for i := range v {
			v[i] = camel(v[i])
		}
	}
	return v
}

func pathOf(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
