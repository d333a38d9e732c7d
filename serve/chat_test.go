package serve_test

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/tool"
)

type addIn struct {
	A int `json:"a"`
	B int `json:"b"`
}

func addTool(opts ...tool.Option) tool.Tool {
	return tool.MustFunc("add", "Add two numbers.", func(_ context.Context, in addIn) (int, error) { return in.A + in.B, nil }, opts...)
}

// toolScript: the model thinks, calls the server's add tool, then answers.
func toolScript(t *testing.T) *llmtest.Model {
	return llmtest.New(
		llmtest.Reply(llm.Thinking{Text: "I should add."}, llm.Text{Text: "Let me add."}, llmtest.Call("call_1", "add", `{"a":2,"b":3}`)).WithUsage(llm.Usage{InputTokens: 20, OutputTokens: 5}),
		llmtest.Text("The sum is 5.").WithUsage(llm.Usage{InputTokens: 30, OutputTokens: 4, CachedInputTokens: 20}),
	).Verify(t)
}

func user(content any) map[string]any { return map[string]any{"role": "user", "content": content} }

func TestChatNonStream(t *testing.T) {
	m := toolScript(t)
	e := newEnv(t, serve.Options{}, agentSpec{name: "calc", model: m, tools: []tool.Tool{addTool()}})
	resp := e.do("POST", "/v1/chat/completions", map[string]any{
		"model": "calc",
		"messages": []any{
			map[string]any{"role": "system", "content": "Be exact."},
			user("What is 1+1?"),
			map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "old_1", "type": "function", "function": map[string]any{"name": "add", "arguments": `{"a":1,"b":1}`}}}},
			map[string]any{"role": "tool", "tool_call_id": "old_1", "content": "2"},
			map[string]any{"role": "assistant", "content": "2"},
			user([]any{map[string]any{"type": "text", "text": "And 2+3?"}}),
		},
	})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, decode(t, resp))
	}
	got := decode(t, resp)
	if got["object"] != "chat.completion" || !strings.HasPrefix(got["id"].(string), "chatcmpl-") || got["model"] != "calc" || got["created"].(float64) == 0 {
		t.Fatalf("envelope %v", got)
	}
	ch := got["choices"].([]any)[0].(map[string]any)
	msg := ch["message"].(map[string]any)
	if msg["role"] != "assistant" || msg["content"] != "Let me add.\n\nThe sum is 5." || ch["finish_reason"] != "stop" {
		t.Fatalf("choice %v", ch)
	}
	if msg["tool_calls"] != nil {
		t.Fatalf("the server's own tool calls are shown to the client: %v", msg["tool_calls"])
	}
	if msg["reasoning_content"] != "I should add." {
		t.Errorf("reasoning_content %v", msg["reasoning_content"])
	}
	u := got["usage"].(map[string]any)
	if u["prompt_tokens"] != 50.0 || u["completion_tokens"] != 9.0 || u["total_tokens"] != 59.0 || u["prompt_tokens_details"].(map[string]any)["cached_tokens"] != 20.0 {
		t.Errorf("usage %v", u)
	}
	// The model saw the instructions and the whole history, converted.
	req := m.Requests()[0]
	if req.Messages[0].Role != llm.RoleSystem || req.Messages[0].Text() != "Be exact." {
		t.Errorf("system message %v", req.Messages[0])
	}
	hist := req.Messages[1:]
	if len(hist) != 5 || hist[1].ToolUses()[0].Name != "add" || hist[2].Role != llm.RoleTool || hist[2].ToolCallID != "old_1" || hist[4].Text() != "And 2+3?" {
		data, _ := json.Marshal(hist)
		t.Errorf("history %s", data)
	}
	// Stateless: nothing stored.
	if page, _ := e.store.List(context.Background(), sessionListAll()); len(page.Sessions) != 0 {
		t.Errorf("a chat completion stored sessions: %v", page.Sessions)
	}
}

func TestChatStream(t *testing.T) {
	for _, includeUsage := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "include_usage"}[includeUsage], func(t *testing.T) {
			e := newEnv(t, serve.Options{}, agentSpec{name: "calc", model: toolScript(t), tools: []tool.Tool{addTool()}})
			body := map[string]any{"model": "calc", "stream": true, "messages": []any{user("2+3?")}}
			if includeUsage {
				body["stream_options"] = map[string]any{"include_usage": true}
			}
			evs := readEvents(t, e.do("POST", "/v1/chat/completions", body))
			if evs[len(evs)-1].data != "[DONE]" {
				t.Fatalf("last event %q", evs[len(evs)-1].data)
			}
			var text, reasoning strings.Builder
			var finish []string
			var usage map[string]any
			id := ""
			for i, ev := range evs[:len(evs)-1] {
				c := jsonOf(t, ev.data)
				if c["object"] != "chat.completion.chunk" || c["model"] != "calc" {
					t.Fatalf("chunk %s", ev.data)
				}
				if id == "" {
					id = c["id"].(string)
				} else if c["id"] != id {
					t.Fatalf("chunk ids differ: %s", ev.data)
				}
				if u, ok := c["usage"].(map[string]any); ok {
					usage = u
					if len(c["choices"].([]any)) != 0 {
						t.Errorf("the usage chunk has choices: %s", ev.data)
					}
					continue
				}
				ch := c["choices"].([]any)[0].(map[string]any)
				d := ch["delta"].(map[string]any)
				if (i == 0) != (d["role"] == "assistant") {
					t.Errorf("role on chunk %d: %s", i, ev.data)
				}
				if s, ok := d["content"].(string); ok {
					text.WriteString(s)
				}
				if s, ok := d["reasoning_content"].(string); ok {
					reasoning.WriteString(s)
				}
				if d["tool_calls"] != nil {
					t.Errorf("the server's tool call is shown: %s", ev.data)
				}
				if f, ok := ch["finish_reason"].(string); ok {
					finish = append(finish, f)
				}
			}
			if text.String() != "Let me add.\n\nThe sum is 5." || reasoning.String() != "I should add." {
				t.Errorf("text %q, reasoning %q", text.String(), reasoning.String())
			}
			if len(finish) != 1 || finish[0] != "stop" {
				t.Errorf("finish reasons %v", finish)
			}
			if includeUsage != (usage != nil) || usage != nil && usage["total_tokens"] != 59.0 {
				t.Errorf("usage %v", usage)
			}
		})
	}
}

func TestChatClientTools(t *testing.T) {
	m := llmtest.New(llmtest.Reply(llmtest.Call("call_w", "get_weather", `{"city":"Paris"}`))).Verify(t)
	e := newEnv(t, serve.Options{}, agentSpec{name: "a", model: m, tools: []tool.Tool{addTool()}})
	tools := []any{map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "parameters": map[string]any{"type": "object"}}}}
	for _, stream := range []bool{false, true} {
		if stream {
			m.Add(llmtest.Reply(llmtest.Call("call_w", "get_weather", `{"city":"Paris"}`)))
		}
		resp := e.do("POST", "/v1/chat/completions", map[string]any{"model": "a", "stream": stream, "tools": tools, "messages": []any{user("weather?")}})
		if !stream {
			ch := decode(t, resp)["choices"].([]any)[0].(map[string]any)
			calls, _ := ch["message"].(map[string]any)["tool_calls"].([]any)
			if ch["finish_reason"] != "tool_calls" || len(calls) != 1 {
				t.Fatalf("choice %v", ch)
			}
			fn := calls[0].(map[string]any)["function"].(map[string]any)
			if fn["name"] != "get_weather" || fn["arguments"] != `{"city":"Paris"}` || calls[0].(map[string]any)["id"] != "call_w" {
				t.Fatalf("call %v", calls[0])
			}
			continue
		}
		var sawCall, sawFinish bool
		for _, ev := range readEvents(t, resp) {
			if ev.data == "[DONE]" {
				continue
			}
			ch := jsonOf(t, ev.data)["choices"].([]any)[0].(map[string]any)
			if tc, ok := ch["delta"].(map[string]any)["tool_calls"].([]any); ok {
				c := tc[0].(map[string]any)
				sawCall = c["index"] == 0.0 && c["id"] == "call_w" && c["function"].(map[string]any)["name"] == "get_weather"
			}
			sawFinish = sawFinish || ch["finish_reason"] == "tool_calls"
		}
		if !sawCall || !sawFinish {
			t.Fatalf("streamed: call %v, finish %v", sawCall, sawFinish)
		}
	}
	if got := m.Requests()[0].Tools; len(got) != 2 || got[1].Name != "get_weather" {
		t.Errorf("tools offered: %v", got)
	}
}

// gated streams "partial", then waits until its context ends.
func gated(started chan<- struct{}, ended chan<- error) *model {
	return &model{fn: func(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
		return func(yield func(llm.Event, error) bool) {
			if !yield(llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{}}, nil) ||
				!yield(llm.Event{Type: llm.EventBlockStart, Block: llm.Text{}}, nil) ||
				!yield(llm.Event{Type: llm.EventTextDelta, Delta: "partial"}, nil) {
				ended <- ctx.Err()
				return
			}
			started <- struct{}{}
			<-ctx.Done()
			ended <- ctx.Err()
			yield(llm.Event{}, llm.Cancelled("fake", ctx.Err()))
		}
	}}
}

// TestDisconnectCancels: a client that goes away mid-stream cancels the
// turn, and nothing of it is stored.
func TestDisconnectCancels(t *testing.T) {
	for _, path := range []string{"/v1/chat/completions", "/v1/responses"} {
		t.Run(path, func(t *testing.T) {
			started, ended := make(chan struct{}, 1), make(chan error, 1)
			e := newEnv(t, serve.Options{}, agentSpec{name: "slow", model: gated(started, ended)})
			body := map[string]any{"model": "slow", "stream": true, "messages": []any{user("hi")}, "input": "hi", "conversation": "c1"}
			if path == "/v1/chat/completions" {
				delete(body, "input")
				delete(body, "conversation")
			} else {
				delete(body, "messages")
			}
			data, _ := json.Marshal(body)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", e.srv.URL+path, strings.NewReader(string(data)))
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			if _, err := resp.Body.Read(buf); err != nil {
				t.Fatal(err)
			}
			testwait.Recv(t, started, "the model call to start")
			cancel()
			resp.Body.Close()
			select {
			case err := <-ended:
				if err == nil {
					t.Fatal("the model call ended without its context cancelled")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the turn went on after the client left")
			}
			if _, err := e.store.Load(context.Background(), "c1"); err == nil {
				t.Fatal("the cancelled turn was stored")
			}
		})
	}
}
