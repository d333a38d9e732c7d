package web_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

// TestChatHandoffAndSubAgent: the page's stream shows a handoff (from,
// agent) and a sub-agent's events inside sub_agent events naming it and
// the call that runs it.
func TestChatHandoffAndSubAgent(t *testing.T) {
	researcher, err := agent.New(llmtest.New(llmtest.Text("Go appeared in 2009.")), agent.Config{Name: "researcher"})
	if err != nil {
		t.Fatal(err)
	}
	writer, err := agent.New(llmtest.New(
		llmtest.Reply(llmtest.Call("w1", "researcher", `{"input":"when?"}`)),
		llmtest.Text("In 2009."),
	), agent.Config{Name: "writer", Tools: []tool.Tool{agent.AsTool(researcher, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, llmtest.New(llmtest.Reply(llmtest.Call("h1", "transfer_to_writer", `{}`))))
	if err := f.agent.AddHandoffs(writer); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, events(t, f.do(t, context.Background(), "POST", "/api/chat", "", map[string]string{"agent": "helper", "message": "When was Go released?"})))
	var kinds []string
	var subText strings.Builder
	for _, ev := range evs {
		kinds = append(kinds, ev.Type)
		switch ev.Type {
		case "handoff":
			if ev.From != "helper" || ev.Agent != "writer" {
				t.Errorf("handoff %+v", ev)
			}
		case "sub_agent":
			if ev.Agent != "researcher" || ev.ToolCallID != "w1" || ev.Sub == nil {
				t.Fatalf("sub_agent %+v", ev)
			}
			if ev.Sub.Type == "text" {
				subText.WriteString(ev.Sub.Text)
			}
		}
	}
	got := strings.Join(kinds, " ")
	if !strings.Contains(got, "tool_result handoff tool_call usage sub_agent") || !strings.HasSuffix(got, "finish") {
		t.Errorf("events %q", got)
	}
	if subText.String() != "Go appeared in 2009." {
		t.Errorf("sub-agent text %q", subText.String())
	}

	// The stored transcript shows the handoff where the answering agent
	// changed.
	stored := decode(t, f.do(t, context.Background(), "GET", "/api/sessions/"+evs[0].Session+"?agent=helper", "", nil), 200)
	var types []string
	for _, it := range stored["items"].([]any) {
		m := it.(map[string]any)
		types = append(types, m["type"].(string))
		if m["type"] == "handoff" && (m["from"] != "helper" || m["agent"] != "writer") {
			t.Errorf("stored handoff %v", m)
		}
	}
	if got := strings.Join(types, " "); got != "user tool_call tool_result handoff tool_call tool_result text" {
		t.Errorf("stored items %q", got)
	}
}
