package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/agcore/agcore/internal/testkit/cacheshare"
	"github.com/agcore/agcore/llm"
)

// TestCompactionAcrossProcesses is issue 22's product test: the 30-turn
// tool-heavy session of internal/testkit/cacheshare's script, each turn a new
// `agcore run --json --session S --provider compatible --context-window
// 24000 --store sqlite:...` process against a local OpenAI-compatible
// server that answers each question with one to three parallel read_file
// or grep calls over generated files of 2 to 4.5 KB, then with an answer.
// Every request body is recorded. With compaction stored in the session,
// each process continues from the view the previous one sent, so the
// requests share their prefixes as one long-lived process's would: the
// cache-eligible share (cacheshare.Meter over the bytes as sent) must be
// at least 0.90, no request may go over the budget, and every tool call
// must be paired with its result. Run with -v to see the figure.
func TestCompactionAcrossProcesses(t *testing.T) {
	t.Parallel()
	skipShort(t, "30 agcore processes in turn")
	const turns = 30
	c := newCLI(t)
	writeFiles(t, c.dir, cacheshare.Files())
	srv := newScriptServer(t)
	c.env["OPENAI_BASE_URL"] = srv.URL + "/v1"
	c.env["OPENAI_API_KEY"] = "sk-local"
	store := "sqlite:" + filepath.Join(c.home, "sessions.db")
	for turn := 1; turn <= turns; turn++ {
		c.ok("run", "--json", "--session", "S", "--provider", "compatible", "--model", "local-model",
			"--context-window", "24000", "--store", store, "--tools", "read_file,grep", cacheshare.Question(turn))
	}

	reqs := srv.recorded()
	if len(reqs) != 2*turns {
		t.Fatalf("%d requests, want %d (two per turn)", len(reqs), 2*turns)
	}
	// The budget: 24,000 less the 5% safety margin, the most any
	// reservation for the answer leaves.
	const budget = 24000 - 24000/20
	meter := &cacheshare.Meter{Budget: budget}
	for i, r := range reqs {
		meter.Add(fmt.Sprintf("turn %d", i/2+1), r)
	}
	res := meter.Result()
	for _, v := range res.Violations {
		t.Error(v)
	}
	t.Logf("%d processes, %d requests: cache-eligible share %.3f, %d prefix breaks, largest request %d tokens (budget at most %d)",
		turns, res.Requests, res.Share(), res.Compactions, res.MaxTokens, budget)
	if res.Compactions == 0 {
		t.Error("no request broke the prefix: the session never passed the budget")
	}
	if res.Share() < 0.90 {
		t.Errorf("cache-eligible share %.3f, want at least 0.90", res.Share())
	}
	// The whole history stays readable.
	if got := c.show("S", "--store", store); len(got.Messages) < 4*turns {
		t.Errorf("sessions show: %d messages, want the whole history (at least %d)", len(got.Messages), 4*turns)
	}
}

// scriptServer is an OpenAI-compatible server playing cacheshare's
// script: to a request whose last message is the user's question of
// turn N it streams turn N's tool calls, to one ending with tool results
// turn N's answer. It records every chat request as the meter sees it.
type scriptServer struct {
	*httptest.Server
	t    *testing.T
	mu   sync.Mutex
	reqs []cacheshare.Request
}

func newScriptServer(t *testing.T) *scriptServer {
	s := &scriptServer{t: t}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptServer) recorded() []cacheshare.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]cacheshare.Request(nil), s.reqs...)
}

var turnOf = regexp.MustCompile(`^Turn (\d+):`)

func (s *scriptServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    json.RawMessage   `json:"tools"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(raw, &body) != nil || len(body.Messages) == 0 {
		http.Error(w, `{"error":{"message":"unexpected request","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	req, err := chatRequest(body.Messages, body.Tools)
	if err != nil {
		s.t.Errorf("request body: %v", err)
		http.Error(w, `{"error":{"message":"bad body","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()

	n := 0 // the turn
	for i := len(req.Messages) - 1; i >= 0 && n == 0; i-- {
		if m := turnOf.FindStringSubmatch(req.Messages[i].Text()); m != nil && req.Messages[i].Role == llm.RoleUser {
			n, _ = strconv.Atoi(m[1])
		}
	}
	if req.Messages[len(req.Messages)-1].Role == llm.RoleUser {
		var calls []call
		for _, c := range cacheshare.Calls(n) {
			calls = append(calls, call{id: c.ID, name: c.Name, args: string(c.Args)})
		}
		openaiReply(turn{text: "Let me look at the code.", calls: calls, in: 1, out: 1})(w, r)
		return
	}
	openaiReply(turn{text: cacheshare.Answer(n), in: 1, out: 1})(w, r)
}

// chatRequest reads a Chat Completions body's messages and tools into
// what the meter counts (text, tool calls, tool results), keeping each
// message's bytes as sent.
func chatRequest(msgs []json.RawMessage, tools json.RawMessage) (cacheshare.Request, error) {
	out := cacheshare.Request{Wire: make([][]byte, len(msgs)), WireTools: tools}
	for i, raw := range msgs {
		var m struct {
			Role      string  `json:"role"`
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return out, fmt.Errorf("message %d: %w", i, err)
		}
		text := ""
		if m.Content != nil {
			text = *m.Content
		}
		var msg llm.Message
		switch m.Role {
		case "system":
			msg = llm.SystemText(text)
		case "user":
			msg = llm.UserText(text)
		case "tool":
			msg = llm.ToolResultText(m.ToolCallID, text, false)
		case "assistant":
			msg = llm.Message{Role: llm.RoleAssistant}
			if text != "" {
				msg.Content = append(msg.Content, llm.Text{Text: text})
			}
			for _, tc := range m.ToolCalls {
				msg.Content = append(msg.Content, llm.ToolUse{ID: tc.ID, Name: tc.Function.Name, Input: json.RawMessage(tc.Function.Arguments)})
			}
		default:
			return out, fmt.Errorf("message %d: role %q", i, m.Role)
		}
		out.Messages = append(out.Messages, msg)
		out.Wire[i] = raw
	}
	var defs []struct {
		Function llm.ToolDefinition `json:"function"`
	}
	if len(tools) > 0 {
		if err := json.Unmarshal(tools, &defs); err != nil {
			return out, fmt.Errorf("tools: %w", err)
		}
	}
	for _, d := range defs {
		out.Tools = append(out.Tools, d.Function)
	}
	return out, nil
}
