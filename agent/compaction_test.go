package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/internal/testkit/cacheshare"
	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// scriptModel plays internal/testkit/cacheshare's script: to a request ending
// with the user's question of turn N it answers with turn N's tool
// calls, to one ending with tool results with turn N's answer. It records
// every request's messages and tools as JSON.
type scriptModel struct {
	info llm.ModelInfo
	mu   sync.Mutex
	turn int
	reqs [][]byte
	sent []*llm.Request
}

func (m *scriptModel) Info() llm.ModelInfo { return m.info }

func (m *scriptModel) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	data, err := json.Marshal(struct {
		Messages []llm.Message        `json:"messages"`
		Tools    []llm.ToolDefinition `json:"tools"`
	}{req.Messages, req.Tools})
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, data)
	m.sent = append(m.sent, req)
	turn := m.turn
	m.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	if last.Role == llm.RoleUser {
		msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text{Text: "Let me look at the code."}}}
		for _, c := range cacheshare.Calls(turn) {
			msg.Content = append(msg.Content, llm.ToolUse{ID: c.ID, Name: c.Name, Input: c.Args})
		}
		return &llm.Response{Message: msg, FinishReason: llm.FinishToolUse}, nil
	}
	return &llm.Response{Message: llm.AssistantText(cacheshare.Answer(turn)), FinishReason: llm.FinishStop}, nil
}

func (m *scriptModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}
	return llm.StreamOf(resp)
}

// fileTool is the script's read_file or grep.
type fileTool struct{ name string }

func (t fileTool) Name() string        { return t.name }
func (t fileTool) Description() string { return "the script's " + t.name }
func (t fileTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"pattern":{"type":"string"}},"required":["path"]}`)
}

func (t fileTool) Invoke(_ context.Context, args json.RawMessage) (string, error) {
	var in struct{ Path string }
	if err := json.Unmarshal(args, &in); err != nil {
		return "", err
	}
	if t.name == "grep" {
		return cacheshare.GrepText(in.Path), nil
	}
	return cacheshare.FileText(in.Path), nil
}

func scriptAgent(t *testing.T, m *scriptModel, store session.Store, policy *compact.Policy) *agent.Agent {
	t.Helper()
	return newAgent(t, m, agent.Config{
		Name:         "script",
		Instructions: cacheshare.SystemPrompt,
		Tools:        []tool.Tool{fileTool{"read_file"}, fileTool{"grep"}},
		Store:        store,
		Compaction:   policy,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
}

// TestCompactionAcrossProcesses runs the same 45-turn tool-heavy session
// (internal/testkit/cacheshare's script; the model knows only its context window)
// twice: once through one long-lived agent, once as a new agent with a
// fresh budget policy for every turn (what a new process per turn does),
// both over a store. The requests must be byte-identical, nothing may go
// over the budget, every tool call must be paired, the history must
// compress several times, and the store must keep the whole history.
func TestCompactionAcrossProcesses(t *testing.T) {
	t.Parallel()
	// The window, and a small one where old turns are dropped too.
	for _, window := range []int{24000, 12000} {
		t.Run(fmt.Sprint(window), func(t *testing.T) {
			t.Parallel()
			testCompactionAcrossProcesses(t, llm.ModelInfo{Provider: "sim", Name: "sim", ContextWindow: window})
		})
	}
}

func testCompactionAcrossProcesses(t *testing.T, info llm.ModelInfo) {
	const turns = 45
	ctx := context.Background()

	long := &scriptModel{info: info}
	longStore := memstore.New()
	longAgent := scriptAgent(t, long, longStore, &compact.Policy{})
	short := &scriptModel{info: info}
	shortStore := memstore.New()
	for turn := 1; turn <= turns; turn++ {
		for _, run := range []struct {
			m *scriptModel
			a *agent.Agent
		}{{long, longAgent}, {short, scriptAgent(t, short, shortStore, &compact.Policy{})}} {
			run.m.turn = turn
			resp, err := run.a.Run(ctx, []llm.Message{llm.UserText(cacheshare.Question(turn))}, &agent.RunOptions{SessionID: "s"})
			if err != nil {
				t.Fatalf("turn %d: %v", turn, err)
			}
			if err := resp.PersistErr(); err != nil {
				t.Fatalf("turn %d: %v", turn, err)
			}
		}
	}
	if len(long.reqs) != len(short.reqs) {
		t.Fatalf("%d requests from the long-lived agent, %d from the per-turn agents", len(long.reqs), len(short.reqs))
	}
	for i := range long.reqs {
		if !bytes.Equal(long.reqs[i], short.reqs[i]) {
			t.Fatalf("request %d differs:\nlong-lived: %.400s\nper-turn:   %.400s", i+1, long.reqs[i], short.reqs[i])
		}
	}

	budget := info.InputBudget()
	meter := &cacheshare.Meter{Budget: budget}
	for i, req := range short.sent {
		meter.Add(fmt.Sprintf("turn %d", i/2+1), cacheshare.Request{Messages: req.Messages, Tools: req.Tools})
	}
	res := meter.Result()
	for _, v := range res.Violations {
		t.Error(v)
	}
	if res.Compactions < 3 {
		t.Errorf("%d compactions: the session did not compress enough to test anything", res.Compactions)
	}
	t.Logf("%d turns, %d requests: share %.3f, %d compactions, largest %d of %d tokens", turns, res.Requests, res.Share(), res.Compactions, res.MaxTokens, budget)
	if info.ContextWindow == 24000 && res.Share() < 0.90 {
		t.Errorf("cache-eligible share %.3f, want at least 0.90", res.Share())
	}

	for name, store := range map[string]session.Store{"long-lived": longStore, "per-turn": shortStore} {
		full, err := store.Load(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		view, err := store.LoadView(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		if full.Turns != turns || len(full.Messages) < 4*turns || full.Compaction == nil {
			t.Errorf("%s: %d turns, %d messages, compaction %v: want the whole history and a compaction", name, full.Turns, len(full.Messages), full.Compaction != nil)
			continue
		}
		if got, want := full.Messages[0].Text(), cacheshare.Question(1); got != want {
			t.Errorf("%s: the stored history starts with %q, want the first question", name, got)
		}
		if n := (compact.Estimator{}).CountMessages(full.Messages); n < 3*budget {
			t.Errorf("%s: the history holds %d tokens; want more than three budgets (%d)", name, n, 3*budget)
		}
		if err := compact.ValidatePairing(full.Messages); err != nil {
			t.Errorf("%s: stored history: %v", name, err)
		}
		// The next request is built from the view: it extends the last
		// request sent byte for byte.
		last := short.sent[len(short.sent)-1].Messages[1:]
		hist := view.RequestHistory()
		if len(hist) < len(last) {
			t.Fatalf("%s: the view holds %d messages, fewer than the last request's %d", name, len(hist), len(last))
		}
		for i := range last {
			if !hist[i].Equal(last[i]) {
				t.Fatalf("%s: view message %d is not what the last request sent: %.200s", name, i, hist[i].Text())
			}
		}
		if !strings.Contains(hist[len(hist)-1].Text(), fmt.Sprintf("In turn %d", turns)) {
			t.Errorf("%s: the view does not end with the last answer", name)
		}
	}
}

// TestCompactionLongSession plays 200 turns of the script through an
// agent over a store, with the default policy and with the naive
// baseline (drop the oldest whole turns until the request fits), and
// checks that the default shares at least as much of its input with the
// previous request while keeping at least as much of the conversation
// (the mean fraction of the turns' questions still in a request, from the
// first compressed request on).
func TestCompactionLongSession(t *testing.T) {
	testenv.Short(t, "200 turns")
	if raceEnabled {
		t.Skip("200 turns: runs without -race")
	}
	t.Parallel()
	const turns = 200
	info := llm.ModelInfo{Provider: "sim", Name: "sim", ContextWindow: 24000}
	play := func(strategy compact.Strategy) (cacheshare.Result, float64) {
		m := &scriptModel{info: info}
		a := scriptAgent(t, m, memstore.New(), &compact.Policy{Strategy: strategy})
		for turn := 1; turn <= turns; turn++ {
			m.turn = turn
			resp, err := a.Run(context.Background(), []llm.Message{llm.UserText(cacheshare.Question(turn))}, &agent.RunOptions{SessionID: "s"})
			if err != nil {
				t.Fatalf("turn %d: %v", turn, err)
			}
			if err := resp.PersistErr(); err != nil {
				t.Fatal(err)
			}
		}
		meter := &cacheshare.Meter{Budget: info.InputBudget()}
		keptSum, keptN := 0.0, 0
		for i, req := range m.sent {
			meter.Add(fmt.Sprintf("turn %d", i/2+1), cacheshare.Request{Messages: req.Messages, Tools: req.Tools})
			if meter.Result().Compactions == 0 {
				continue
			}
			present := map[string]bool{}
			for _, msg := range req.Messages {
				if msg.Role == llm.RoleUser {
					present[msg.Text()] = true
				}
			}
			kept := 0
			for turn := 1; turn <= i/2+1; turn++ {
				if present[cacheshare.Question(turn)] {
					kept++
				}
			}
			keptSum += float64(kept) / float64(i/2+1)
			keptN++
		}
		return meter.Result(), keptSum / float64(max(keptN, 1))
	}
	def, defKept := play(nil)
	naive, naiveKept := play(cacheshare.DropOldestTurns{})
	for _, v := range append(def.Violations, naive.Violations...) {
		t.Error(v)
	}
	t.Logf("%d turns: default share %.3f (%d breaks, kept %.3f); naive drop-oldest share %.3f (%d breaks, kept %.3f)",
		turns, def.Share(), def.Compactions, defKept, naive.Share(), naive.Compactions, naiveKept)
	if def.Share() < naive.Share() || defKept < naiveKept {
		t.Errorf("the default shares %.3f and keeps %.3f; the naive baseline %.3f and %.3f", def.Share(), defKept, naive.Share(), naiveKept)
	}
}
