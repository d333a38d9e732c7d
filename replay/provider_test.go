package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/anthropic"
	"github.com/agcore/agcore/provider/gemini"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// anyTool answers every call with "ok".
type anyTool struct{ name string }

func (a anyTool) Name() string                { return a.name }
func (a anyTool) Description() string         { return "A tool." }
func (a anyTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (a anyTool) Invoke(context.Context, json.RawMessage) (string, error) {
	return "ok", nil
}

// TestReplayOfRecordedProviderTraffic records turns answered by the real
// adapters from recorded provider traffic (Anthropic's signed thinking
// before a tool call; Gemini's thought signature on parallel function
// calls), served by httptest, and replays them: the signatures are in the
// record as the provider sent them, the request after the tool call
// carries them, and the replayed requests are the recorded ones byte for
// byte.
func TestReplayOfRecordedProviderTraffic(t *testing.T) {
	cases := []struct {
		name     string
		fixtures []string
		tool     string
		model    func(url string) llm.Model
		signed   func(m llm.Message) bool // the answer's signature is there
	}{
		{"anthropic thinking", []string{"anthropic/messages-stream-thinking-tool-use.sse", "anthropic/messages-stream-text.sse"}, "weather",
			func(url string) llm.Model {
				return anthropic.New(anthropic.WithAPIKey("sk-test"), anthropic.WithBaseURL(url), anthropic.WithModel("claude-sonnet-4-5"))
			},
			func(m llm.Message) bool {
				for _, b := range m.Content {
					if th, ok := b.(llm.Thinking); ok && th.Signature != "" {
						return true
					}
				}
				return false
			}},
		{"gemini thought signatures", []string{"gemini/stream-parallel-function-calls-with-ids.sse", "gemini/stream-text-multi-chunk.sse"}, "sum",
			func(url string) llm.Model {
				return gemini.New(gemini.WithAPIKey("test-key"), gemini.WithBaseURL(url), gemini.WithModel("gemini-2.5-flash"))
			},
			func(m llm.Message) bool {
				for _, u := range m.ToolUses() {
					if u.Signature != "" && u.Provider == "gemini" {
						return true
					}
				}
				return false
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var bodies [][]byte
			for _, f := range tc.fixtures {
				b, err := os.ReadFile(filepath.Join("..", "provider", "testdata", "providers", f))
				if err != nil {
					t.Fatal(err)
				}
				bodies = append(bodies, b)
			}
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				i := int(n.Add(1)) - 1
				if i >= len(bodies) {
					http.Error(w, "no more fixtures", http.StatusInternalServerError)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(bodies[i])
			}))
			defer srv.Close()

			cfg := agent.Config{Instructions: "Use the tool.", Tools: []tool.Tool{anyTool{tc.tool}}}
			rec := replay.Memory(replay.Header{})
			live := cfg
			live.Middleware = append(live.Middleware, rec.Middleware())
			live.ToolMiddleware = append(live.ToolMiddleware, rec.ToolMiddleware())
			a, err := agent.New(tc.model(srv.URL), live)
			if err != nil {
				t.Fatal(err)
			}
			input := []llm.Message{llm.UserText("Go.")}
			rec.Turn("", input)
			if _, err := a.Run(context.Background(), input, &agent.RunOptions{Session: &session.Session{}}); err != nil {
				t.Fatalf("recorded run: %v", err)
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			calls := rec.Record().Calls
			if len(calls) != 2 || !tc.signed(calls[0].Response.Message) {
				t.Fatalf("record: %d calls; the first answer's signature is missing: %+v", len(calls), calls[0].Response)
			}
			// Through the file form, then replayed.
			got, err := roundTrip(rec.Record())
			if err != nil {
				t.Fatal(err)
			}
			if sent := got.Calls[1].Request.Messages; !tc.signed(sent[2]) {
				t.Fatalf("the request after the tool call lost the signature: %+v", sent[2])
			}
			m := replay.NewModel(got, replay.Options{Strict: true})
			cfg.Retry.MaxAttempts = 1
			b, err := agent.New(m, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := b.Run(context.Background(), got.Turns[0].Input, &agent.RunOptions{Session: &session.Session{}}); err != nil {
				t.Fatalf("strict replay: %v", err)
			}
			for i, c := range got.Calls {
				if w, g := mustJSON(t, c.Request), mustJSON(t, m.Requests()[i]); string(w) != string(g) {
					t.Errorf("call %d: replayed request differs:\n%s\n%s", i+1, w, g)
				}
			}
		})
	}
}

// roundTrip writes rec in the record format and reads it back.
func roundTrip(rec *replay.Record) (*replay.Record, error) {
	var buf bytes.Buffer
	if _, err := rec.WriteTo(&buf); err != nil {
		return nil, err
	}
	return replay.Parse(&buf)
}
