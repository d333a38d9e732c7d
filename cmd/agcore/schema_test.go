package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// bookSchema is the "Book" of the recorded strict json_schema requests
// (provider/testdata/providers/structured/openai), as a user's file.
const bookSchema = `{"$defs":{"Author":{"description":"The author of a book.","properties":{"first_name":{"title":"First Name","type":"string"},"last_name":{"title":"Last Name","type":"string"}},"required":["first_name","last_name"],"title":"Author","type":"object","additionalProperties":false}},"description":"A book with a rating. The title should be in all caps!","properties":{"title":{"title":"Title","type":"string"},"author":{"$ref":"#/$defs/Author"},"rating":{"description":"For testing purposes, the rating should be 7","title":"Rating","type":"integer"}},"required":["title","author","rating"],"title":"Book","type":"object","additionalProperties":false}`

// validates fails t unless out is one line holding one JSON object that
// validates against schema.
func validates(t *testing.T, schema, out string) map[string]any {
	t.Helper()
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
		t.Fatalf("stdout = %q, want one line", out)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("stdout %q: %v", out, err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(v); err != nil {
		t.Errorf("stdout %s does not validate: %v", out, err)
	}
	return v
}

func schemaFile(t *testing.T, dir, schema string) string {
	t.Helper()
	p := filepath.Join(dir, "book.schema.json")
	if err := os.WriteFile(p, []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunSchemaNative: run --schema through the built binary against the
// recorded native structured-output streams of OpenAI and Anthropic: the
// schema goes where the provider wants it, stdout is the one object.
func TestRunSchemaNative(t *testing.T) {
	t.Parallel()
	tests := []struct {
		provider, fixture string
		base              func(url string) string
		check             func(t *testing.T, body map[string]any)
	}{
		{"openai", "structured/openai/chat-stream-json-schema-strict.sse", func(u string) string { return u + "/v1" }, func(t *testing.T, body map[string]any) {
			rf, _ := body["response_format"].(map[string]any)
			js, _ := rf["json_schema"].(map[string]any)
			if rf["type"] != "json_schema" || js["strict"] != true || js["schema"] == nil {
				t.Errorf("response_format = %v", rf)
			}
		}},
		{"anthropic", "structured/anthropic/messages-stream-output-format-beta.sse", func(u string) string { return u }, func(t *testing.T, body map[string]any) {
			oc, _ := body["output_config"].(map[string]any)
			f, _ := oc["format"].(map[string]any)
			if f["type"] != "json_schema" || f["schema"] == nil {
				t.Errorf("output_config = %v", oc)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, fixture(t, tt.fixture))
			c := newCLI(t)
			r := c.ok("run", "--provider", tt.provider, "--model", "m-1", "--base-url", tt.base(srv.URL),
				"--schema", schemaFile(t, c.dir, bookSchema), "Please recommend the most popular book by Patrick Rothfuss")
			v := validates(t, bookSchema, r.stdout)
			if v["title"] != "THE NAME OF THE WIND" {
				t.Errorf("answer %v", v)
			}
			if !strings.Contains(r.stderr, " output tokens") {
				t.Errorf("stderr has no usage line:\n%s", r.stderr)
			}
			tt.check(t, srv.got()[0].body)
		})
	}
}

// TestRunSchemaToolsRepairAndForcedTool: tools run first; an answer that
// does not validate gets one repair turn; a provider with no native mode
// (compatible) answers through the forced tool; a second invalid answer
// is exit 1 with the reason and nothing on stdout.
func TestRunSchemaToolsRepairAndForcedTool(t *testing.T) {
	t.Parallel()
	const schema = `{"type":"object","properties":{"city":{"type":"string"},"temp":{"type":"integer"}},"required":["city","temp"]}`
	t.Run("tools first, then a repaired answer", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t,
			openaiReply(turn{calls: []call{{"call_1", "read_file", `{"path":"weather.txt"}`}}, in: 10, out: 5}),
			openaiReply(turn{text: `{"city":"Paris"}`, in: 20, out: 5}),
			openaiReply(turn{text: `{"city":"Paris","temp":18}`, in: 30, out: 5}),
		)
		c := newCLI(t).openai(srv, "sk-test")
		writeFiles(t, c.dir, map[string]string{"weather.txt": "Paris: 18 degrees\n"})
		r := c.ok("run", "--schema", schema, "What is the weather in Paris? Read weather.txt.")
		if v := validates(t, schema, r.stdout); v["temp"] != float64(18) {
			t.Errorf("answer %v", v)
		}
		if !strings.Contains(r.stderr, "read_file") {
			t.Errorf("the tool call is not shown on stderr:\n%s", r.stderr)
		}
		if reqs := srv.got(); len(reqs) != 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		if m := srv.messages(2); !strings.Contains(m, "failed validation") || !strings.Contains(m, "temp") {
			t.Errorf("the repair request does not say what failed: %s", m)
		}
		if !strings.Contains(r.stderr, "input / ") || !strings.Contains(r.stderr, "60 input") {
			t.Errorf("the usage line does not sum the three calls:\n%s", r.stderr)
		}
	})
	t.Run("forced tool on a compatible server", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, openaiReply(turn{calls: []call{{"call_1", "final_answer", `{"city":"Oslo","temp":9}`}}, in: 10, out: 5}))
		c := newCLI(t)
		r := c.ok("run", "--provider", "compatible", "--model", "m-1", "--base-url", srv.URL+"/v1", "--schema", schema, "Weather in Oslo?")
		validates(t, schema, r.stdout)
		body := srv.got()[0].body
		if body["response_format"] != nil {
			t.Errorf("a response_format went to a server with no native mode: %v", body["response_format"])
		}
		tools, _ := json.Marshal(body["tools"])
		choice, _ := json.Marshal(body["tool_choice"])
		if !strings.Contains(string(tools), `"final_answer"`) || string(choice) != `"required"` {
			t.Errorf("tools %s, tool_choice %s", tools, choice)
		}
		if strings.Contains(r.stderr, "final_answer") {
			t.Errorf("the answer tool is shown as a tool call:\n%s", r.stderr)
		}
	})
	t.Run("no valid answer", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t,
			openaiReply(turn{text: `{"city":"Paris"}`, in: 10, out: 5}),
			openaiReply(turn{text: `{"city":"Paris","temp":"warm"}`, in: 10, out: 5}),
		)
		c := newCLI(t).openai(srv, "sk-test")
		r := c.run("", "run", "--schema", schema, "Weather?")
		if r.code != 1 || r.stdout != "" {
			t.Fatalf("exit %d, stdout %q; want 1 and nothing", r.code, r.stdout)
		}
		for _, want := range []string{"does not match the schema", "/temp", `"warm"`} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
			}
		}
	})
	t.Run("a refusal", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, fixture(t, "openai/chat-stream-refusal.sse"))
		c := newCLI(t).openai(srv, "sk-test")
		r := c.run("", "run", "--schema", schema, "?")
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "refused") {
			t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
		}
		if n := len(srv.got()); n != 1 {
			t.Errorf("%d requests: a refusal is not repaired", n)
		}
	})
}

// TestRunSchemaOffline: the demo model answers a schema offline with a
// value that validates; usage mistakes exit 2 before any call.
func TestRunSchemaOffline(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	r := c.ok("run", "--provider", "demo", "--schema", schemaFile(t, c.dir, bookSchema), "A book?")
	validates(t, bookSchema, r.stdout)
	for _, args := range [][]string{
		{"run", "--provider", "demo", "--schema", `{"type":"array"}`, "x"},
		{"run", "--provider", "demo", "--schema", filepath.Join(c.dir, "missing.json"), "x"},
	} {
		if r := c.run("", args...); r.code != 2 {
			t.Errorf("agcore %v: exit %d, want 2\n%s", args[len(args)-3:], r.code, r.stderr)
		}
	}
}

// TestRunSchemaJSON: --schema with --json prints the usual events on
// stdout, and the done event carries the typed answer as "object".
func TestRunSchemaJSON(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	r := c.ok("run", "--provider", "demo", "--json", "--schema", bookSchema, "A book?")
	var done map[string]json.RawMessage
	var types []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not a JSON event: %q: %v", line, err)
		}
		var typ string
		json.Unmarshal(ev["type"], &typ)
		types = append(types, typ)
		if typ == "done" {
			done = ev
		}
	}
	if done == nil || types[0] != "start" || types[len(types)-1] != "done" {
		t.Fatalf("events %q:\n%s", types, r.stdout)
	}
	validates(t, bookSchema, string(done["object"])+"\n")
}
