package main_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/usage"
)

// The recorded streams' answers, as the fixtures hold them.
const (
	openaiFixtureText    = "1, 2, 3, 4, 5"
	anthropicFixtureText = "1\n2\n3\n4\n5"
	deepseekFixtureText  = "Hello there! 😊 How can I help you today?"
	geminiFixtureText    = "Olá!"
)

func TestRunStreamsTheAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		provider string
		fixture  string
		path     string // where the request must go
		want     string
	}{
		{"openai", "openai", "openai/chat-stream-text-usage.sse", "/v1/chat/completions", openaiFixtureText},
		{"anthropic", "anthropic", "anthropic/messages-stream-text.sse", "/v1/messages", anthropicFixtureText},
		{"deepseek", "deepseek", "deepseek/reasoner-stream-reasoning-content.sse", "/chat/completions", deepseekFixtureText},
		{"gemini", "gemini", "gemini/stream-text.sse", "/v1beta/models/m-1:streamGenerateContent", geminiFixtureText},
		{"compatible", "compatible", "openai/chat-stream-text-usage.sse", "/v1/chat/completions", openaiFixtureText},
		{"openai-responses", "openai-responses", "openai-responses/responses-stream-text.sse", "/v1/responses", `Hi in Portuguese is "Oi!"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, fixture(t, tt.fixture))
			c := newCLI(t)
			base := srv.URL + "/v1"
			if tt.provider == "anthropic" || tt.provider == "deepseek" || tt.provider == "gemini" {
				base = srv.URL // Anthropic appends /v1/messages, Gemini /v1beta/models/...; DeepSeek's base has no /v1
			}
			r := c.ok("run", "--provider", tt.provider, "--model", "m-1", "--base-url", base, "--hide-thinking", "Count to five")
			if r.stdout != tt.want+"\n" {
				t.Errorf("stdout = %q, want the streamed answer %q and a newline", r.stdout, tt.want)
			}
			if !strings.Contains(r.stderr, " input / ") || !strings.Contains(r.stderr, " output tokens") {
				t.Errorf("stderr has no usage line:\n%s", r.stderr)
			}
			if !strings.Contains(r.stderr, "session ") {
				t.Errorf("stderr does not name the new session:\n%s", r.stderr)
			}
			reqs := srv.got()
			if len(reqs) != 1 || reqs[0].path != tt.path {
				t.Fatalf("requests = %d, first to %q; want one to %s", len(reqs), reqs[0].path, tt.path)
			}
			if tt.provider == "gemini" {
				if reqs[0].body["contents"] == nil {
					t.Errorf("request %v has no contents", reqs[0].body)
				}
			} else if reqs[0].body["model"] != "m-1" || reqs[0].body["stream"] != true {
				t.Errorf("request model %v stream %v, want m-1 streamed", reqs[0].body["model"], reqs[0].body["stream"])
			}
		})
	}
}

func TestJSONEventsInOrderWithExactShapes(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		openaiReply(turn{text: "Let me look.", calls: []call{{"call_1", "read_file", `{"path":"notes.txt"}`}}, in: 100, out: 20, cached: 0}),
		openaiReply(turn{text: "The notes say hello.", in: 150, out: 10, cached: 100}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	writeFiles(t, c.dir, map[string]string{"notes.txt": "hello\n"})
	r := c.ok("run", "--json", "--session", "s-json", "What do the notes say?")
	evs := events(t, r.stdout)

	// The order: start, text deltas, the call, its result, text deltas, done.
	var kinds []string
	for _, e := range evs {
		if k := e.typ(); len(kinds) == 0 || kinds[len(kinds)-1] != k {
			kinds = append(kinds, k)
		}
	}
	wantKinds := []string{"start", "text_delta", "tool_call", "tool_result", "text_delta", "done"}
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Fatalf("event order = %v, want %v", kinds, wantKinds)
	}
	shapes := map[string][]string{
		"start":       {"model", "session", "type"},
		"text_delta":  {"text", "type"},
		"tool_call":   {"id", "input", "name", "type"},
		"tool_result": {"id", "is_error", "name", "output", "type"},
		"done":        {"cost_known", "cost_usd", "finish_reason", "text", "type", "usage"},
	}
	for _, e := range evs {
		var keys []string
		for k := range e {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if want := shapes[e.typ()]; !reflect.DeepEqual(keys, want) {
			t.Errorf("%s event has keys %v, want %v", e.typ(), keys, want)
		}
	}
	if s := evs[0]; s["session"] != "s-json" || s["model"] != "gpt-4o-mini" {
		t.Errorf("start = %v", s)
	}
	if got := deltas(evs, "text_delta"); got != "Let me look.The notes say hello." {
		t.Errorf("text deltas = %q", got)
	}
	tc := ofType(evs, "tool_call")[0]
	if tc["id"] != "call_1" || tc["name"] != "read_file" || !reflect.DeepEqual(tc["input"], map[string]any{"path": "notes.txt"}) {
		t.Errorf("tool_call = %v", tc)
	}
	tr := ofType(evs, "tool_result")[0]
	if tr["id"] != "call_1" || tr["name"] != "read_file" || tr["is_error"] != false || tr["output"] != "hello\n" {
		t.Errorf("tool_result = %v", tr)
	}
	done := last(t, evs)
	if done["finish_reason"] != "stop" || done["text"] != "The notes say hello." {
		t.Errorf("done = %v", done)
	}
	// Usage and cost are summed over both model calls.
	wantUsage := map[string]any{"input_tokens": 250.0, "output_tokens": 30.0, "cached_input_tokens": 100.0}
	if !reflect.DeepEqual(done["usage"], wantUsage) {
		t.Errorf("done.usage = %v, want %v", done["usage"], wantUsage)
	}
	mini, _ := catalog.Default().LookupFor("openai", "gpt-4o-mini")
	cost, known := usage.CostOf(mini, llm.Usage{InputTokens: 250, OutputTokens: 30, CachedInputTokens: 100})
	if got, _ := done["cost_usd"].(float64); !known || math.Abs(got-cost) > 1e-12 || cost == 0 {
		t.Errorf("done.cost_usd = %v, want %v", done["cost_usd"], cost)
	}
	if r.stderr != "" {
		t.Errorf("--json wrote to stderr: %q", r.stderr)
	}
}

func TestThinkingDeltasAndHideThinking(t *testing.T) {
	t.Parallel()
	srv := newFake(t, fixture(t, "deepseek/reasoner-stream-reasoning-content.sse"), fixture(t, "deepseek/reasoner-stream-reasoning-content.sse"))
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "deepseek"
	c.env["DEEPSEEK_BASE_URL"] = srv.URL
	c.env["DEEPSEEK_API_KEY"] = "sk-test"
	c.env["AGCORE_MODEL"] = "deepseek-reasoner"

	evs := events(t, c.ok("run", "--json", "Hi").stdout)
	thinking, text := ofType(evs, "thinking_delta"), ofType(evs, "text_delta")
	if len(thinking) == 0 || len(text) == 0 {
		t.Fatalf("got %d thinking and %d text deltas, want both", len(thinking), len(text))
	}
	firstText := 0
	for i, e := range evs {
		if e.typ() == "text_delta" {
			firstText = i
			break
		}
	}
	for i, e := range evs {
		if e.typ() == "thinking_delta" && i > firstText {
			t.Errorf("thinking delta at %d after the first text delta at %d", i, firstText)
			break
		}
	}
	if got := deltas(evs, "text_delta"); got != deltaText(last(t, evs)) || got != deepseekFixtureText {
		t.Errorf("text deltas %q, done.text %q, want %q", got, deltaText(last(t, evs)), deepseekFixtureText)
	}

	r := c.ok("run", "--hide-thinking", "Hi")
	if strings.Contains(r.stderr, "thinking") || r.stdout != deepseekFixtureText+"\n" {
		t.Errorf("--hide-thinking: stdout %q, stderr %q", r.stdout, r.stderr)
	}
}

func deltaText(done event) string { s, _ := done["text"].(string); return s }

func TestParallelToolLoopOverFiles(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		openaiReply(turn{calls: []call{
			{"call_a", "read_file", `{"path":"a.txt"}`},
			{"call_b", "read_file", `{"path":"sub/b.txt","offset":2,"limit":1}`},
			{"call_c", "grep", `{"pattern":"needle"}`},
		}, in: 50, out: 30}),
		openaiReply(turn{text: "a says alpha, b says beta-2.", in: 90, out: 12}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "alpha\n", "sub/b.txt": "beta-1\nbeta-2\nbeta-3\n", "c.md": "a needle here\n"})
	r := c.ok("run", "--root", root, "Compare the files")

	if r.stdout != "a says alpha, b says beta-2.\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	for _, want := range []string{"→ read_file path=\"a.txt\"", "→ grep pattern=\"needle\"", "✓ read_file", "✓ grep"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	// The second request answers each call, in call order, right after it.
	var msgs []map[string]any
	raw, _ := json.Marshal(srv.got()[1].body["messages"])
	json.Unmarshal(raw, &msgs)
	var results []string
	for _, m := range msgs {
		if m["role"] == "tool" {
			results = append(results, fmt.Sprintf("%v=%v", m["tool_call_id"], m["content"]))
		}
	}
	want := []string{"call_a=alpha\n", "call_b=beta-2\n", "call_c=c.md:1: a needle here"}
	if len(results) != 3 || results[0] != want[0] || results[1] != want[1] || !strings.HasPrefix(results[2], want[2]) {
		t.Errorf("tool results sent back = %q, want %q", results, want)
	}
	tools, _ := srv.got()[0].body["tools"].([]any)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	if !reflect.DeepEqual(names, []string{"read_file", "list_dir", "grep"}) {
		t.Errorf("tools offered = %v, want the default read_file, list_dir, grep", names)
	}
}

func TestSessionContinuesAcrossRuns(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		openaiReply(turn{text: "Nice to meet you, Ada.", in: 20, out: 6}),
		openaiReply(turn{text: "Your name is Ada.", in: 40, out: 5}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	c.ok("run", "--session", "ada", "My name is Ada.")
	c.ok("run", "--session", "ada", "What is my name?")

	second := srv.messages(1)
	for _, want := range []string{"My name is Ada.", "Nice to meet you, Ada.", "What is my name?"} {
		if !strings.Contains(second, want) {
			t.Errorf("the second request lacks %q: %s", want, second)
		}
	}
	if s := c.show("ada"); len(s.Messages) != 4 || s.ID != "ada" {
		t.Errorf("stored session %q has %d messages, want 4", s.ID, len(s.Messages))
	}
	// A run without --session starts a new session and prints its id.
	srv.add(openaiReply(turn{text: "Hello.", in: 5, out: 1}))
	r := c.ok("run", "Hello?")
	if strings.Contains(srv.messages(2), "Ada") {
		t.Error("a run without --session saw another session's history")
	}
	if !regexp.MustCompile(`(?m)^session [0-9a-f]{24}-[0-9]{8}-`).MatchString(r.stderr) {
		t.Errorf("the new session's id is not printed: %s", r.stderr)
	}
}

func TestFailedTurnLeavesTheSessionUnchanged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply reply
		code  string
	}{
		{"connection lost mid-stream", openaiReply(turn{text: "Partial answer that never ends", cut: true}), "network"},
		{"rate limited", status(429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`), "rate_limited"},
		{"bad key", status(401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`), "auth"},
		{"server error", status(500, `{"error":{"message":"The server had an error","type":"server_error"}}`), "server"},
		{"context too long", status(400, `{"error":{"message":"This model's maximum context length is 128000 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}`), "context_length"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if i != 0 && i != len(tests)-1 {
				skipShort(t, "the first and last kinds of failure run in -short")
			}
			srv := newFake(t, openaiReply(turn{text: "First answer.", in: 10, out: 2}), tt.reply)
			c := newCLI(t).openai(srv, "sk-test")
			c.ok("run", "--session", "s1", "First question")
			before := c.show("s1")

			r := c.run("", "run", "--json", "--session", "s1", "Second question")
			if r.code == 0 {
				t.Fatalf("exit 0 after a failed turn; stdout:\n%s", r.stdout)
			}
			evs := events(t, r.stdout)
			e := last(t, evs)
			if e.typ() != "error" || e["code"] != tt.code || e["message"] == "" {
				t.Errorf("last event = %v, want an error with code %s", e, tt.code)
			}
			if len(ofType(evs, "done")) != 0 {
				t.Error("a done event came with the error")
			}
			if after := c.show("s1"); !reflect.DeepEqual(after, before) {
				t.Errorf("the session changed:\nbefore %d messages\nafter  %d messages", len(before.Messages), len(after.Messages))
			}
		})
	}
}

func TestMaxStepsStopsWithEveryCallAnswered(t *testing.T) {
	t.Parallel()
	loop := func(i int) reply {
		return openaiReply(turn{text: fmt.Sprintf("Step %d.", i), calls: []call{
			{fmt.Sprintf("call_%d_a", i), "list_dir", `{}`}, {fmt.Sprintf("call_%d_b", i), "list_dir", `{"path":"."}`},
		}, in: 10, out: 5})
	}
	srv := newFake(t, loop(1), loop(2))
	c := newCLI(t).openai(srv, "sk-test")
	r := c.ok("run", "--json", "--max-steps", "2", "--session", "loop", "Loop forever")

	done := last(t, events(t, r.stdout))
	if done.typ() != "done" || done["finish_reason"] != "max_steps" {
		t.Fatalf("last event = %v, want done with finish_reason max_steps", done)
	}
	if n := len(srv.got()); n != 2 {
		t.Errorf("%d model calls, want 2 (--max-steps)", n)
	}
	msgs := decodeMessages(t, c.show("loop").Messages)
	answered := map[string]int{}
	for i, m := range msgs {
		for _, u := range m.ToolUses() {
			answered[u.ID] = -1
			for j := i + 1; j < len(msgs) && msgs[j].Role == llm.RoleTool; j++ {
				if msgs[j].ToolCallID == u.ID {
					answered[u.ID] = j
				}
			}
		}
	}
	if len(answered) != 4 {
		t.Errorf("%d tool calls stored, want 4", len(answered))
	}
	for id, at := range answered {
		if at < 0 {
			t.Errorf("tool call %s has no result right after its message", id)
		}
	}
	if lastMsg := msgs[len(msgs)-1]; lastMsg.Role != llm.RoleTool || !lastMsg.IsError || !strings.Contains(lastMsg.Text(), "limit of 2") {
		t.Errorf("the stored turn ends with %v %q, want the error result of a call not run", lastMsg.Role, lastMsg.Text())
	}
}

// decodeMessages decodes stored messages with the message model's own JSON.
func decodeMessages(t *testing.T, raw []json.RawMessage) []llm.Message {
	t.Helper()
	out := make([]llm.Message, len(raw))
	for i, r := range raw {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatalf("message %d does not decode: %v: %s", i, err, r)
		}
	}
	return out
}

// TestResponsesToolLoopSendsReasoningBack: through the whole CLI (agent,
// tool loop, session), a real Responses API stream that reasons (encrypted)
// and then calls a tool leads to a second request that carries the
// reasoning item back, before the call and its result.
func TestResponsesToolLoopSendsReasoningBack(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		fixture(t, "openai-responses/responses-stream-reasoning-summary-encrypted-function-call.sse"),
		fixture(t, "openai-responses/responses-stream-reasoning-summary-text-after-tool.sse"))
	c := newCLI(t)
	r := c.ok("run", "--provider", "openai-responses", "--model", "gpt-5", "--base-url", srv.URL+"/v1", "--hide-thinking", "What's the weather in Florence, Italy?")
	if !strings.HasPrefix(r.stdout, "Right now in Florence") {
		t.Fatalf("stdout = %q", r.stdout)
	}
	reqs := srv.got()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var types []string
	var reasoning map[string]any
	for _, it := range reqs[1].body["input"].([]any) {
		item := it.(map[string]any)
		types = append(types, fmt.Sprint(item["type"]))
		if item["type"] == "reasoning" {
			reasoning = item
		}
	}
	if !strings.Contains(strings.Join(types, " "), "reasoning function_call function_call_output") {
		t.Fatalf("second request's items = %v", types)
	}
	if reasoning["id"] != "rs_017e85da2ae23b69016a3c1251dcec819daf72930a854fd4d1" || !strings.HasPrefix(fmt.Sprint(reasoning["encrypted_content"]), "gAAAAAB") {
		t.Fatalf("reasoning item = %v", reasoning)
	}
	if reqs[1].body["store"] != false || fmt.Sprint(reqs[1].body["include"]) != "[reasoning.encrypted_content]" {
		t.Fatalf("second request: store %v include %v", reqs[1].body["store"], reqs[1].body["include"])
	}
}
