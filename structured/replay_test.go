package structured

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/provider/anthropic"
	"github.com/agcore/agcore/provider/gemini"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/provider/openai/responses"
)

// The recordings of provider/testdata/providers/structured (and two of
// openai/): real traffic of each provider's structured-output mode, with
// the requests that produced it (PROVENANCE.md has a row per file).
const fixtures = "../provider/testdata/providers"

func fixture(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// server answers the n-th request with the n-th body and keeps the
// requests' bodies.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs [][]byte
}

func serve(t *testing.T, bodies ...[]byte) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, b)
		s.mu.Unlock()
		if n >= len(bodies) {
			http.Error(w, `{"error":{"message":"no more recordings"}}`, http.StatusBadRequest)
			return
		}
		body := bodies[n]
		if len(body) > 0 && body[0] == '{' {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) request(t *testing.T, i int) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.reqs) {
		t.Fatalf("request %d was not sent (%d were)", i, len(s.reqs))
	}
	var m map[string]any
	if err := json.Unmarshal(s.reqs[i], &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func decodeMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// at walks a decoded JSON value along keys (and array indexes "0", ...).
func at(v any, keys ...string) any {
	for _, k := range keys {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i := 0
			for _, c := range k {
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func raw(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// MirascopeBook is the "Book" of the Mirascope recordings.
type MirascopeBook struct {
	Title  string `json:"title"`
	Author struct {
		FirstName string `json:"first_name"`
		LastName  string `json:"last_name"`
	} `json:"author"`
	Rating int `json:"rating"`
}

// FantasyBook is the "Book" of the charmbracelet/fantasy recordings.
type FantasyBook struct {
	Author struct {
		Name        string `json:"name"`
		Nationality string `json:"nationality"`
	} `json:"author"`
	Genres        []string `json:"genres"`
	PublishedYear int      `json:"published_year"`
	Title         string   `json:"title"`
}

// replayCase is one recording replayed through a typed run.
type replayCase struct {
	name string
	// bodies are the recorded responses, in order.
	bodies []string
	// recorded is the recorded request of the first answer.
	recorded string
	// model builds the adapter against the test server; stream false
	// means the recording is a non-streaming body, so the typed run's
	// request goes through the adapter's Generate.
	model  func(url string) llm.Model
	stream bool
	native llm.StructuredMode
	opts   func(t *testing.T, rec map[string]any, recRaw []byte) *Options
	// same lists the paths of the request's relevant fields: each must be
	// equal in the request sent and the recorded one (sentPath, recPath).
	same [][2][]string
	// check looks at the decoded answer.
	check func(t *testing.T, v json.RawMessage)
}

func openaiModel(url string) llm.Model {
	return openai.New(openai.WithBaseURL(url+"/v1"), openai.WithAPIKey("sk-test"), openai.WithModel("gpt-4o"), openai.WithStructuredOutput(llm.StructuredStrict))
}

func responsesModel(url string) llm.Model {
	return responses.New(responses.WithBaseURL(url+"/v1"), responses.WithAPIKey("sk-test"), responses.WithModel("gpt-4o"))
}

func anthropicModel(url string) llm.Model {
	return anthropic.New(anthropic.WithBaseURL(url), anthropic.WithAPIKey("sk-ant-test"), anthropic.WithModel("claude-sonnet-4-5"))
}

func geminiModel(model string) func(url string) llm.Model {
	return func(url string) llm.Model {
		return gemini.New(gemini.WithBaseURL(url), gemini.WithAPIKey("test-key"), gemini.WithModel(model))
	}
}

// schemaAt gives the typed run the recorded request's schema at path, as
// its bytes (property order kept), and the name beside it.
func schemaAt(path ...string) func(t *testing.T, rec map[string]any, recRaw []byte) *Options {
	return func(t *testing.T, rec map[string]any, recRaw []byte) *Options {
		name, _ := at(rec, append(path[:len(path)-1:len(path)-1], "name")...).(string)
		return &Options{Schema: rawAt(t, recRaw, path...), Name: name}
	}
}

// rawAt returns the bytes of the value at path (object keys only).
func rawAt(t *testing.T, b []byte, path ...string) json.RawMessage {
	t.Helper()
	for _, k := range path {
		if k != "" && k[0] >= '0' && k[0] <= '9' {
			var l []json.RawMessage
			if err := json.Unmarshal(b, &l); err != nil || int(k[0]-'0') >= len(l) {
				t.Fatalf("rawAt %v: %v", path, err)
			}
			b = l[k[0]-'0']
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("rawAt %v: %v", path, err)
		}
		b = m[k]
	}
	return b
}

func mirascopeBook(t *testing.T, v json.RawMessage) {
	var b MirascopeBook
	if err := json.Unmarshal(v, &b); err != nil {
		t.Fatal(err)
	}
	if b.Title != "THE NAME OF THE WIND" || b.Author.LastName != "Rothfuss" || b.Rating != 7 {
		t.Errorf("book = %+v", b)
	}
}

func fantasyBook(t *testing.T, v json.RawMessage) {
	var b FantasyBook
	if err := json.Unmarshal(v, &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.Title, "Lord of the Rings") || b.PublishedYear != 1954 || len(b.Genres) == 0 || b.Author.Name == "" {
		t.Errorf("book = %+v", b)
	}
}

// TestRecordedRoundTrip replays real structured-output traffic of OpenAI
// (Chat Completions and the Responses API), Gemini and Anthropic through
// a typed run: the request agcore builds for the recorded schema carries
// it where the recorded request did (format type, name, strictness and
// the schema itself), and the recorded answer validates and decodes.
func TestRecordedRoundTrip(t *testing.T) {
	t.Parallel()
	chatFormat := [][2][]string{
		{{"response_format", "type"}, {"response_format", "type"}},
		{{"response_format", "json_schema", "name"}, {"response_format", "json_schema", "name"}},
		{{"response_format", "json_schema", "strict"}, {"response_format", "json_schema", "strict"}},
		{{"response_format", "json_schema", "schema"}, {"response_format", "json_schema", "schema"}},
	}
	textFormat := [][2][]string{
		{{"text", "format", "type"}, {"text", "format", "type"}},
		{{"text", "format", "name"}, {"text", "format", "name"}},
		{{"text", "format", "strict"}, {"text", "format", "strict"}},
		{{"text", "format", "schema"}, {"text", "format", "schema"}},
	}
	tests := []replayCase{
		{name: "openai chat strict json_schema, streamed", bodies: []string{"structured/openai/chat-stream-json-schema-strict.sse"},
			recorded: "structured/openai/chat-stream-json-schema-strict.request.json", model: openaiModel, stream: true, native: llm.StructuredStrict,
			opts: schemaAt("response_format", "json_schema", "schema"), same: chatFormat, check: mirascopeBook},
		{name: "openai chat strict json_schema", bodies: []string{"structured/openai/chat-json-schema-strict.json"},
			recorded: "structured/openai/chat-json-schema-strict.request.json", model: openaiModel, native: llm.StructuredStrict,
			opts: schemaAt("response_format", "json_schema", "schema"), same: chatFormat, check: mirascopeBook},
		{name: "openai chat strict json_schema, gpt-5 streamed", bodies: []string{"structured/openai/chat-stream-json-schema-strict-gpt-5.sse"},
			recorded: "structured/openai/chat-stream-json-schema-strict-gpt-5.request.json", model: openaiModel, stream: true, native: llm.StructuredStrict,
			opts: schemaAt("response_format", "json_schema", "schema"), same: chatFormat, check: fantasyBook},
		{name: "openai responses text.format, streamed", bodies: []string{"structured/openai-responses/responses-stream-json-schema-strict.sse"},
			recorded: "structured/openai-responses/responses-stream-json-schema-strict.request.json", model: responsesModel, stream: true, native: llm.StructuredStrict,
			opts: schemaAt("text", "format", "schema"), same: textFormat, check: mirascopeBook},
		{name: "openai responses text.format", bodies: []string{"structured/openai-responses/responses-json-schema-strict.json"},
			recorded: "structured/openai-responses/responses-json-schema-strict.request.json", model: responsesModel, native: llm.StructuredStrict,
			opts: schemaAt("text", "format", "schema"), same: textFormat, check: mirascopeBook},
		{name: "gemini 3 responseJsonSchema, streamed", bodies: []string{"structured/gemini/stream-response-json-schema-gemini-3.sse"},
			recorded: "structured/gemini/stream-response-json-schema-gemini-3.request.json", model: geminiModel("gemini-3-pro-preview"), stream: true, native: llm.StructuredSchema,
			opts: schemaAt("generationConfig", "responseJsonSchema"),
			same: [][2][]string{
				{{"generationConfig", "responseMimeType"}, {"generationConfig", "responseMimeType"}},
				{{"generationConfig", "responseJsonSchema"}, {"generationConfig", "responseJsonSchema"}},
			}, check: fantasyBook},
		{name: "gemini 2.5 responseSchema (sent as responseJsonSchema), streamed", bodies: []string{"structured/gemini/stream-response-schema.sse"},
			recorded: "structured/gemini/stream-response-schema.request.json", model: geminiModel("gemini-2.5-flash"), stream: true, native: llm.StructuredSchema,
			opts: func(t *testing.T, _ map[string]any, _ []byte) *Options {
				// The recording's schema is Gemini's OpenAPI dialect
				// ("OBJECT"); agcore sends JSON Schema, so the same Book
				// comes from the OpenAI recording of the same test.
				rec := fixture(t, "structured/openai/chat-json-schema-strict.request.json")
				return &Options{Schema: rawAt(t, rec, "response_format", "json_schema", "schema"), Name: "Book"}
			},
			same:  [][2][]string{{{"generationConfig", "responseMimeType"}, {"generationConfig", "responseMimeType"}}},
			check: mirascopeBook},
		{name: "gemini 2.5 responseSchema", bodies: []string{"structured/gemini/generate-response-schema.json"},
			recorded: "structured/gemini/generate-response-schema.request.json", model: geminiModel("gemini-2.5-flash"), native: llm.StructuredSchema,
			opts: func(t *testing.T, _ map[string]any, _ []byte) *Options {
				rec := fixture(t, "structured/openai/chat-json-schema-strict.request.json")
				return &Options{Schema: rawAt(t, rec, "response_format", "json_schema", "schema"), Name: "Book"}
			},
			same:  [][2][]string{{{"generationConfig", "responseMimeType"}, {"generationConfig", "responseMimeType"}}},
			check: mirascopeBook},
		{name: "gemini 3 responseJsonSchema after a function call, streamed", bodies: []string{"structured/gemini/stream-response-json-schema-after-function-call.sse"},
			recorded: "structured/gemini/stream-response-json-schema-after-function-call.request.json", model: geminiModel("gemini-3-flash-preview"), stream: true, native: llm.StructuredSchema,
			opts: schemaAt("generationConfig", "responseJsonSchema"),
			same: [][2][]string{{{"generationConfig", "responseJsonSchema"}, {"generationConfig", "responseJsonSchema"}}},
			check: func(t *testing.T, v json.RawMessage) {
				var c struct{ City, Country string }
				if err := json.Unmarshal(v, &c); err != nil || c.City != "Mexico City" || c.Country != "Mexico" {
					t.Errorf("answer %s (%v)", v, err)
				}
			}},
		{name: "gemini refusal written into the schema's field, streamed", bodies: []string{"structured/gemini/stream-refusal-inside-json.sse"},
			recorded: "structured/gemini/stream-refusal-inside-json.request.json", model: geminiModel("gemini-2.5-flash"), stream: true, native: llm.StructuredSchema,
			opts: func(t *testing.T, _ map[string]any, _ []byte) *Options {
				return &Options{Schema: json.RawMessage(`{"type":"object","properties":{"instructions":{"type":"string"}},"required":["instructions"]}`), Name: "FentanylHandbook"}
			},
			same: [][2][]string{{{"generationConfig", "responseMimeType"}, {"generationConfig", "responseMimeType"}}},
			check: func(t *testing.T, v json.RawMessage) {
				if !strings.Contains(string(v), "I cannot provide") {
					t.Errorf("answer %s", v)
				}
			}},
		{name: "anthropic output_format (beta) as output_config.format, streamed", bodies: []string{"structured/anthropic/messages-stream-output-format-beta.sse"},
			recorded: "structured/anthropic/messages-stream-output-format-beta.request.json", model: anthropicModel, stream: true, native: llm.StructuredSchema,
			opts: schemaAt("output_format", "schema"),
			same: [][2][]string{
				{{"output_config", "format", "type"}, {"output_format", "type"}},
				{{"output_config", "format", "schema"}, {"output_format", "schema"}},
			}, check: mirascopeBook},
		{name: "anthropic output_format (beta) as output_config.format", bodies: []string{"structured/anthropic/messages-output-format-beta.json"},
			recorded: "structured/anthropic/messages-output-format-beta.request.json", model: anthropicModel, native: llm.StructuredSchema,
			opts: schemaAt("output_format", "schema"),
			same: [][2][]string{
				{{"output_config", "format", "type"}, {"output_format", "type"}},
				{{"output_config", "format", "schema"}, {"output_format", "schema"}},
			}, check: mirascopeBook},
		{name: "anthropic output_config.format", bodies: []string{"structured/anthropic/messages-output-config-format.json"},
			recorded: "structured/anthropic/messages-output-config-format.request.json", model: anthropicModel, native: llm.StructuredSchema,
			opts: schemaAt("output_config", "format", "schema"),
			same: [][2][]string{{{"output_config", "format"}, {"output_config", "format"}}},
			check: func(t *testing.T, v json.RawMessage) {
				var c struct {
					City       string
					Population int
				}
				if err := json.Unmarshal(v, &c); err != nil || c.City != "London" || c.Population != 9002488 {
					t.Errorf("answer %s (%v)", v, err)
				}
			}},
		{name: "anthropic forced tool, streamed", bodies: []string{"structured/anthropic/messages-stream-forced-tool.sse"},
			recorded: "structured/anthropic/messages-stream-forced-tool.request.json", model: anthropicModel, stream: true, native: llm.StructuredSchema,
			opts: func(t *testing.T, rec map[string]any, recRaw []byte) *Options {
				return &Options{Mode: Tool, ToolName: at(rec, "tools", "0", "name").(string), Schema: rawAt(t, recRaw, "tools", "0", "input_schema")}
			},
			same: [][2][]string{
				{{"tool_choice", "type"}, {"tool_choice", "type"}},
				{{"tool_choice", "name"}, {"tool_choice", "name"}},
				{{"tools", "0", "name"}, {"tools", "0", "name"}},
				{{"tools", "0", "input_schema"}, {"tools", "0", "input_schema"}},
			}, check: mirascopeBook},
		{name: "anthropic forced tool holding a refusal", bodies: []string{"structured/anthropic/messages-forced-tool-refusal.json"},
			recorded: "structured/anthropic/messages-forced-tool-refusal.request.json", model: anthropicModel, native: llm.StructuredSchema,
			opts: func(t *testing.T, rec map[string]any, recRaw []byte) *Options {
				return &Options{Mode: Tool, ToolName: at(rec, "tools", "0", "name").(string), Schema: rawAt(t, recRaw, "tools", "0", "input_schema")}
			},
			same: [][2][]string{
				{{"tool_choice", "type"}, {"tool_choice", "type"}},
				{{"tools", "0", "input_schema"}, {"tools", "0", "input_schema"}},
			},
			check: func(t *testing.T, v json.RawMessage) {
				if !strings.Contains(string(v), "instructions") {
					t.Errorf("answer %s", v)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var bodies [][]byte
			for _, b := range tt.bodies {
				bodies = append(bodies, fixture(t, b))
			}
			srv := serve(t, bodies...)
			recRaw := fixture(t, tt.recorded)
			rec := decodeMap(t, recRaw)
			real := tt.model(srv.URL)
			var m llm.Model = real
			if !tt.stream {
				// The agent streams; a non-streaming recording answers
				// the typed run's request through the adapter's Generate.
				m = llmtest.New(llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
					return real.Generate(ctx, req)
				})).WithInfo(llm.ModelInfo{Provider: "replay", Structured: tt.native})
			}
			if got := m.Info().Structured; got != tt.native {
				t.Fatalf("the adapter reports %v, want %v", got, tt.native)
			}
			a, err := agent.New(m, agent.Config{})
			if err != nil {
				t.Fatal(err)
			}
			msg := at(rec, "messages", "0", "content")
			if msg == nil {
				msg = "Answer."
			}
			text, _ := msg.(string)
			if text == "" {
				text = "Answer."
			}
			v, _, err := Run[json.RawMessage](context.Background(), a, ask(text), tt.opts(t, rec, recRaw))
			if err != nil {
				t.Fatal(err)
			}
			sent := srv.request(t, 0)
			for _, p := range tt.same {
				got, want := at(sent, p[0]...), at(rec, p[1]...)
				if want == nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s: sent %s, recorded %s (%s)", strings.Join(p[0], "."), raw(t, got), raw(t, want), strings.Join(p[1], "."))
				}
			}
			// The schema's properties go out in the recorded order (models
			// answer in that order).
			srv.mu.Lock()
			sentRaw := srv.reqs[0]
			srv.mu.Unlock()
			for _, p := range tt.same {
				last := p[1][len(p[1])-1]
				if last != "schema" && last != "responseJsonSchema" && last != "input_schema" {
					continue
				}
				gk, _, _ := orderedObject(rawAt(t, rawAt(t, sentRaw, p[0]...), "properties"))
				wk, _, _ := orderedObject(rawAt(t, rawAt(t, recRaw, p[1]...), "properties"))
				if !reflect.DeepEqual(gk, wk) {
					t.Errorf("%s properties sent in the order %v, recorded %v", last, gk, wk)
				}
			}
			tt.check(t, v)
		})
	}
}

// TestRecordedRepair replays Mirascope's prompted-JSON repair pair
// (Anthropic): the first answer, fenced, fails the schema (here: a
// maximum of 200 for the recorded 427); the repair turn sends the answer
// back followed by the error, and the second answer (173) is the value.
func TestRecordedRepair(t *testing.T) {
	t.Parallel()
	srv := serve(t, fixture(t, "structured/anthropic/messages-stream-prompted-json-fenced-turn-1.sse"),
		fixture(t, "structured/anthropic/messages-stream-prompted-json-repair-turn-2.sse"))
	a, err := agent.New(anthropicModel(srv.URL), agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	type LuckyNumber struct {
		Value int `json:"value"`
	}
	schema := json.RawMessage(`{"type":"object","properties":{"value":{"type":"integer","maximum":200}},"required":["value"]}`)
	v, resp, err := Run[LuckyNumber](context.Background(), a, ask("Pick a random number between 1 and 1000"), &Options{Mode: Prompted, Schema: schema, Name: "LuckyNumber"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Value != 173 {
		t.Errorf("value = %d, want the repaired 173", v.Value)
	}
	rec := decodeMap(t, fixture(t, "structured/anthropic/messages-stream-prompted-json-repair-turn-2.request.json"))
	sent := srv.request(t, 1)
	if got, want := at(sent, "messages", "1", "content", "0", "text"), at(rec, "messages", "1", "content", "0", "text"); want == nil || got != want {
		t.Errorf("the repair turn's assistant message: sent %q, recorded %q", got, want)
	}
	for i, role := range []string{"user", "assistant", "user"} {
		k := string(rune('0' + i))
		if got := at(sent, "messages", k, "role"); got != role || at(rec, "messages", k, "role") != role {
			t.Errorf("message %d: role %v, want %s as recorded", i, got, role)
		}
	}
	if repair, _ := at(sent, "messages", "2", "content", "0", "text").(string); !strings.Contains(repair, "maximum") {
		t.Errorf("the repair message does not say what failed: %q", repair)
	}
	if resp.Usage.OutputTokens == 0 {
		t.Error("no usage")
	}
}

// TestRecordedRefusal: recorded refusals (OpenAI's refusal on both APIs,
// streamed; Gemini's SAFETY finish) are a typed ErrRefusal, and no repair
// is tried.
func TestRecordedRefusal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, fixture string
		model         func(url string) llm.Model
		stream        bool
	}{
		{"openai chat", "openai/chat-stream-refusal.sse", openaiModel, true},
		{"openai responses", "openai-responses/responses-stream-refusal.sse", responsesModel, true},
		{"gemini safety", "gemini/generate-safety-blocked.json", geminiModel("gemini-2.5-flash"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serve(t, fixture(t, tt.fixture))
			real := tt.model(srv.URL)
			var m llm.Model = real
			if !tt.stream {
				m = llmtest.New(llmtest.Func(func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
					return real.Generate(ctx, req)
				})).WithInfo(llm.ModelInfo{Provider: "replay", Structured: llm.StructuredSchema})
			}
			a, err := agent.New(m, agent.Config{})
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = Run[Book](context.Background(), a, ask("?"), nil)
			var se *Error
			if !errors.As(err, &se) || !errors.Is(err, ErrRefusal) {
				t.Fatalf("err = %v, want ErrRefusal", err)
			}
			if tt.stream && se.Reason == "" {
				t.Error("the refusal's text is not in the error")
			}
			srv.mu.Lock()
			n := len(srv.reqs)
			srv.mu.Unlock()
			if n != 1 {
				t.Errorf("%d requests, want 1: a refusal is not repaired", n)
			}
		})
	}
}
