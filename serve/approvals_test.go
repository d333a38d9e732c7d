package serve_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/tool"
)

// TestApprovals: a turn whose tool needs approval waits until the
// principal that started it decides; other principals see nothing.
func TestApprovals(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(map[bool]string{true: "approved", false: "denied"}[approve], func(t *testing.T) {
			m := llmtest.New(
				llmtest.Reply(llmtest.Call("call_1", "add", `{"a":2,"b":3}`)),
				llmtest.Text("done"),
			).Verify(t)
			e := newEnv(t, serve.Options{Tokens: map[string]string{"alice": "a", "bob": "b"}},
				agentSpec{name: "calc", model: m, tools: []tool.Tool{addTool(tool.WithApproval())}})
			done := make(chan map[string]any, 1)
			go func() {
				resp := e.do("POST", "/v1/responses", map[string]any{"model": "calc", "input": "add"}, "Authorization: Bearer a")
				done <- decode(t, resp)
			}()
			var pending []any
			for deadline := time.Now().Add(10 * time.Second); len(pending) == 0; {
				if time.Now().After(deadline) {
					t.Fatal("the call never appeared in /v1/approvals")
				}
				time.Sleep(2 * time.Millisecond)
				pending = decode(t, e.do("GET", "/v1/approvals", nil, "Authorization: Bearer a"))["data"].([]any)
			}
			p := pending[0].(map[string]any)
			id := p["id"].(string)
			if p["tool"] != "add" || p["arguments"] != `{"a":2,"b":3}` || p["agent"] != "calc" || !strings.HasSuffix(id, "/call_1") {
				t.Fatalf("pending %v", p)
			}
			if got := decode(t, e.do("GET", "/v1/approvals", nil, "Authorization: Bearer b"))["data"].([]any); len(got) != 0 {
				t.Fatalf("bob sees alice's approvals: %v", got)
			}
			path := "/v1/approvals/" + id
			resp := e.do("POST", path, map[string]any{"approved": true}, "Authorization: Bearer b")
			if code, _ := errCode(t, resp); resp.StatusCode != 404 || code != "approval_not_found" {
				t.Fatalf("bob decided: %d %s", resp.StatusCode, code)
			}
			resp = e.do("POST", path, map[string]any{"reason": "?"}, "Authorization: Bearer a")
			if resp.StatusCode != 400 {
				t.Fatalf("a decision without approved: %d", resp.StatusCode)
			}
			resp.Body.Close()
			got := decode(t, e.do("POST", "/v1/approvals/"+url.PathEscape(id), map[string]any{"approved": approve, "reason": "not today"}, "Authorization: Bearer a"))
			if got["approved"] != approve || got["id"] != id {
				t.Fatalf("decision answer %v", got)
			}
			final := testwait.Recv(t, done, "the answer of the turn")
			if outputText(t, final) != "done" {
				t.Fatalf("final %v", final)
			}
			var result string
			for _, it := range final["output"].([]any) {
				if item := it.(map[string]any); item["type"] == "function_call_output" {
					result = item["output"].(string)
				}
			}
			if approve && result != "5" || !approve && !strings.Contains(result, "not today") {
				t.Fatalf("tool result %q", result)
			}
			resp = e.do("POST", path, map[string]any{"approved": true}, "Authorization: Bearer a")
			if resp.StatusCode != 404 {
				t.Fatalf("a second decision: %d", resp.StatusCode)
			}
			resp.Body.Close()
		})
	}
}
