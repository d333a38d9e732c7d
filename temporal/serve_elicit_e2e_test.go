package agtemporal_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestE2EServeTemporalElicitationForm: `agcore serve --temporal` (over
// Redis) and one `agcore worker` whose MCP server asks, during a
// background response's turn, for a form with a required field without
// a default. GET /v1/approvals lists the request (tool mcp_elicitation)
// with its requested schema; POST /v1/approvals/{id} with content that
// does not fit is refused by the workflow's validator and answered 400
// invalid_content (the request still waits); with {"name":"Ada"} it is
// accepted, and the MCP server gets the answer.
func TestE2EServeTemporalElicitationForm(t *testing.T) {
	t.Setenv("AGCORE_SERVE_TOKENS", "alice=alice-secret")
	const alice = "alice-secret"
	const schema = `{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"]}`
	server := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "v1"}, nil)
	server.AddTool(&sdk.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your name?", RequestedSchema: json.RawMessage(schema)})
		if err != nil {
			return nil, err
		}
		name, _ := res.Content["name"].(string)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "action " + res.Action + " " + name}}}, nil
	})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(mcpSrv.Close)
	store := serveStore(t, "redis")
	w, _ := newWorld(t,
		sseReply("", fakeCall{"a1", "mcp__http__ask", `{}`}),
		sseReply("Hello Ada."))
	worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", store, "--tools", "none", "--mcp-url", mcpSrv.URL)
	a, base := startServeReplica(t, "--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL)

	resp := authed(t, "POST", base+"/v1/responses", alice, map[string]any{"model": "agcore", "input": "greet me", "background": true})
	var created struct {
		ID string `json:"id"`
	}
	err := json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || created.ID == "" {
		t.Fatalf("POST /v1/responses: %d %v\n%s", resp.StatusCode, err, a.errw)
	}
	p := waitApproval(t, base, alice, time.Minute)
	if p.Tool != "mcp_elicitation" || p.Run != strings.TrimPrefix(created.ID, "resp_") {
		t.Fatalf("the pending request for input: %+v\nworker: %s", p, worker.errw)
	}
	// Its requested schema, as an in-process request's is listed.
	r := authed(t, "GET", base+"/v1/approvals", alice, nil)
	var list struct {
		Data []struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"data"`
	}
	err = json.NewDecoder(r.Body).Decode(&list)
	r.Body.Close()
	if err != nil || len(list.Data) != 1 || !strings.Contains(string(list.Data[0].Schema), `"required":["name"]`) {
		t.Fatalf("the listed schema: %v %+v", err, list)
	}
	post := func(body map[string]any) (int, string) {
		r := authed(t, "POST", base+"/v1/approvals/"+p.ID, alice, body)
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	for name, body := range map[string]map[string]any{
		"no content":   {"approved": true},
		"empty name":   {"approved": true, "content": map[string]any{"name": ""}},
		"with denial":  {"approved": false, "content": map[string]any{"name": "Ada"}},
		"not a string": {"approved": true, "content": map[string]any{"name": 7}},
	} {
		start := time.Now()
		code, b := post(body)
		if code != 400 || !strings.Contains(b, `"invalid_content"`) {
			t.Fatalf("%s: %d %s, want 400 invalid_content\nserve: %s", name, code, b, a.errw)
		}
		t.Logf("%s: refused through the workflow's validator in %s: %s", name, time.Since(start).Round(time.Millisecond), strings.TrimSpace(b))
	}
	if got := listApprovals(t, base, alice); len(got) != 1 || got[0].ID != p.ID {
		t.Fatalf("after the refusals: %+v, want the request still waiting", got)
	}
	start := time.Now()
	if code, b := post(map[string]any{"approved": true, "content": map[string]any{"name": "Ada"}}); code != 200 {
		t.Fatalf("approving with content: %d %s\nserve: %s", code, b, a.errw)
	}
	t.Logf("approved with content in %s", time.Since(start).Round(time.Millisecond))
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		r := authed(t, "GET", base+"/v1/responses/"+created.ID, alice, nil)
		var got struct {
			Status string `json:"status"`
		}
		_ = json.NewDecoder(r.Body).Decode(&got)
		r.Body.Close()
		if got.Status == "completed" {
			break
		}
		if time.Now().After(deadline) || got.Status == "failed" {
			t.Fatalf("the response: %s\nworker: %s", got.Status, worker.errw)
		}
	}
	w.fake.mu.Lock()
	second := w.fake.bodies[1]
	w.fake.mu.Unlock()
	if !strings.Contains(second, "action accept Ada") {
		t.Fatalf("the tool result sent to the model: %s", second)
	}
	worker.stop(t, syscall.SIGTERM)
}
