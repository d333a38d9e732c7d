package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// bookingForm asks for a required field without a default (name) and one
// with a default (seats).
const bookingForm = `{"type":"object","properties":{"name":{"type":"string","minLength":1},"seats":{"type":"integer","minimum":1,"maximum":9,"default":2}},"required":["name","seats"]}`

// formServer is a local MCP server whose tool book asks for bookingForm
// (elicitation/create) and answers with what it got.
func formServer(t *testing.T) string {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "forms", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "book", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Who travels?", RequestedSchema: json.RawMessage(bookingForm)})
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("action %s name=%v seats=%v", res.Action, res.Content["name"], res.Content["seats"])
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	testwait.CloseOnCleanup(t, ts)
	return ts.URL
}

// apiErr is an error body's message, param and code.
func apiErr(t *testing.T, resp *http.Response) (status int, msg, param, code string) {
	t.Helper()
	m := decode(t, resp)
	e, _ := m["error"].(map[string]any)
	msg, _ = e["message"].(string)
	param, _ = e["param"].(string)
	code, _ = e["code"].(string)
	return resp.StatusCode, msg, param, code
}

// TestElicitationFormThroughApprovals: an MCP server's form with a
// required field that has no default, asked during a served turn, is a
// pending decision listed with its schema; a decision whose content does
// not fit is refused with a 400 naming the field (the request still
// waits), and the one that fits reaches the server with the form's
// defaults filled in.
func TestElicitationFormThroughApprovals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var e *env
	c, err := mcp.Connect(ctx, mcp.Server{Name: "forms", URL: formServer(t), Timeout: 30 * time.Second,
		Elicit: func(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
			return mcp.AskApprover(ctx, e.broker, "elicitation-1", server, req)
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	m := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "mcp__forms__book", `{}`)),
		llmtest.Text("booked"),
	).Verify(t)
	e = newEnv(t, serve.Options{Tokens: map[string]string{"alice": "a"}}, agentSpec{name: "travel", model: m, tools: c.Tools()})
	auth := "Authorization: Bearer a"
	done := make(chan map[string]any, 1)
	go func() {
		done <- decode(t, e.do("POST", "/v1/responses", map[string]any{"model": "travel", "input": "book"}, auth))
	}()
	var pending []any
	for deadline := time.Now().Add(30 * time.Second); len(pending) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the server's request for input never appeared in /v1/approvals")
		}
		time.Sleep(5 * time.Millisecond)
		pending = decode(t, e.do("GET", "/v1/approvals", nil, auth))["data"].([]any)
	}
	p := pending[0].(map[string]any)
	var schema map[string]any
	b, _ := json.Marshal(p["schema"])
	_ = json.Unmarshal(b, &schema)
	if p["tool"] != mcp.ElicitationTool || schema["required"] == nil || !strings.Contains(p["arguments"].(string), `"message":"Who travels?"`) {
		t.Fatalf("pending decision %v, want tool %s with the requested schema", p, mcp.ElicitationTool)
	}
	path := "/v1/approvals/" + p["id"].(string)
	for _, tt := range []struct {
		name string
		body string
		want string // in the message
	}{
		{"approved without content", `{"approved":true}`, `"name" is required and has no default`},
		{"a required field left out", `{"approved":true,"content":{"seats":3}}`, `"name" is required`},
		{"a wrong type", `{"approved":true,"content":{"name":7}}`, "name"},
		{"out of range", `{"approved":true,"content":{"name":"Ada","seats":12}}`, "maximum"},
		{"not an object", `{"approved":true,"content":"Ada"}`, "must be a JSON object"},
		{"content with a denial", `{"approved":false,"content":{"name":"Ada"}}`, "goes with an approval"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, msg, param, code := apiErr(t, e.do("POST", path, tt.body, auth))
			if status != 400 || param != "content" || code != "invalid_content" || !strings.Contains(msg, tt.want) || strings.Contains(msg, "\n") {
				t.Errorf("%s: %d %s %s %q, want 400 on content saying %q in one line", tt.body, status, param, code, msg, tt.want)
			}
		})
	}
	if got := decode(t, e.do("GET", "/v1/approvals", nil, auth))["data"].([]any); len(got) != 1 {
		t.Fatalf("after the refused decisions, pending = %v; want the request still waiting", got)
	}
	got := decode(t, e.do("POST", path, map[string]any{"approved": true, "content": map[string]any{"name": "Ada"}}, auth))
	if got["approved"] != true {
		t.Fatalf("decision answer %v", got)
	}
	final := testwait.Recv(t, done, "the answer of the turn")
	var result string
	for _, it := range final["output"].([]any) {
		if item := it.(map[string]any); item["type"] == "function_call_output" {
			result = item["output"].(string)
		}
	}
	if result != "action accept name=Ada seats=2" {
		t.Fatalf("the server got %q, want the answer with the default seats", result)
	}
}

// TestContentOnlyAnswersAForm: content on the decision of an ordinary
// call is a 400; the call still waits.
func TestContentOnlyAnswersAForm(t *testing.T) {
	m := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "add", `{"a":2,"b":3}`)),
		llmtest.Text("done"),
	).Verify(t)
	e := newEnv(t, serve.Options{}, agentSpec{name: "calc", model: m, tools: []tool.Tool{addTool(tool.WithApproval())}})
	done := make(chan map[string]any, 1)
	go func() {
		done <- decode(t, e.do("POST", "/v1/responses", map[string]any{"model": "calc", "input": "add"}))
	}()
	var pending []any
	for deadline := time.Now().Add(10 * time.Second); len(pending) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the call never appeared in /v1/approvals")
		}
		time.Sleep(2 * time.Millisecond)
		pending = decode(t, e.do("GET", "/v1/approvals", nil))["data"].([]any)
	}
	p := pending[0].(map[string]any)
	if _, ok := p["schema"]; ok {
		t.Errorf("an ordinary call listed with a schema: %v", p)
	}
	path := "/v1/approvals/" + p["id"].(string)
	if status, msg, param, _ := apiErr(t, e.do("POST", path, map[string]any{"approved": true, "content": map[string]any{"x": 1}})); status != 400 || param != "content" || !strings.Contains(msg, "takes none") {
		t.Fatalf("content for an ordinary call: %d %s %q", status, param, msg)
	}
	if got := decode(t, e.do("POST", path, map[string]any{"approved": true})); got["approved"] != true {
		t.Fatalf("decision %v", got)
	}
	if final := testwait.Recv(t, done, "the answer of the turn"); outputText(t, final) != "done" {
		t.Fatalf("final %v", final)
	}
}
