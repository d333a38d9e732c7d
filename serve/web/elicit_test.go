package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestElicitationForm: a tool whose MCP server asks for a form (here the
// glue mcp.AskApprover, as agcore serve's elicitor calls it) is an
// approval event with the requested schema; the page's decision carries
// the form's answer, checked (400 naming the field), and the server gets it
// over the defaults.
func TestElicitationForm(t *testing.T) {
	const schema = `{"type":"object","properties":{"name":{"type":"string"},"seats":{"type":"integer","default":2}},"required":["name","seats"]}`
	var broker *approval.Broker
	book := tool.MustFunc("book", "Book a trip.", func(ctx context.Context, _ struct{}) (string, error) {
		res, err := mcp.AskApprover(ctx, broker, "elicitation-1", "forms", &sdk.ElicitParams{Message: "Who travels?", RequestedSchema: json.RawMessage(schema)})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s %v %v", res.Action, res.Content["name"], res.Content["seats"]), nil
	})
	model := llmtest.New(llmtest.Reply(llmtest.Call("call_1", "book", `{}`)), llmtest.Text("booked")).Verify(t)
	f := newFixture(t, model, book)
	broker = f.broker
	ch := events(t, f.do(t, context.Background(), "POST", "/api/chat", "alice", map[string]string{"message": "book"}))
	ap := until(t, ch, "approval")
	if ap.Name != mcp.ElicitationTool {
		t.Fatalf("approval event %+v", ap)
	}
	list := decode(t, f.do(t, context.Background(), "GET", "/api/approvals", "alice", nil), 200)["approvals"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["schema"] == nil {
		t.Fatalf("listed %v, want the form's schema", list)
	}
	path := "/api/approvals/" + ap.ID
	for _, body := range []map[string]any{
		{"approved": true},
		{"approved": true, "content": map[string]any{"name": 7}},
		{"approved": false, "content": map[string]any{"name": "Ada"}},
	} {
		got := decode(t, f.do(t, context.Background(), "POST", path, "alice", body), 400)
		if msg := got["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "name") && !strings.Contains(msg, "approval") {
			t.Errorf("%v: %q", body, msg)
		}
	}
	decode(t, f.do(t, context.Background(), "POST", path, "alice", map[string]any{"approved": true, "content": map[string]any{"name": "Ada"}}), 200)
	if res := until(t, ch, "tool_result"); res.Text != "accept Ada 2" {
		t.Fatalf("tool result %q, want the answer with the default", res.Text)
	}
}
