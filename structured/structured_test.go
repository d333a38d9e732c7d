package structured

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Book is the answer type of most tests.
type Book struct {
	Title  string   `json:"title"`
	Author string   `json:"author"`
	Year   int      `json:"year,omitempty"`
	Tags   []string `json:"tags,omitempty"`
}

func info(mode llm.StructuredMode) llm.ModelInfo {
	return llm.ModelInfo{Provider: "llmtest", Name: "scripted", Structured: mode}
}

func newAgent(t *testing.T, m llm.Model, cfg agent.Config) *agent.Agent {
	t.Helper()
	a, err := agent.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func ask(text string) []llm.Message { return []llm.Message{llm.UserText(text)} }

// TestRunModes: each mode sends what it should and decodes the answer.
func TestRunModes(t *testing.T) {
	t.Parallel()
	const answer = `{"title":"Dune","author":"Frank Herbert","year":1965,"tags":null}`
	tests := []struct {
		name   string
		native llm.StructuredMode
		mode   Mode
		steps  []llmtest.Step
		check  func(t *testing.T, req *llm.Request)
	}{
		{
			name: "auto on a strict API: json_schema strict with the strict form", native: llm.StructuredStrict,
			steps: []llmtest.Step{llmtest.Text(answer)},
			check: func(t *testing.T, req *llm.Request) {
				rf := req.ResponseFormat
				if rf == nil || rf.Type != "json_schema" || !rf.Strict || rf.Name != "Book" {
					t.Fatalf("response format = %+v", rf)
				}
				var s map[string]any
				_ = json.Unmarshal(rf.Schema, &s)
				if req := s["required"].([]any); len(req) != 4 {
					t.Errorf("strict schema requires %v, want every property", req)
				}
				if !strings.Contains(string(rf.Schema), `"year":{"type":["integer","null"]}`) {
					t.Errorf("an optional property is not nullable: %s", rf.Schema)
				}
				if !strings.HasPrefix(string(rf.Schema), `{"type":"object","properties":{"title"`) {
					t.Errorf("the properties are not in the struct's order: %s", rf.Schema)
				}
			},
		},
		{
			name: "auto on a schema API: json_schema as written", native: llm.StructuredSchema,
			steps: []llmtest.Step{llmtest.Text("```json\n" + answer + "\n```")},
			check: func(t *testing.T, req *llm.Request) {
				rf := req.ResponseFormat
				if rf == nil || rf.Strict || !strings.Contains(string(rf.Schema), `"required":["title","author"]`) {
					t.Fatalf("response format = %+v", rf)
				}
			},
		},
		{
			name: "auto without a native mode: the forced answer tool", native: llm.StructuredNone,
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("c1", ToolName, answer)), llmtest.Text("not asked")},
			check: func(t *testing.T, req *llm.Request) {
				if req.ResponseFormat != nil || req.ToolChoice != (llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: ToolName}) {
					t.Errorf("format %+v, tool choice %+v", req.ResponseFormat, req.ToolChoice)
				}
				if len(req.Tools) != 1 || req.Tools[0].Name != ToolName || !strings.Contains(string(req.Tools[0].Parameters), `"title"`) {
					t.Errorf("tools = %+v", req.Tools)
				}
			},
		},
		{
			name: "prompted: the schema in the user message", native: llm.StructuredStrict, mode: Prompted,
			steps: []llmtest.Step{llmtest.Text("Here it is:\n" + answer)},
			check: func(t *testing.T, req *llm.Request) {
				last := req.Messages[len(req.Messages)-1]
				if req.ResponseFormat != nil || !strings.Contains(last.Text(), `JSON Schema (Book)`) {
					t.Errorf("request: %+v", last)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			steps := tt.steps
			if tt.native == llm.StructuredNone {
				steps = steps[:1] // the valid answer ends the turn
			}
			m := llmtest.New(steps...).WithInfo(info(tt.native)).Verify(t)
			a := newAgent(t, m, agent.Config{})
			b, resp, err := Run[Book](context.Background(), a, ask("Which book?"), &Options{Mode: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			if b.Title != "Dune" || b.Year != 1965 || resp == nil {
				t.Errorf("book = %+v", b)
			}
			tt.check(t, m.Requests()[0])
		})
	}
}

// TestRepair: an invalid answer earns one repair turn carrying the error;
// a second invalid answer is the typed error; Repairs < 0 allows none.
func TestRepair(t *testing.T) {
	t.Parallel()
	bad := `{"title":"Dune"}`
	good := `{"title":"Dune","author":"Frank Herbert"}`
	tests := []struct {
		name     string
		native   llm.StructuredMode
		repairs  int
		steps    []llmtest.Step
		wantErr  error
		wantPath string
		calls    int
	}{
		{"schema error repaired", llm.StructuredSchema, 0, []llmtest.Step{llmtest.Text(bad), llmtest.Text(good)}, nil, "", 2},
		{"parse error repaired", llm.StructuredSchema, 0, []llmtest.Step{llmtest.Text(`{"title": "Du`), llmtest.Text(good)}, nil, "", 2},
		{"the repair is bounded", llm.StructuredSchema, 0, []llmtest.Step{llmtest.Text(bad), llmtest.Text(`{"title":1,"author":"x"}`)}, ErrSchema, "/title", 2},
		{"a value the type cannot hold is repaired", llm.StructuredSchema, 0, []llmtest.Step{llmtest.Text(`{"title":"Dune","author":"F","year":1e2}`), llmtest.Text(good)}, nil, "", 2},
		{"a value the type cannot hold: bounded, with its path", llm.StructuredSchema, 0, []llmtest.Step{
			llmtest.Text(`{"title":"Dune","author":"F","year":1e2}`), llmtest.Text(`{"title":"Dune","author":"F","year":1e2}`)}, ErrSchema, "/year", 2},
		{"no repair", llm.StructuredSchema, -1, []llmtest.Step{llmtest.Text(bad)}, ErrSchema, "", 1},
		{"two repairs", llm.StructuredSchema, 2, []llmtest.Step{llmtest.Text(bad), llmtest.Text("no"), llmtest.Text(good)}, nil, "", 3},
		{"a refusal is not repaired", llm.StructuredStrict, 0, []llmtest.Step{llmtest.Text("I can't help with that.").WithFinish(llm.FinishRefusal)}, ErrRefusal, "", 1},
		{"a cut answer is not repaired", llm.StructuredStrict, 0, []llmtest.Step{llmtest.Text(`{"title":"Du`).WithFinish(llm.FinishLength)}, ErrTruncated, "", 1},
		{"tool mode: the error result is the repair", llm.StructuredNone, 0, []llmtest.Step{
			llmtest.Reply(llmtest.Call("c1", ToolName, bad)), llmtest.Reply(llmtest.Call("c2", ToolName, good))}, nil, "", 2},
		{"tool mode: bounded", llm.StructuredNone, 0, []llmtest.Step{
			llmtest.Reply(llmtest.Call("c1", ToolName, bad)), llmtest.Reply(llmtest.Call("c2", ToolName, bad))}, ErrSchema, "", 2},
		{"tool mode: text instead of the tool is repaired", llm.StructuredNone, 0, []llmtest.Step{
			llmtest.Text("Dune, by Frank Herbert."), llmtest.Reply(llmtest.Call("c2", ToolName, good))}, nil, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := llmtest.New(tt.steps...).WithInfo(info(tt.native)).Verify(t)
			a := newAgent(t, m, agent.Config{})
			b, _, err := Run[Book](context.Background(), a, ask("Which book?"), &Options{Repairs: tt.repairs})
			if m.Calls() != tt.calls {
				t.Errorf("model calls = %d, want %d", m.Calls(), tt.calls)
			}
			if tt.wantErr == nil {
				if err != nil || b.Author != "Frank Herbert" {
					t.Fatalf("book %+v, err %v", b, err)
				}
				second := m.Requests()[1]
				last := second.Messages[len(second.Messages)-1]
				if tt.native != llm.StructuredNone && (last.Role != llm.RoleUser || !strings.Contains(last.Text(), "failed validation")) {
					t.Errorf("the repair turn's last message: %+v", last)
				}
				if tt.native == llm.StructuredNone && tt.name == "tool mode: the error result is the repair" &&
					(!last.IsError || !strings.Contains(last.Text(), `missing properties: ["author"]`)) {
					t.Errorf("the tool's error result: %+v", last)
				}
				return
			}
			var se *Error
			if !errors.As(err, &se) || !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want a *Error %v", err, tt.wantErr)
			}
			if se.Raw == "" || se.Attempts != tt.calls {
				t.Errorf("error %+v: want the raw answer and %d attempts", se, tt.calls)
			}
			if tt.wantPath != "" && se.Path != tt.wantPath {
				t.Errorf("path = %q, want %q", se.Path, tt.wantPath)
			}
		})
	}
}

// weather is a tool the model calls before answering.
func weather() tool.Tool {
	return tool.MustFunc("weather", "The weather in a city.", func(_ context.Context, in struct {
		City string `json:"city"`
	}) (string, error) {
		return "sunny in " + in.City, nil
	})
}

type Forecast struct {
	City    string `json:"city"`
	Weather string `json:"weather"`
}

// TestToolsThenAnswer: tools run first, then the typed answer, in both the
// native and the tool mode; in tool mode the session stays well-formed.
func TestToolsThenAnswer(t *testing.T) {
	t.Parallel()
	for _, native := range []llm.StructuredMode{llm.StructuredStrict, llm.StructuredNone} {
		t.Run(native.String(), func(t *testing.T) {
			t.Parallel()
			final := llmtest.Text(`{"city":"Paris","weather":"sunny"}`)
			if native == llm.StructuredNone {
				final = llmtest.Reply(llmtest.Call("c2", ToolName, `{"city":"Paris","weather":"sunny"}`))
			}
			m := llmtest.New(llmtest.Reply(llmtest.Call("c1", "weather", `{"city":"Paris"}`)), final).WithInfo(info(native)).Verify(t)
			store := memstore.New()
			a := newAgent(t, m, agent.Config{Tools: []tool.Tool{weather()}, Store: store})
			f, resp, err := Run[Forecast](context.Background(), a, ask("Weather in Paris?"), &Options{Run: &agent.RunOptions{SessionID: "s1"}})
			if err != nil {
				t.Fatal(err)
			}
			if f.Weather != "sunny" || resp.FinishReason != llm.FinishStop {
				t.Errorf("forecast %+v, finish %s", f, resp.FinishReason)
			}
			reqs := m.Requests()
			if native == llm.StructuredNone {
				if reqs[0].ToolChoice.Mode != llm.ToolChoiceRequired || len(reqs[0].Tools) != 2 {
					t.Errorf("first request: choice %+v, %d tools; want required over weather and the answer tool", reqs[0].ToolChoice, len(reqs[0].Tools))
				}
			} else if reqs[1].ResponseFormat == nil {
				t.Error("the answer's request has no response format")
			}
			if err := resp.PersistErr(); err != nil {
				t.Fatal(err)
			}
			s, err := store.Load(context.Background(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			if probs := compact.Check(s.Messages); len(probs) > 0 {
				t.Errorf("stored session not well-formed: %v", probs)
			}
		})
	}
}

// TestRepairContinuesSession: with a session the repair turn sends only its
// message (the history comes from the store), and both turns are stored.
func TestRepairContinuesSession(t *testing.T) {
	t.Parallel()
	m := llmtest.New(llmtest.Text(`{"title":"Dune"}`), llmtest.Text(`{"title":"Dune","author":"Frank Herbert"}`)).
		WithInfo(info(llm.StructuredSchema)).Verify(t)
	store := memstore.New()
	a := newAgent(t, m, agent.Config{Store: store})
	_, resp, err := Run[Book](context.Background(), a, ask("Which book?"), &Options{Run: &agent.RunOptions{SessionID: "s1"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.PersistErr()
	second := m.Requests()[1].Messages
	if len(second) != 3 || second[0].Text() != "Which book?" || second[1].Role != llm.RoleAssistant {
		t.Errorf("repair request: %d messages %+v", len(second), second)
	}
	s, err := store.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if n := s.Turns; n != 2 {
		t.Errorf("stored turns = %d, want 2", n)
	}
	if resp.Usage.InputTokens == 0 && resp.Usage.OutputTokens == 0 {
		t.Log("llmtest reports no usage; the sum is checked in TestUsageSummed")
	}
}

var _ session.Store = (*memstore.Store)(nil)

// TestUsageSummed: the Response's usage adds up every run, repairs
// included.
func TestUsageSummed(t *testing.T) {
	t.Parallel()
	m := llmtest.New(
		llmtest.Text(`{"title":"Dune"}`).WithUsage(llm.Usage{InputTokens: 10, OutputTokens: 2}),
		llmtest.Text(`{"title":"Dune","author":"F"}`).WithUsage(llm.Usage{InputTokens: 20, OutputTokens: 3}),
	).WithInfo(info(llm.StructuredSchema)).Verify(t)
	_, resp, err := Run[Book](context.Background(), newAgent(t, m, agent.Config{}), ask("?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.InputTokens != 30 || resp.Usage.OutputTokens != 5 {
		t.Errorf("usage = %+v, want the sum", resp.Usage)
	}
}

// TestStreamPartials: the answer's partial values grow as the JSON
// arrives; the last item is the validated value.
func TestStreamPartials(t *testing.T) {
	t.Parallel()
	m := llmtest.New(llmtest.Text(`{"title":"The Name of the Wind","author":"Patrick Rothfuss","year":2007,"tags":["fantasy"]}`)).
		WithInfo(info(llm.StructuredStrict)).WithChunkSize(5).Verify(t)
	a := newAgent(t, m, agent.Config{})
	var got []Partial[Book]
	for p, err := range Stream[Book](context.Background(), a, ask("?"), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, p)
	}
	if len(got) < 5 {
		t.Fatalf("%d items, want the answer in pieces", len(got))
	}
	last := got[len(got)-1]
	if !last.Done || last.Value.Year != 2007 || last.Response == nil {
		t.Errorf("last = %+v", last)
	}
	sawCut := false
	for i, p := range got[:len(got)-1] {
		if p.Done {
			t.Errorf("item %d is Done", i)
		}
		if !json.Valid(p.JSON) {
			t.Errorf("item %d: invalid JSON %s", i, p.JSON)
		}
		if p.Value.Title != "" && p.Value.Title != "The Name of the Wind" && strings.HasPrefix("The Name of the Wind", p.Value.Title) {
			sawCut = true
		}
	}
	if !sawCut {
		t.Error("no partial value held a title cut short")
	}
}

// TestStreamStops: breaking out of the range abandons the run.
func TestStreamStops(t *testing.T) {
	t.Parallel()
	m := llmtest.New(llmtest.Text(`{"title":"The Name of the Wind","author":"Patrick Rothfuss"}`)).
		WithInfo(info(llm.StructuredStrict)).WithChunkSize(3).Verify(t)
	n := 0
	for _, err := range Stream[Book](context.Background(), newAgent(t, m, agent.Config{}), ask("?"), nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	if n != 1 {
		t.Errorf("items = %d", n)
	}
}

// TestExplicitSchema: Options.Schema replaces T's; a non-object root is
// refused before any call.
func TestExplicitSchema(t *testing.T) {
	t.Parallel()
	m := llmtest.New(llmtest.Text(`{"n":3}`)).WithInfo(info(llm.StructuredStrict)).Verify(t)
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`)
	v, _, err := Run[json.RawMessage](context.Background(), newAgent(t, m, agent.Config{}), ask("?"), &Options{Schema: schema, Name: "count"})
	if err != nil || string(v) != `{"n":3}` {
		t.Fatalf("v %s, err %v", v, err)
	}
	rf := m.Requests()[0].ResponseFormat
	if rf.Name != "count" || !strings.Contains(string(rf.Schema), `"additionalProperties":false`) {
		t.Errorf("format %+v %s", rf, rf.Schema)
	}
	if _, _, err := Run[json.RawMessage](context.Background(), newAgent(t, llmtest.New(), agent.Config{}), ask("?"), &Options{Schema: json.RawMessage(`{"type":"array"}`)}); err == nil {
		t.Error("an array root schema was accepted")
	}
	if _, _, err := Run[[]string](context.Background(), newAgent(t, llmtest.New(), agent.Config{}), ask("?"), nil); err == nil {
		t.Error("a non-struct T without a schema was accepted")
	}
}
