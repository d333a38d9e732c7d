package serve_test

import (
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/tool"
)

// items returns the output items of a Responses body as maps.
func items(t *testing.T, body map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, it := range body["output"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// TestResponsesHandoffItems: a turn that hands off marks each output item
// with the agent that produced it; the answer is the target's message.
func TestResponsesHandoffItems(t *testing.T) {
	for _, stream := range []bool{false, true} {
		e := newEnv(t, serve.Options{}, agentSpec{name: "triage",
			model: llmtest.New(llmtest.Reply(llm.Text{Text: "Handing over."}, llmtest.Call("c1", "transfer_to_billing", `{}`))),
			cfg:   func(c *agent.Config) { c.Handoffs = []*agent.Agent{mustAgent(t, "billing", llmtest.Text("Refunded."))} }})
		var body map[string]any
		if stream {
			evs := readEvents(t, e.do("POST", "/v1/responses", map[string]any{"model": "triage", "input": "refund", "stream": true}))
			body = jsonOf(t, evs[len(evs)-1].data)["response"].(map[string]any)
		} else {
			body = decode(t, e.do("POST", "/v1/responses", map[string]any{"model": "triage", "input": "refund"}))
		}
		got := ""
		for _, it := range items(t, body) {
			got += it["type"].(string) + "/" + it["agent"].(string) + " "
		}
		if want := "message/triage function_call/triage function_call_output/triage message/billing "; got != want {
			t.Errorf("stream %v: items %q, want %q", stream, got, want)
		}
	}
}

func mustAgent(t *testing.T, name string, steps ...llmtest.Step) *agent.Agent {
	t.Helper()
	a, err := agent.New(llmtest.New(steps...), agent.Config{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestResponsesSubAgentItems: a sub-agent's tool calls and results are
// output items marked with the sub-agent and the call that ran it; its
// answer is that call's output, and the turn's message is the caller's.
func TestResponsesSubAgentItems(t *testing.T) {
	childWithTool, err := agent.New(llmtest.New(llmtest.Reply(llmtest.Call("s1", "lookup", `{}`)), llmtest.Text("found 2009")),
		agent.Config{Name: "researcher", Tools: []tool.Tool{addTool()}})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, serve.Options{}, agentSpec{name: "writer",
		model: llmtest.New(llmtest.Reply(llmtest.Call("p1", "researcher", `{"input":"when?"}`)), llmtest.Text("In 2009.")),
		tools: []tool.Tool{agent.AsTool(childWithTool, nil)}})
	body := decode(t, e.do("POST", "/v1/responses", map[string]any{"model": "writer", "input": "when was Go released?"}))
	var got []string
	for _, it := range items(t, body) {
		desc := it["type"].(string)
		if a, ok := it["agent"].(string); ok {
			desc += " agent=" + a
		}
		if p, ok := it["parent_call_id"].(string); ok {
			desc += " parent=" + p
		}
		got = append(got, desc)
	}
	want := []string{
		"function_call",
		"function_call agent=researcher parent=p1",
		"function_call_output agent=researcher parent=p1",
		"function_call_output",
		"message",
	}
	if len(got) != len(want) {
		t.Fatalf("items %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d: %q, want %q", i, got[i], want[i])
		}
	}
	out := items(t, body)
	if out[3]["output"] != "found 2009" || out[4]["content"].([]any)[0].(map[string]any)["text"] != "In 2009." {
		t.Errorf("sub-agent's answer %v, message %v", out[3], out[4])
	}
}
