package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type weatherIn struct {
	City  string   `json:"city" jsonschema:"the city to look up"`
	Unit  string   `json:"unit,omitempty" jsonschema:"temperature unit" enum:"celsius,fahrenheit"`
	Days  int      `json:"days,omitempty" enum:"1,3,7"`
	Tags  []string `json:"tags,omitempty" enum:"rain,wind"`
	Inner *struct {
		Mode string `json:"mode" enum:"fast,slow"`
	} `json:"inner,omitempty"`
}

type weatherOut struct {
	City string  `json:"city"`
	Temp float64 `json:"temp"`
}

func weather(_ context.Context, in weatherIn) (weatherOut, error) {
	return weatherOut{City: in.City, Temp: 21.5}, nil
}

func TestSchemaIsGeneratedFromTheArgumentType(t *testing.T) {
	t.Parallel()
	w := MustFunc("get_weather", "Current weather", weather)
	var s struct {
		Type       string   `json:"type"`
		Required   []string `json:"required"`
		Additional *bool    `json:"additionalProperties"`
		Properties map[string]struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
			Enum        []any  `json:"enum"`
			Items       *struct {
				Enum []any `json:"enum"`
			} `json:"items"`
			Properties map[string]struct {
				Enum []any `json:"enum"`
			} `json:"properties"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(w.Parameters(), &s); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rule string
		ok   bool
	}{
		{"arguments are an object", s.Type == "object"},
		{"fields without omitempty are required", len(s.Required) == 1 && s.Required[0] == "city"},
		{"unknown properties are rejected", s.Additional != nil && !*s.Additional},
		{"jsonschema tag is the description", s.Properties["city"].Description == "the city to look up"},
		{"enum tag restricts a string", len(s.Properties["unit"].Enum) == 2 && s.Properties["unit"].Enum[0] == "celsius"},
		{"enum tag restricts an integer", len(s.Properties["days"].Enum) == 3 && s.Properties["days"].Enum[2] == float64(7)},
		{"enum tag on a slice restricts its items", s.Properties["tags"].Items != nil && len(s.Properties["tags"].Items.Enum) == 2},
		{"enum tags apply in nested structs", len(s.Properties["inner"].Properties["mode"].Enum) == 2},
	}
	for _, tt := range tests {
		if !tt.ok {
			t.Errorf("%s: schema %s", tt.rule, w.Parameters())
		}
	}
	if !strings.HasPrefix(string(w.Parameters()), `{"type":"object","properties":{"city"`) {
		t.Errorf("properties not in field order: %s", w.Parameters())
	}
}

func TestArgumentsAreValidatedBeforeTheFunctionRuns(t *testing.T) {
	t.Parallel()
	ran := 0
	w := MustFunc("get_weather", "", func(ctx context.Context, in weatherIn) (weatherOut, error) {
		ran++
		return weather(ctx, in)
	})
	tests := []struct {
		name    string
		args    string
		wantErr string // "" means the call succeeds
	}{
		{"valid arguments run the function", `{"city":"Paris","unit":"celsius"}`, ""},
		{"not valid JSON", `{"city":`, "not valid JSON"},
		{"not an object", `["Paris"]`, "must be a JSON object"},
		{"missing required property", `{"unit":"celsius"}`, "city"},
		{"wrong type", `{"city":42}`, "string"},
		{"value outside the enum", `{"city":"Paris","unit":"kelvin"}`, "kelvin"},
		{"unknown property", `{"city":"Paris","color":"red"}`, "color"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := ran
			out, err := w.Invoke(context.Background(), json.RawMessage(tt.args))
			if tt.wantErr == "" {
				if err != nil || out != `{"city":"Paris","temp":21.5}` || ran != before+1 {
					t.Fatalf("out %q err %v ran %d", out, err, ran-before)
				}
				return
			}
			var ae *ArgumentError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want an ArgumentError mentioning %q", err, tt.wantErr)
			}
			if ran != before {
				t.Error("the function ran despite invalid arguments")
			}
		})
	}
}

func TestResultsAreSerializedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		tool Tool
		want string
	}{
		{"a string is used as is", MustFunc("s", "", func(context.Context, struct{}) (string, error) { return `a "quoted" text`, nil }), `a "quoted" text`},
		{"bytes are used as is", MustFunc("b", "", func(context.Context, struct{}) ([]byte, error) { return []byte("raw"), nil }), "raw"},
		{"raw JSON is used as is", MustFunc("r", "", func(context.Context, struct{}) (json.RawMessage, error) { return json.RawMessage(`{"a":1}`), nil }), `{"a":1}`},
		{"a value is JSON-encoded", MustFunc("v", "", func(context.Context, struct{}) (map[string]int, error) { return map[string]int{"n": 1}, nil }), `{"n":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.tool.Invoke(ctx, nil)
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestFuncRejectsBadDefinitions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		make func() error
	}{
		{"empty name", func() error { _, err := Func("", "", weather); return err }},
		{"nil function", func() error {
			_, err := Func[weatherIn, weatherOut]("x", "", nil)
			return err
		}},
		{"arguments not a struct", func() error {
			_, err := Func("x", "", func(context.Context, string) (string, error) { return "", nil })
			return err
		}},
		{"enum on an unsupported type", func() error {
			_, err := Func("x", "", func(context.Context, struct {
				B bool `json:"b" enum:"true"`
			}) (string, error) {
				return "", nil
			})
			return err
		}},
	}
	for _, tt := range tests {
		if tt.make() == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestFuncOptionsReachTheDefinition(t *testing.T) {
	t.Parallel()
	w := MustFunc("w", "desc", weather, WithApproval(), WithTimeout(time.Second))
	d := Definition(w)
	if !NeedsApproval(w) || d.Name != "w" || d.Description != "desc" || string(d.Parameters) != string(w.Parameters()) {
		t.Errorf("definition = %+v", d)
	}
	if w.Timeout() != time.Second {
		t.Errorf("timeout = %v", w.Timeout())
	}
	if NeedsApproval(MustFunc("plain", "", weather)) {
		t.Error("a tool without WithApproval needs approval")
	}
	out, err := w.Invoke(context.Background(), json.RawMessage(`{"city":"Oslo"}`))
	if err != nil || !strings.Contains(out, "Oslo") {
		t.Errorf("Func = %q, %v", out, err)
	}
}

func TestFuncTimeoutAppliesHoweverTheToolIsCalled(t *testing.T) {
	t.Parallel()
	slow := MustFunc("slow", "", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, WithTimeout(5*time.Millisecond))
	_, err := slow.Invoke(context.Background(), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the tool's deadline", err)
	}
}

func TestFatalIsInspectable(t *testing.T) {
	t.Parallel()
	cause := errors.New("disk on fire")
	err := Fatal(cause)
	if !IsFatal(err) || !errors.Is(err, ErrFatal) || !errors.Is(err, cause) || err.Error() != "disk on fire" {
		t.Errorf("Fatal(%v) = %v", cause, err)
	}
	if Fatal(nil) != nil {
		t.Error("Fatal(nil) != nil")
	}
	if IsFatal(cause) {
		t.Error("a plain error is fatal")
	}
}

func TestWithSchemaReplacesTheGeneratedSchema(t *testing.T) {
	t.Parallel()
	min := 1.0
	s, err := NewSchema(&jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"n": {Type: "integer", Minimum: &min}},
		Required:   []string{"n"},
	})
	if err != nil {
		t.Fatal(err)
	}
	tl := MustFunc("count", "", func(_ context.Context, in struct {
		N int `json:"n"`
	}) (int, error) {
		return in.N, nil
	}, WithSchema(s))
	if string(tl.Parameters()) != string(s.JSON()) {
		t.Errorf("parameters = %s", tl.Parameters())
	}
	if _, err := tl.Invoke(context.Background(), json.RawMessage(`{"n":0}`)); err == nil || !strings.Contains(err.Error(), "minimum") {
		t.Errorf("n=0 passed the custom schema: %v", err)
	}
	if out, err := tl.Invoke(context.Background(), json.RawMessage(`{"n":2}`)); err != nil || out != "2" {
		t.Errorf("n=2: %q, %v", out, err)
	}
}
