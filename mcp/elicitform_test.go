package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const form = `{"type":"object","properties":{"name":{"type":"string","minLength":1},"seats":{"type":"integer","minimum":1,"maximum":9,"default":2},"color":{"type":"string","enum":["red","blue"]}},"required":["name","seats"]}`

func TestFormContent(t *testing.T) {
	tests := []struct {
		name, schema, content string
		want                  map[string]any
		err                   string // in the error; "" for none
	}{
		{"the answer over the defaults", form, `{"name":"Ada"}`, map[string]any{"name": "Ada", "seats": 2.0}, ""},
		{"every field given", form, `{"name":"Ada","seats":3,"color":"red"}`, map[string]any{"name": "Ada", "seats": 3.0, "color": "red"}, ""},
		{"no content, a required field without a default", form, ``, nil, `"name" is required and has no default`},
		{"null content", form, `null`, nil, `"name" is required`},
		{"a required field left out", form, `{"seats":3}`, nil, `"name" is required`},
		{"a wrong type", form, `{"name":7}`, nil, `field "name": type`},
		{"out of range", form, `{"name":"Ada","seats":12}`, nil, `field "seats": maximum: 12 is greater than 9`},
		{"not an integer", form, `{"name":"Ada","seats":2.5}`, nil, `field "seats"`},
		{"out of the enum", form, `{"name":"Ada","color":"green"}`, nil, `field "color": enum`},
		{"too short", form, `{"name":""}`, nil, `field "name": minLength`},
		{"not an object", form, `"Ada"`, nil, "must be a JSON object"},
		{"an array", form, `[1]`, nil, "must be a JSON object"},
		{"defaults only", `{"type":"object","properties":{"city":{"type":"string","default":"Oslo"}},"required":["city"]}`, ``, map[string]any{"city": "Oslo"}, ""},
		{"no schema", ``, `{"x":1}`, map[string]any{"x": 1.0}, ""},
		{"a draft-07 schema", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"a":"x"}`, map[string]any{"a": "x"}, ""},
		{"a titled choice and several", `{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X"}]},"b":{"type":"array","items":{"type":"string","enum":["p","q"]},"minItems":1}}}`, `{"a":"x","b":["p"]}`, map[string]any{"a": "x", "b": []any{"p"}}, ""},
		{"several, one out of the enum", `{"type":"object","properties":{"b":{"type":"array","items":{"type":"string","enum":["p","q"]}}}}`, `{"b":["z"]}`, nil, `field "b"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FormContent(json.RawMessage(tt.schema), json.RawMessage(tt.content))
			if tt.err != "" {
				if !errors.Is(err, ErrFormContent) || !strings.Contains(err.Error(), tt.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want one line matching ErrFormContent with %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("FormContent = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestElicitationCallCarriesTheSchema(t *testing.T) {
	req := &sdk.ElicitParams{Message: "Who?", RequestedSchema: json.RawMessage(form)}
	call, err := ElicitationCall("e1", "forms", req)
	if err != nil {
		t.Fatal(err)
	}
	var args map[string]any
	if err := json.Unmarshal(call.Input, &args); err != nil || call.Name != ElicitationTool || call.ID != "e1" || args["server"] != "forms" || args["message"] != "Who?" {
		t.Fatalf("call %+v (%s)", call, call.Input)
	}
	schema, err := ElicitationSchema(call.Input)
	if err != nil || !jsonEqual(schema, []byte(form)) {
		t.Fatalf("schema %s, %v; want the requested one", schema, err)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func TestAskApprover(t *testing.T) {
	req := &sdk.ElicitParams{Message: "Who?", RequestedSchema: json.RawMessage(form)}
	tests := []struct {
		name   string
		d      tool.Decision
		err    error
		action string
		want   map[string]any
	}{
		{"denied", tool.Decision{}, nil, "decline", nil},
		{"approved with content", tool.Decision{Approved: true, Content: `{"name":"Ada"}`}, nil, "accept", map[string]any{"name": "Ada", "seats": 2.0}},
		{"approved with content that does not fit", tool.Decision{Approved: true}, nil, "cancel", nil},
		{"the turn ended", tool.Decision{}, context.Canceled, "cancel", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked tool.Call
			ap := tool.ApproverFunc(func(_ context.Context, c tool.Call) (tool.Decision, error) {
				asked = c
				return tt.d, tt.err
			})
			res, err := AskApprover(context.Background(), ap, "e1", "forms", req)
			if asked.Name != ElicitationTool {
				t.Fatalf("the approver was asked %+v", asked)
			}
			if res == nil || res.Action != tt.action || tt.want != nil && !reflect.DeepEqual(res.Content, tt.want) {
				t.Fatalf("result %+v, %v; want %s %v", res, err, tt.action, tt.want)
			}
			if (err != nil) != (tt.action == "cancel" && tt.err == nil) {
				t.Fatalf("error %v", err)
			}
		})
	}
}
