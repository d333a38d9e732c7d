package demo

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agcore/agcore/llm"
)

// TestStructuredAnswers: a json_schema response format gets a JSON text, a
// named tool choice a call of the tool, each validating against its schema.
func TestStructuredAnswers(t *testing.T) {
	t.Parallel()
	schemas := map[string]string{
		"strict book": `{"type":"object","properties":{"title":{"type":"string"},"year":{"type":["integer","null"]},"tags":{"type":["null","array"],"items":{"type":"string"}}},"required":["title","year","tags"],"additionalProperties":false}`,
		"refs":        `{"type":"object","properties":{"author":{"$ref":"#/$defs/A"}},"required":["author"],"$defs":{"A":{"type":"object","properties":{"name":{"type":"string","minLength":20,"maxLength":25}},"required":["name"],"additionalProperties":false}}}`,
		"bounds":      `{"type":"object","properties":{"n":{"type":"integer","minimum":3,"maximum":9,"multipleOf":2},"x":{"type":"number","exclusiveMinimum":0.5},"k":{"type":"array","minItems":2,"items":{"enum":["a","b"]}},"c":{"const":"fixed"},"b":{"type":"boolean"}},"required":["n","x","k","c","b"]}`,
		"formats":     `{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"mail":{"type":"string","format":"email"},"opt":{"anyOf":[{"type":"null"},{"type":"string","maxLength":3}]}}}`,
	}
	for name, s := range schemas {
		var js jsonschema.Schema
		if err := json.Unmarshal([]byte(s), &js); err != nil {
			t.Fatal(err)
		}
		res, err := js.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, req := range []*llm.Request{
			{Messages: []llm.Message{llm.UserText("extract")}, ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Schema: json.RawMessage(s)}},
			{Messages: []llm.Message{llm.UserText("extract")}, Tools: []llm.ToolDefinition{{Name: "list_dir"}, {Name: "final_answer", Parameters: json.RawMessage(s)}},
				ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "final_answer"}},
		} {
			resp, err := (&Model{}).Generate(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			text := resp.Message.Text()
			if req.ResponseFormat == nil {
				calls := resp.Message.ToolUses()
				if len(calls) != 1 || calls[0].Name != "final_answer" {
					t.Fatalf("%s: answer %+v, want one call of final_answer", name, resp.Message)
				}
				text = string(calls[0].Input)
			}
			var v any
			if err := json.Unmarshal([]byte(text), &v); err != nil {
				t.Fatalf("%s: %q is not JSON", name, text)
			}
			if err := res.Validate(v); err != nil {
				t.Errorf("%s: %s does not validate: %v", name, text, err)
			}
			again, _ := (&Model{}).Generate(context.Background(), req)
			if again.Message.Text() != resp.Message.Text() {
				t.Errorf("%s: not deterministic", name)
			}
		}
	}
}
