package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

// fixtureDirs are the recordings this adapter must replay.
var fixtureDirs = []string{"openai", "deepseek", "openai-compatible"}

// TestFixturesReplay replays every recording (streams in
// streaming mode, JSON bodies in blocking mode with the status their file
// name gives) and compares the result with a golden file read by hand.
func TestFixturesReplay(t *testing.T) {
	n := 0
	for _, dir := range fixtureDirs {
		files, err := os.ReadDir(filepath.Join(fixtureDir, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := f.Name()
			rel := dir + "/" + name
			body := readFixture(t, rel)
			n++
			t.Run(rel, func(t *testing.T) {
				switch {
				case strings.HasSuffix(name, ".sse"):
					// Written at once, with a charset; TestConformance
					// replays every piece size.
					srv, _ := replay(t, http.StatusOK, "text/event-stream; charset=utf-8", body, 0)
					_, resp, err := drain(t, testModel(srv).Stream(bg, userRequest()))
					checkGolden(t, strings.TrimSuffix(rel, ".sse")+".stream", marshalGolden(t, goldenOf(t, resp, err)))
				case strings.HasSuffix(name, ".json"):
					srv, _ := replay(t, statusOf(name), "application/json", body, 0)
					resp, err := testModel(srv).Generate(bg, userRequest())
					checkGolden(t, strings.TrimSuffix(rel, ".json")+".generate", marshalGolden(t, goldenOf(t, resp, err)))
				default:
					t.Fatalf("unexpected fixture %s", rel)
				}
			})
		}
	}
	if n < 28 {
		t.Fatalf("replayed only %d fixtures", n)
	}
}

// TestFixturesJSONAsStream checks that a server answering a stream request
// with a plain JSON body (it ignored "stream": true) still streams.
func TestFixturesJSONAsStream(t *testing.T) {
	for _, rel := range []string{"openai/chat-parallel-tool-calls.json", "deepseek/reasoner-text-reasoning.json"} {
		t.Run(rel, func(t *testing.T) {
			body := readFixture(t, rel)
			srv, _ := replay(t, http.StatusOK, "application/json", body, 0)
			m := testModel(srv)
			_, streamed, err := drain(t, m.Stream(bg, userRequest()))
			if err != nil {
				t.Fatal(err)
			}
			blocking, err := m.Generate(bg, userRequest())
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(goldenOf(t, streamed, nil))
			b, _ := json.Marshal(goldenOf(t, blocking, nil))
			if string(a) != string(b) {
				t.Fatalf("streamed %s\nblocking %s", a, b)
			}
		})
	}
}

// want is a fact about a recording, written from the recording itself (see
// PROVENANCE.md), not from the parser's output.
type want struct {
	text, thinkingPrefix string
	tools                []llm.ToolUse
	finish               llm.FinishReason
	usage                llm.Usage
	err                  *llm.Error // Kind, StatusCode, Code, Message prefix
}

func call(id, name, input string) llm.ToolUse {
	return llm.ToolUse{ID: id, Name: name, Input: json.RawMessage(input)}
}

var fixtureFacts = map[string]want{
	"openai/chat-cached-tokens.json": {finish: llm.FinishStop, usage: llm.Usage{InputTokens: 3663, OutputTokens: 117, CachedInputTokens: 3584}},
	"openai/chat-finish-length.json": {finish: llm.FinishLength, usage: llm.Usage{InputTokens: 14, OutputTokens: 50}},
	"openai/chat-parallel-tool-calls.json": {finish: llm.FinishToolUse, usage: llm.Usage{InputTokens: 110, OutputTokens: 50},
		tools: []llm.ToolUse{call("call_2wt6qUGrlxczUadZYf3qXyH0", "add", `{"a": 2, "b": 3}`), call("call_vZOWZaH7tzu0rLZeogtafvrf", "multiply", `{"a": 2, "b": 3}`)}},
	"openai/chat-refusal.json": {text: "I'm very sorry, but I can't assist with that request.", finish: llm.FinishRefusal, usage: llm.Usage{InputTokens: 64, OutputTokens: 13}},
	"openai/chat-tool-call.json": {finish: llm.FinishToolUse, usage: llm.Usage{InputTokens: 81, OutputTokens: 14},
		tools: []llm.ToolUse{call("call_olc8qHf1RDItRqwuEBNjsu3B", "getCurrentWeather", `{"location":"Boston"}`)}},
	"openai/chat-stream-finish-length.sse": {finish: llm.FinishLength, usage: llm.Usage{InputTokens: 14, OutputTokens: 50}},
	"openai/chat-stream-parallel-tool-calls-gpt-5.sse": {finish: llm.FinishToolUse, usage: llm.Usage{InputTokens: 190, OutputTokens: 379, ReasoningTokens: 320},
		tools: []llm.ToolUse{call("call_8ElDxJj6u7IUDEwQIrwFbveM", "add", `{"a": 2, "b": 3}`), call("call_HEZOX3JzspqFubADMNdWn12E", "multiply", `{"a": 2, "b": 3}`)}},
	"openai/chat-stream-parallel-tool-calls.sse": {finish: llm.FinishToolUse, usage: llm.Usage{InputTokens: 106, OutputTokens: 50},
		tools: []llm.ToolUse{call("call_cclGbjTQkZDEnnHrRiU0n7NO", "add", `{"a": 2, "b": 3}`), call("call_Nob2SzTcxIjro1HvSBPQS6XG", "multiply", `{"a": 2, "b": 3}`)}},
	"openai/chat-stream-refusal.sse":    {text: "I'm very sorry, but I can't assist with that request.", finish: llm.FinishRefusal, usage: llm.Usage{InputTokens: 64, OutputTokens: 13}},
	"openai/chat-stream-text-usage.sse": {text: "1, 2, 3, 4, 5", finish: llm.FinishStop, usage: llm.Usage{InputTokens: 14, OutputTokens: 13}},
	"openai/chat-stream-tool-call-usage.sse": {finish: llm.FinishToolUse, usage: llm.Usage{InputTokens: 53, OutputTokens: 15},
		tools: []llm.ToolUse{call("call_ZR5UUuTt3pf61kjwAJIYdVMj", "get_capital", `{"country":"UK"}`)}},
	"openai/error-400-unsupported-parameter-max-tokens.json": {err: &llm.Error{Kind: llm.KindInvalidRequest, StatusCode: 400, Code: "unsupported_parameter", Message: "Unsupported parameter: 'max_tokens'"}},
	"openai/error-400-unsupported-parameter.json":            {err: &llm.Error{Kind: llm.KindInvalidRequest, StatusCode: 400, Code: "unsupported_parameter", Message: "Unsupported parameter: 'stop'"}},
	"openai/error-401-invalid-api-key.json":                  {err: &llm.Error{Kind: llm.KindAuth, StatusCode: 401, Code: "invalid_api_key", Message: "Incorrect API key provided"}},
	"openai/error-404-model-not-found.json":                  {err: &llm.Error{Kind: llm.KindInvalidRequest, StatusCode: 404, Code: "model_not_found", Message: "The model `this-model-does-not-exist-12345` does not exist"}},

	"deepseek/chat-stream-finish-length.sse":         {finish: llm.FinishLength, usage: llm.Usage{InputTokens: 13, OutputTokens: 400}},
	"deepseek/reasoner-stream-reasoning-content.sse": {thinkingPrefix: "Hmm, the", finish: llm.FinishStop, usage: llm.Usage{InputTokens: 6, OutputTokens: 212, ReasoningTokens: 198}},
	"deepseek/reasoner-stream-tool-call-cache-hit.sse": {thinkingPrefix: "The user is asking", finish: llm.FinishToolUse,
		usage: llm.Usage{InputTokens: 339, OutputTokens: 83, CachedInputTokens: 320, ReasoningTokens: 39},
		tools: []llm.ToolUse{call("call_00_ioIn7yN9p1ZOMNpDLwd4MgAF", "weather", `{"location": "San Francisco"}`)}},
	"deepseek/reasoner-text-reasoning.json": {thinkingPrefix: "Okay, the user is asking how to cross the street.", finish: llm.FinishStop, usage: llm.Usage{InputTokens: 12, OutputTokens: 789, ReasoningTokens: 415}},
	"deepseek/reasoner-tool-call-cache-hit.json": {thinkingPrefix: "The user is asking for the weather in San Francisco.", finish: llm.FinishToolUse,
		usage: llm.Usage{InputTokens: 339, OutputTokens: 92, CachedInputTokens: 320, ReasoningTokens: 48},
		tools: []llm.ToolUse{call("call_00_9V0vrf86Pc9aelHCJMZqnJBo", "weather", `{"location": "San Francisco"}`)}},
	"deepseek/v4-flash-parallel-tool-calls-reasoning.json": {text: "Let me get your name and roll the die!", thinkingPrefix: "Great, now I have access", finish: llm.FinishToolUse,
		usage: llm.Usage{InputTokens: 875, OutputTokens: 79, ReasoningTokens: 26},
		tools: []llm.ToolUse{call("call_00_6edlnw3Z1MgeMfey687g8451", "get_player_name", `{}`), call("call_01_km02sac7sHxNDPATKLZy7705", "roll_dice", `{}`)}},
	"deepseek/v4-flash-text-reasoning-cache-hit.json": {thinkingPrefix: "The player's name is Anne", finish: llm.FinishStop,
		usage: llm.Usage{InputTokens: 976, OutputTokens: 61, CachedInputTokens: 896, ReasoningTokens: 25}},

	"openai-compatible/anthropic-openai-compat-stream-tool-call-index-1.sse": {text: "Reading it.", finish: llm.FinishToolUse,
		tools: []llm.ToolUse{call("toolu_sanitized", "read_file", `{"path": "a.txt"}`)}},
	"openai-compatible/azure-openai-stream-prompt-filter-results.sse": {text: "Capital of Denmark.", finish: llm.FinishStop, usage: llm.Usage{InputTokens: 15, OutputTokens: 78, ReasoningTokens: 64}},
	"openai-compatible/groq-stream-midstream-error-event.sse":         {err: &llm.Error{Kind: llm.KindInvalidRequest, StatusCode: 200, Code: "tool_use_failed", Message: "Tool call validation failed"}},
	"openai-compatible/groq-stream-parallel-tool-calls-x-groq-usage.sse": {text: "I'll perform both addition and multiplication on the numbers 2 and 3 for you.", finish: llm.FinishToolUse,
		usage: llm.Usage{InputTokens: 201, OutputTokens: 58},
		tools: []llm.ToolUse{call("functions.add:0", "add", `{"a":2,"b":3}`), call("functions.multiply:1", "multiply", `{"a":2,"b":3}`)}},
	"openai-compatible/openrouter-stream-comments-midstream-error.sse": {err: &llm.Error{Kind: llm.KindInvalidRequest, StatusCode: 200, Code: "400", Message: "Token limit reached"}},
	// xAI counts reasoning outside completion_tokens (total 493 = 390 + 26 + 77).
	"openai-compatible/xai-stream-reasoning-whole-tool-call.sse": {thinkingPrefix: "The user", finish: llm.FinishToolUse,
		usage: llm.Usage{InputTokens: 390, OutputTokens: 26 + 77, CachedInputTokens: 384, ReasoningTokens: 77},
		tools: []llm.ToolUse{call("call_53816330", "weather", `{"location":"Florence,Italy"}`)}},
}

// TestFixtureFacts checks what each recording is known to hold.
func TestFixtureFacts(t *testing.T) {
	for _, dir := range fixtureDirs {
		files, _ := os.ReadDir(filepath.Join(fixtureDir, dir))
		for _, f := range files {
			rel := dir + "/" + f.Name()
			if _, ok := fixtureFacts[rel]; !ok {
				t.Errorf("no facts for %s", rel)
			}
		}
	}
	for rel, w := range fixtureFacts {
		t.Run(rel, func(t *testing.T) {
			body := readFixture(t, rel)
			var resp *llm.Response
			var err error
			if strings.HasSuffix(rel, ".sse") {
				srv, _ := replay(t, http.StatusOK, "text/event-stream", body, 0)
				_, resp, err = drain(t, testModel(srv).Stream(bg, userRequest()))
			} else {
				srv, _ := replay(t, statusOf(filepath.Base(rel)), "application/json", body, 0)
				resp, err = testModel(srv).Generate(bg, userRequest())
			}
			if w.err != nil {
				checkError(t, err, w.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkResponse(t, resp, w)
		})
	}
}

func checkError(t *testing.T, err error, w *llm.Error) {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want an *llm.Error", err)
	}
	if le.Kind != w.Kind || le.StatusCode != w.StatusCode || le.Code != w.Code || !strings.HasPrefix(le.Message, w.Message) {
		t.Fatalf("error = {%s %d %q %q}, want {%s %d %q %q...}", le.Kind, le.StatusCode, le.Code, le.Message, w.Kind, w.StatusCode, w.Code, w.Message)
	}
	if le.Provider != "openai" {
		t.Fatalf("provider = %q", le.Provider)
	}
}

func checkResponse(t *testing.T, resp *llm.Response, w want) {
	t.Helper()
	if resp.FinishReason != w.finish {
		t.Errorf("finish = %s, want %s", resp.FinishReason, w.finish)
	}
	if resp.Usage != w.usage {
		t.Errorf("usage = %+v, want %+v", resp.Usage, w.usage)
	}
	if w.text != "" && resp.Message.Text() != w.text {
		t.Errorf("text = %q, want %q", resp.Message.Text(), w.text)
	}
	var thinking string
	for _, b := range resp.Message.Content {
		if th, ok := b.(llm.Thinking); ok {
			thinking += th.Text
		}
	}
	if !strings.HasPrefix(thinking, w.thinkingPrefix) || (w.thinkingPrefix == "") != (thinking == "") {
		t.Errorf("thinking = %.60q..., want it to start with %q", thinking, w.thinkingPrefix)
	}
	got := resp.Message.ToolUses()
	if len(got) != len(w.tools) {
		t.Fatalf("tool calls = %v, want %v", got, w.tools)
	}
	for i, tc := range got {
		wt := w.tools[i]
		if (wt.ID != "" && tc.ID != wt.ID) || tc.Name != wt.Name || !sameJSON(tc.Input, wt.Input) {
			t.Errorf("tool call %d = %s %s %s, want %s %s %s", i, tc.ID, tc.Name, tc.Input, wt.ID, wt.Name, wt.Input)
		}
	}
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}
