package eval_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agcore/agcore/eval"
)

func resolve(t *testing.T, raw []byte) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNativeFormat: agcore's set format reads, round-trips through
// WriteSet, and validates against its published JSON Schema.
func TestNativeFormat(t *testing.T) {
	set, err := eval.Load("testdata/weather.eval.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	if set.ID != "weather" || len(set.Cases) != 2 || set.Cases[0].Turns[0].Expect.Trajectory.Args != eval.ArgsSubset ||
		set.Cases[0].Turns[0].Expect.Limits.Latency != eval.Duration(30e9) || set.Cases[1].Thresholds["answer"] != 1 {
		t.Fatalf("set %+v", set)
	}
	schema := resolve(t, eval.SchemaJSON)
	var doc any
	b, _ := os.ReadFile("testdata/weather.eval.json")
	json.Unmarshal(b, &doc)
	if err := schema.Validate(doc); err != nil {
		t.Errorf("the example does not validate against the schema: %v", err)
	}
	var buf strings.Builder
	if err := eval.WriteSet(&buf, set); err != nil {
		t.Fatal(err)
	}
	var again any
	json.Unmarshal([]byte(buf.String()), &again)
	if err := schema.Validate(again); err != nil {
		t.Errorf("WriteSet's output does not validate: %v\n%s", err, buf.String())
	}
	back, err := eval.Parse([]byte(buf.String()), "")
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	json.Compact(&compact, back.Cases[0].Turns[0].Expect.Trajectory.Calls[1].Args)
	if len(back.Cases) != 2 || compact.String() != `{"city":"Paris"}` {
		t.Errorf("round trip: %+v", back.Cases[0].Turns[0].Expect.Trajectory)
	}
	// The report's schema is valid JSON Schema too.
	resolve(t, eval.ReportSchemaJSON)
}

// TestMalformedSetsRefused: each mistake is one line naming the file and
// the field.
func TestMalformedSetsRefused(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"syntax", "{\n  \"agcore_eval\": 1,\n  \"cases\": [\n}", "bad.json: line 4, column 1: invalid character '}'"},
		{"unknown field", `{"agcore_eval":1,"cases":[{"id":"a","turns":[{"input":"x","expect":{"trajectory":{"calls":[],"mach":"EXACT"}}}]}]}`, `bad.json: mach: unknown field`},
		{"wrong type", `{"agcore_eval":1,"cases":[{"id":"a","turns":[{"input":7}]}]}`, "bad.json: cases.turns.input: a JSON number where a string belongs"},
		{"match type", `{"agcore_eval":1,"cases":[{"id":"a","turns":[{"input":"x","expect":{"trajectory":{"calls":[],"match":"SOMETIMES"}}}]}]}`, `bad.json: cases[0].turns[0].expect.trajectory.match: "SOMETIMES" is not a match type`},
		{"argument rule", `{"agcore_eval":1,"cases":[{"id":"a","turns":[{"input":"x","expect":{"trajectory":{"calls":[{"name":"f","args_rule":"loose"}]}}}]}]}`, `cases[0].turns[0].expect.trajectory.calls[0].args_rule: "loose" is not an argument rule`},
		{"regexp", `{"agcore_eval":1,"cases":[{"id":"a","turns":[{"input":"x","expect":{"answer":{"regexp":"(a"}}}]}]}`, "cases[0].turns[0].expect.answer.regexp: error parsing regexp"},
		{"no id", `{"agcore_eval":1,"cases":[{"turns":[{"input":"x"}]}]}`, "bad.json: cases[0].id: missing"},
		{"no turns", `{"agcore_eval":1,"cases":[{"id":"a"}]}`, "bad.json: cases[0].turns: a case needs at least one turn"},
		{"duplicate ids", `{"agcore_eval":1,"cases":[{"id":"a","turns":[{"input":"x"}]},{"id":"a","turns":[{"input":"y"}]}]}`, `cases[1].id: "a" is the id of an earlier case`},
		{"no version", `{"cases":[]}`, "bad.json: agcore_eval: missing"},
		{"newer version", `{"agcore_eval":9,"cases":[]}`, "bad.json: agcore_eval: version 9 is newer"},
		{"missing record", `{"agcore_eval":1,"cases":[{"id":"a","record":"nowhere.jsonl","turns":[{"input":"x"}]}]}`, "bad.json: cases[0].record:"},
		{"not a set", `{"hello":"world"}`, "bad.json: not an eval set"},
		{"ADK: no eval_id", `{"eval_set_id":"s","eval_cases":[{"conversation":[]}]}`, "bad.json: eval_cases[0].eval_id: missing"},
		{"ADK: no user_content", `{"eval_set_id":"s","eval_cases":[{"eval_id":"e","conversation":[{"final_response":{}}]}]}`, "eval_cases[0].conversation[0].user_content: missing"},
		{"ADK test file: no query", `[{"reference":"x"}]`, "bad.json: [0].query: missing"},
		{"empty", ``, "bad.json: empty file"},
		{"no cases", `{"agcore_eval":1,"cases":[]}`, "bad.json: cases: the set has no case"},
		{"ADK: no cases", `{"eval_set_id":"s","eval_cases":[]}`, "bad.json: eval_cases: no eval case"},
		{"ADK test file: empty", `[]`, "bad.json: eval_cases: no eval case"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.json")
			os.WriteFile(p, []byte(tc.doc), 0o644)
			_, err := eval.Load(p, nil)
			var fe *eval.FormatError
			if err == nil || !errors.As(err, &fe) {
				t.Fatalf("error %v, want a *FormatError", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want %q in one line", msg, tc.want)
			}
		})
	}
}
