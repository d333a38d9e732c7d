package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/sqlite"
)

// BenchmarkTurnCost measures the agent's per-turn framework cost on a
// long session: everything a turn does but wait for a model (session load,
// request assembly, token counting and the compaction decision, prefix
// hashing, request encoding, the stream's conversion, persistence),
// against a floor of one json.Marshal of the same Chat Completions request
// body.
//
// The model is provider/openai talking to a local server that drains the
// request and answers at once with a tiny streamed reply. The session holds
// about size messages of mixed, realistic content (~600 bytes of storage
// JSON on average; tool calls paired with their results); the model-info
// override gives a context window large enough that nothing is compacted.
//
// Sub-benchmarks: size={1k,10k} × {floor, adapter, store=memstore,
// store=sqlite}; "adapter" is provider/openai alone sending the same
// request, the share of a turn the agent does not control.
// Each iteration is one Agent.Run continuing a session that already holds
// the history; a turn adds two messages, so a session serves at most
// turnsPerHistory iterations (at most 2% growth at 1k) and then the next,
// identically filled one takes over. Filling a session, one warm-up turn
// on it and a garbage collection happen outside the timer: the figures are
// the steady state of a conversation, not a cold start. Besides ns/op the store sub-benchmarks
// report "x-floor": ns/op divided by the median of a few json.Marshal runs
// of the floor's request measured beside them. Every sub-benchmark also
// reports "cpu-ns/op", the process's CPU time per operation (the local
// server and the garbage collector included), steadier than wall time on a
// busy machine.
//
// Nothing here asserts a timing.
func BenchmarkTurnCost(b *testing.B) {
	for _, size := range []struct {
		name string
		n    int
	}{{"1k", 1_000}, {"10k", 10_000}} {
		history := turnHistory(size.n)
		input := llm.UserText("Thanks. One more question: which of the files we looked at should I refactor first, and why?")
		floorReq := chatCompletionsBody(append(slices.Clone(history), input))
		b.Run("size="+size.name+"/floor", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(mustMarshal(b, floorReq))))
			var cpu cpuMeter
			cpu.start()
			for b.Loop() {
				if _, err := json.Marshal(floorReq); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop()
			cpu.report(b, b.N)
		})
		b.Run("size="+size.name+"/adapter", func(b *testing.B) {
			benchAdapter(b, append(slices.Clone(history), input), floorReq)
		})
		for _, st := range []struct {
			name string
			open func(b *testing.B) session.Store
		}{
			{"memstore", func(*testing.B) session.Store { return memstore.New() }},
			{"sqlite", func(b *testing.B) session.Store {
				s, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "turns.db"))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				return s
			}},
		} {
			b.Run("size="+size.name+"/store="+st.name, func(b *testing.B) {
				benchTurns(b, st.open(b), history, input, floorReq)
			})
		}
	}
}

// benchAdapter measures provider/openai alone: one streamed call with the
// request the agent would send (its system message, the history, the new
// message), against the same local server. It is the part of a turn that
// the agent does not control.
func benchAdapter(b *testing.B, msgs []llm.Message, floorReq *ccRequest) {
	srv := httptest.NewServer(http.HandlerFunc(tinyStream))
	b.Cleanup(srv.Close)
	model := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("sk-bench"), openai.WithModel("gpt-4o"))
	req := &llm.Request{Messages: append([]llm.Message{llm.SystemText(benchInstructions)}, msgs...)}
	floor := floorNanos(b, floorReq)
	b.ReportAllocs()
	var cpu cpuMeter
	cpu.start()
	for b.Loop() {
		if _, err := llm.Collect(model.Stream(context.Background(), req)); err != nil {
			b.Fatal(err)
		}
	}
	cpu.stop()
	cpu.report(b, b.N)
	if floor > 0 {
		b.ReportMetric(float64(b.Elapsed())/float64(b.N)/floor, "x-floor")
	}
}

const benchInstructions = "You are a careful coding assistant. Answer briefly and cite the files you used."

// turnsPerHistory is how many timed turns one filled session serves.
const turnsPerHistory = 10

func benchTurns(b *testing.B, store session.Store, history []llm.Message, input llm.Message, floorReq *ccRequest) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(tinyStream))
	b.Cleanup(srv.Close)
	model := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("sk-bench"), openai.WithModel("gpt-4o"))
	info := llm.ModelInfo{Name: "gpt-4o", Provider: "openai", ContextWindow: 1 << 30, MaxOutputTokens: 16_384}
	a := newAgent(b, model, agent.Config{
		Name:         "bench",
		Instructions: benchInstructions,
		Store:        store,
		ModelInfo:    &info,
	})
	msgs := []llm.Message{input}

	sessions := 0
	var current string
	fill := func() {
		if current != "" {
			if err := store.Delete(ctx, current); err != nil {
				b.Fatal(err)
			}
		}
		current = fmt.Sprintf("s%d", sessions)
		sessions++
		fillSession(b, store, current, history)
		runTurn(ctx, b, a, msgs, current) // warm-up: the steady state, not a cold start
	}

	floor := floorNanos(b, floorReq)
	b.ReportAllocs()
	var cpu cpuMeter
	i := 0
	for b.Loop() {
		if i%turnsPerHistory == 0 {
			b.StopTimer()
			cpu.stop()
			fill()
			runtime.GC() // the filling's garbage is not the turns'
			cpu.start()
			b.StartTimer()
		}
		runTurn(ctx, b, a, msgs, current)
		i++
	}
	cpu.stop()
	cpu.report(b, i)
	if i > 0 && floor > 0 {
		b.ReportMetric(float64(b.Elapsed())/float64(i)/floor, "x-floor")
	}
}

// cpuMeter sums the process's CPU time over the timed parts of a
// benchmark: on a busy machine wall time also counts waiting for a CPU.
type cpuMeter struct {
	total, at time.Duration
	ok        bool
}

func (m *cpuMeter) start() { m.at, m.ok = cpuTime() }

func (m *cpuMeter) stop() {
	if now, ok := cpuTime(); ok && m.ok {
		m.total += now - m.at
	}
	m.ok = false
}

// report gives the CPU time per operation as "cpu-ns/op".
func (m *cpuMeter) report(b *testing.B, ops int) {
	if ops > 0 && m.total > 0 {
		b.ReportMetric(float64(m.total)/float64(ops), "cpu-ns/op")
	}
}

func runTurn(ctx context.Context, b *testing.B, a *agent.Agent, msgs []llm.Message, id string) {
	resp, err := a.Run(ctx, msgs, &agent.RunOptions{SessionID: id})
	if err != nil {
		b.Fatal(err)
	}
	if err := resp.PersistErr(); err != nil {
		b.Fatal(err)
	}
}

// fillSession stores history as session id, in turns of whole exchanges
// of about 50 messages.
func fillSession(b *testing.B, store session.Store, id string, history []llm.Message) {
	ctx := context.Background()
	for start, t := 0, 0; start < len(history); t++ {
		end := min(start+50, len(history))
		for end < len(history) && history[end].Role != llm.RoleUser { // keep tool calls with their results
			end++
		}
		if err := store.Append(ctx, id, session.Turn{ID: fmt.Sprintf("fill-%d", t), Messages: history[start:end]}); err != nil {
			b.Fatal(err)
		}
		start = end
	}
}

// floorNanos returns the median time of a few json.Marshal runs of req,
// after two unmeasured ones.
func floorNanos(b *testing.B, req *ccRequest) float64 {
	for range 2 {
		mustMarshal(b, req)
	}
	var runs []time.Duration
	for range 9 {
		t := time.Now()
		if _, err := json.Marshal(req); err != nil {
			b.Fatal(err)
		}
		runs = append(runs, time.Since(t))
	}
	slices.Sort(runs)
	return float64(runs[len(runs)/2])
}

func mustMarshal(b *testing.B, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// tinyStream drains the request and answers with a three-chunk stream.
func tinyStream(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, tinyStreamBody)
}

const tinyStreamBody = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1766084443,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":"Start with"},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1766084443,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"content":" session/prefix.go."},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1766084443,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1766084443,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":1500000,"completion_tokens":6,"total_tokens":1500006}}

data: [DONE]

`

// turnHistory returns about n messages (whole exchanges, so a few more) of
// a coding-assistant conversation: user questions, assistant messages with
// one or two tool calls, the tools' results, assistant answers. The storage
// JSON averages about 600 bytes a message. The content is deterministic.
func turnHistory(n int) []llm.Message {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the a of to in is that for it with as on this be are by from or an
		function file session store message request token hash cache turn agent model stream
		error return value type struct interface slice map string byte buffer encode decode
		load append commit test benchmark profile allocation pointer copy lock context deadline
		should could would might because however therefore instead which where when while
		refactor rename extract inline split merge move delete add change fix check verify`)
	text := func(minLen, maxLen int) string {
		target := minLen + rng.IntN(maxLen-minLen+1)
		var sb strings.Builder
		for sb.Len() < target {
			if sb.Len() > 0 {
				if rng.IntN(12) == 0 {
					sb.WriteString(". ")
				} else {
					sb.WriteByte(' ')
				}
			}
			sb.WriteString(words[rng.IntN(len(words))])
		}
		return sb.String()
	}
	tools := []string{"read_file", "grep", "list_dir", "run_tests"}
	var out []llm.Message
	for ex := 0; len(out) < n; ex++ {
		out = append(out, llm.UserText(fmt.Sprintf("[%d] %s?", ex, text(150, 450))))
		calls := 1 + rng.IntN(4)/3 // one call, sometimes two
		asst := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text{Text: text(40, 160)}}}
		var results []llm.Message
		for c := range calls {
			id := fmt.Sprintf("call_%d_%d_%08x", ex, c, rng.Uint32())
			name := tools[rng.IntN(len(tools))]
			input, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("pkg/%s/file%d.go", words[rng.IntN(len(words))], rng.IntN(100)), "pattern": text(10, 60), "context": rng.IntN(5)})
			asst.Content = append(asst.Content, llm.ToolUse{ID: id, Name: name, Input: input})
			results = append(results, llm.ToolResultText(id, text(500, 1300), rng.IntN(20) == 0))
		}
		out = append(out, asst)
		out = append(out, results...)
		out = append(out, llm.AssistantText(text(250, 800)))
	}
	return out
}

// The Chat Completions request body, as the floor encodes it.
type ccRequest struct {
	Model         string      `json:"model"`
	Messages      []ccMessage `json:"messages"`
	Stream        bool        `json:"stream"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type ccMessage struct {
	Role       string       `json:"role"`
	Content    string       `json:"content,omitempty"`
	ToolCalls  []ccToolCall `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
}

type ccToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatCompletionsBody maps msgs (text and tool calls only) to the Chat
// Completions shape, after the agent's system message.
func chatCompletionsBody(msgs []llm.Message) *ccRequest {
	req := &ccRequest{Model: "gpt-4o", Stream: true}
	req.StreamOptions.IncludeUsage = true
	req.Messages = append(req.Messages, ccMessage{Role: "system", Content: benchInstructions})
	for _, m := range msgs {
		cm := ccMessage{Role: string(m.Role), Content: m.Text()}
		if m.Role == llm.RoleTool {
			cm.Role, cm.ToolCallID = "tool", m.ToolCallID
		}
		for _, tu := range m.ToolUses() {
			var c ccToolCall
			c.ID, c.Type = tu.ID, "function"
			c.Function.Name, c.Function.Arguments = tu.Name, string(tu.Input)
			cm.ToolCalls = append(cm.ToolCalls, c)
		}
		req.Messages = append(req.Messages, cm)
	}
	return req
}

// TestTurnHistoryShape checks what BenchmarkTurnCost claims of its
// history: the size, every tool call answered right after it, and the
// average size of a message's storage JSON.
func TestTurnHistoryShape(t *testing.T) {
	t.Parallel()
	h := turnHistory(1000)
	if len(h) < 1000 || len(h) > 1010 {
		t.Fatalf("%d messages, want about 1000", len(h))
	}
	total := 0
	for i, m := range h {
		data, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		total += len(data)
		for j, tu := range m.ToolUses() {
			if r := h[i+1+j]; r.Role != llm.RoleTool || r.ToolCallID != tu.ID {
				t.Fatalf("message %d: call %s not answered at %d", i, tu.ID, i+1+j)
			}
		}
	}
	if avg := total / len(h); avg < 500 || avg > 700 {
		t.Errorf("average storage JSON %d bytes, want about 600", avg)
	}
}
