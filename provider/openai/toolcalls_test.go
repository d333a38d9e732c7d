package openai

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

// Tool calls as real models send them when they misbehave: arguments that
// are not JSON (small local models cut them short) and calls without an id
// (Gemini's OpenAI-compatible endpoint sends "id": "", each call whole at
// index 0). Both must complete the answer, streaming and blocking.

// calls returns a response's tool calls, failing the test when there is
// none.
func calls(t *testing.T, resp *llm.Response) []llm.ToolUse {
	t.Helper()
	if resp == nil {
		t.Fatal("no response")
	}
	cs := resp.Message.ToolUses()
	if len(cs) == 0 {
		t.Fatalf("no tool calls in %+v", resp.Message)
	}
	return cs
}

func TestToolArgumentsThatAreNotJSONAreKept(t *testing.T) {
	const want = `{"path":`
	check := func(t *testing.T, resp *llm.Response) {
		cs := calls(t, resp)
		if text, bad := cs[0].Malformed(); len(cs) != 1 || !bad || text != want || cs[0].ID != "a" {
			t.Fatalf("calls %+v: Malformed() = %q, %v; want the one call a with %q", cs, text, bad, want)
		}
		if resp.FinishReason != llm.FinishToolUse {
			t.Fatalf("finish %s, want tool_use", resp.FinishReason)
		}
	}
	t.Run("stream", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(frames(
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"read","arguments":"{\"path\":"}}]},"finish_reason":"tool_calls"}]}`,
		)), 0)
		evs, resp, err := drain(t, testModel(srv).Stream(bg, userRequest()))
		if err != nil {
			t.Fatal(err)
		}
		checkEvents(t, evs, true)
		check(t, resp)
	})
	t.Run("generate", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "application/json", []byte(
			`{"choices":[{"message":{"tool_calls":[{"id":"a","function":{"name":"read","arguments":"{\"path\":"}}]},"finish_reason":"tool_calls"}]}`), 0)
		resp, err := testModel(srv).Generate(bg, userRequest())
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp)
	})
	t.Run("sent back as the model wrote them", func(t *testing.T) {
		req := userRequest()
		req.Messages = append(req.Messages,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.MalformedInput("a", "read", want)}},
			llm.ToolResultText("a", "invalid arguments", true))
		body, err := New(WithAPIKey(""), WithModel("m")).encodeRequest(req, false)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), `"arguments":"{\"path\":"`) {
			t.Fatalf("body %s does not carry the original arguments", body)
		}
	})
}

func TestToolCallsWithoutIDsGetUniqueOnes(t *testing.T) {
	check := func(t *testing.T, resp *llm.Response, n int) {
		cs := calls(t, resp)
		if len(cs) != n {
			t.Fatalf("%d calls, want %d: %+v", len(cs), n, cs)
		}
		seen := map[string]bool{}
		for _, c := range cs {
			if c.ID == "" || seen[c.ID] {
				t.Fatalf("calls %+v: ids must be unique and non-empty", cs)
			}
			seen[c.ID] = true
		}
	}
	t.Run("stream", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(frames(
			`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.txt\"}"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"","type":"function","function":{"name":"read","arguments":"{\"path\":\"b.txt\"}"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
		)), 0)
		evs, resp, err := drain(t, testModel(srv).Stream(bg, userRequest()))
		if err != nil {
			t.Fatal(err)
		}
		checkEvents(t, evs, true)
		check(t, resp, 2)
		// The ids in the events are the ids in the Response.
		var started []string
		for _, ev := range evs {
			if tu, ok := ev.Block.(llm.ToolUse); ok && ev.Type == llm.EventBlockStart {
				started = append(started, tu.ID)
			}
		}
		cs := resp.Message.ToolUses()
		if len(started) != 2 || started[0] != cs[0].ID || started[1] != cs[1].ID {
			t.Fatalf("BlockStart ids %v, Response ids %s %s", started, cs[0].ID, cs[1].ID)
		}
		if string(cs[1].Input) != `{"path":"b.txt"}` {
			t.Fatalf("second call's input %s", cs[1].Input)
		}
	})
	t.Run("a call split into fragments keeps one id", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "text/event-stream", []byte(frames(
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"name":"read","arguments":"{\"pa"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"a\"}"}}]}}]}`,
			`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		)), 0)
		_, resp, err := drain(t, testModel(srv).Stream(bg, userRequest()))
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp, 1)
	})
	t.Run("generate", func(t *testing.T) {
		srv, _ := replay(t, http.StatusOK, "application/json", []byte(
			`{"choices":[{"message":{"tool_calls":[{"id":"","function":{"name":"read","arguments":"{}"}},{"id":"","function":{"name":"read","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`), 0)
		resp, err := testModel(srv).Generate(bg, userRequest())
		if err != nil {
			t.Fatal(err)
		}
		check(t, resp, 2)
	})
}
