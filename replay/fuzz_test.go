package replay_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agcore/agcore/replay"
)

// FuzzParse feeds arbitrary text to the record parser: it never panics,
// and a record it accepts writes out to text that parses again and writes
// out to the same bytes (the format round-trips).
func FuzzParse(f *testing.F) {
	seeds := []string{
		`{"agcore_record":1}`,
		`{"agcore_record":1,"provider":"openai","model":"gpt-4o","tools":["grep"]}
{"type":"turn","n":1,"session":"s","input":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}
{"type":"call","n":1,"turn":1,"request":{"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"tools":[{"name":"grep","parameters":{"type":"object"}}],"max_tokens":5,"temperature":0.5},"response":{"id":"r","message":{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"grep","input":{"q":"x"},"signature":"s","provider":"gemini"}]},"finish_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}}}
{"type":"tool","turn":1,"id":"c1","name":"grep","input":{"q":"x"},"output":"found"}
{"type":"call","n":2,"turn":1,"request":{"base":1,"keep":1,"messages":[{"role":"tool_result","tool_call_id":"c1","content":[{"type":"text","text":"found"}]}]},"error":{"kind":"rate_limited","status":429,"retry_after":"2s"}}`,
		`{"agcore_record":2}`,
		`{"agcore_record":1}
{"type":"call","n":1,"request":{"base":3,"keep":1,"messages":[]},"response":{"message":{"role":"assistant","content":[]}}}`,
		"",
		"not json",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := replay.Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		var first bytes.Buffer
		if _, err := rec.WriteTo(&first); err != nil {
			if strings.Contains(err.Error(), "json") { // a value encoding/json will not write back (NaN cannot come from JSON)
				t.Fatalf("writing a parsed record: %v", err)
			}
			return
		}
		again, err := replay.Parse(bytes.NewReader(first.Bytes()))
		if err != nil {
			t.Fatalf("a written record does not parse: %v\n%s", err, first.Bytes())
		}
		var second bytes.Buffer
		if _, err := again.WriteTo(&second); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("the round trip changed the record:\n%s\n%s", first.Bytes(), second.Bytes())
		}
	})
}
