package replay_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
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
		// a message without a role (refused by Parse: it could not be written back)
		`{"agcore_record":1}
{"type":"call","n":1,"request":{"messages":[{"content":[]}]},"response":{"message":{"role":"assistant","content":[]}}}`,
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

// FuzzAppend feeds arbitrary text to Append as an existing record file:
// it never panics, and a file Parse accepts is continued into one that
// Parse accepts, with one more turn and one more call, numbered on.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{
		`{"agcore_record":1}`,
		`{"agcore_record":1}` + "\n" + `{"type":"turn","n":1,"session":"s","input":[]}` + "\n" +
			`{"type":"call","n":1,"turn":1,"request":{"messages":[]},"response":{"message":{"role":"assistant","content":[]}}}` + "\n",
		`{"agcore_record":1}` + "\n" + `{"type":"call","n":1,"req`,
		`{"agcore_record":1}` + "\n" + `{"type":"other","n":"x"}`,
		"\n\n",
		"not json",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "r.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		before, perr := replay.Parse(bytes.NewReader(data))
		rec, err := replay.Append(path, replay.Header{Model: "m"})
		if err != nil {
			if perr == nil && len(bytes.TrimSpace(data)) > 0 {
				t.Fatalf("Append refuses a record Parse reads: %v", err)
			}
			return
		}
		msgs := []llm.Message{llm.UserText("more")}
		m := replay.ContextMiddleware()(echoing(1))
		if _, err := m.Generate(replay.WithTurn(context.Background(), rec, "fz", msgs), &llm.Request{Messages: msgs}); err != nil {
			t.Fatal(err)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		if perr != nil {
			return
		}
		after, err := replay.Load(path)
		if err != nil {
			t.Fatalf("the continued record does not parse: %v", err)
		}
		if len(after.Turns) != len(before.Turns)+1 || len(after.Calls) != len(before.Calls)+1 {
			t.Fatalf("%d turns, %d calls after; %d, %d before", len(after.Turns), len(after.Calls), len(before.Turns), len(before.Calls))
		}
		if tr := after.Turns[len(after.Turns)-1]; tr.Session != "fz" || after.Calls[len(after.Calls)-1].Turn != tr.N {
			t.Fatalf("the new turn %+v, its call's turn %d", tr, after.Calls[len(after.Calls)-1].Turn)
		}
	})
}
