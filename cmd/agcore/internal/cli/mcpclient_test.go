package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The terminal asks whether to answer, then each field (required first),
// with its default; a bad answer is asked again.
func TestTerminalElicitor(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","title":"Your name"},
		"age":{"type":"integer","default":30},
		"verified":{"type":"boolean"},
		"color":{"type":"string","enum":["red","blue"]}},"required":["name"]}`)
	tests := []struct {
		name    string
		answers []string
		want    *sdk.ElicitResult
	}{
		{"declined", []string{"n"}, &sdk.ElicitResult{Action: "decline"}},
		{"defaults and optional fields left out", []string{"y", "Ada", "", "", ""}, &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 30.0}}},
		{"typed answers, a bad one asked again", []string{"yes", "Ada", "x", "41", "purple", "blue", "yes"}, &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": int64(41), "color": "blue", "verified": true}}},
		{"the terminal closes", nil, &sdk.ElicitResult{Action: "cancel"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked []string
			answers := tt.answers
			ap := &approver{
				ask: func(_ context.Context, q string) (string, error) {
					asked = append(asked, q)
					if len(answers) == 0 {
						return "", errors.New("EOF")
					}
					a := answers[0]
					answers = answers[1:]
					return a, nil
				},
				pause: func() func() { return func() {} },
			}
			got, err := terminalElicitor(ap, io.Discard)(context.Background(), "forms", &sdk.ElicitParams{Message: "Tell us", RequestedSchema: schema})
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v; want %+v (asked %q)", got, err, tt.want, asked)
			}
			if len(asked) > 0 && !strings.Contains(asked[0], `MCP server "forms" asks: Tell us`) {
				t.Errorf("first question %q", asked[0])
			}
		})
	}
}
