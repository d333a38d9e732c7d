package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/conversation"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/tool"
)

// Tool calls as real models send them when they misbehave must complete the
// turn: arguments that are not JSON get an error result the model can act
// on, and calls without ids (Gemini's compatible endpoint) get unique ids
// their results pair with. The model is provider/openai over a local
// server; the agent streams, the conversation cycle's SubmitWithTools
// calls Generate.

// messyServer answers the first request of each conversation with the
// scenario's tool calls and any request that ends with tool results with
// "done". It records every request body.
type messyServer struct {
	calls string // the tool_calls JSON array of the first answer
	mu    sync.Mutex
	reqs  []chatRequest
}

type chatRequest struct {
	Stream   bool `json:"stream"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

func (s *messyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	last := req.Messages[len(req.Messages)-1]
	msg := `{"role":"assistant","content":"done"}`
	finish := "stop"
	if last.Role != "tool" {
		msg = `{"role":"assistant","content":null,"tool_calls":` + s.calls + `}`
		finish = "tool_calls"
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","model":"m","choices":[{"index":0,"message":%s,"finish_reason":%q}]}`, msg, finish)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	if last.Role == "tool" {
		fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"done\"},\"finish_reason\":\"stop\"}]}\n\n")
	} else {
		// Each call whole in its own chunk at index 0, as Gemini sends them.
		var cs []json.RawMessage
		json.Unmarshal([]byte(s.calls), &cs)
		for _, c := range cs {
			var m map[string]any
			json.Unmarshal(c, &m)
			m["index"] = 0
			b, _ := json.Marshal(m)
			fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[%s]}}]}\n\n", b)
		}
		fmt.Fprintf(w, "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n")
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// second returns the request that carried the tool results.
func (s *messyServer) second(t *testing.T) chatRequest {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) != 2 {
		t.Fatalf("%d requests, want 2 (tool calls, then the answer)", len(s.reqs))
	}
	return s.reqs[1]
}

type readArgs struct {
	Path string `json:"path"`
}

func readTool(ran *atomic.Int32) tool.Tool {
	return tool.MustFunc("read", "reads a file", func(_ context.Context, in readArgs) (string, error) {
		ran.Add(1)
		return "contents of " + in.Path, nil
	})
}

// runBoth runs one turn of "read it" through the agent (streaming) and
// through conversation.Cycle.SubmitWithTools (Generate), each against its
// own server, and hands each server to check.
func runBoth(t *testing.T, calls string, check func(t *testing.T, s *messyServer, ran int32)) {
	t.Run("agent stream", func(t *testing.T) {
		s := &messyServer{calls: calls}
		srv := httptest.NewServer(s)
		defer srv.Close()
		var ran atomic.Int32
		a, err := agent.New(openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("k"), openai.WithModel("m")),
			agent.Config{Tools: []tool.Tool{readTool(&ran)}})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := a.Run(context.Background(), []llm.Message{llm.UserText("read it")}, nil)
		if err != nil {
			t.Fatalf("the turn failed: %v", err)
		}
		if resp.Text() != "done" {
			t.Fatalf("answer %q, want done", resp.Text())
		}
		check(t, s, ran.Load())
	})
	t.Run("conversation generate", func(t *testing.T) {
		s := &messyServer{calls: calls}
		srv := httptest.NewServer(s)
		defer srv.Close()
		var ran atomic.Int32
		c := conversation.New(openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("k"), openai.WithModel("m")),
			conversation.Config{ToolLoop: middleware.ToolLoop{}})
		resp, err := c.SubmitWithTools(context.Background(), "read it", []tool.Tool{readTool(&ran)})
		if err != nil {
			t.Fatalf("the turn failed: %v", err)
		}
		if resp.Message.Text() != "done" {
			t.Fatalf("answer %q, want done", resp.Message.Text())
		}
		check(t, s, ran.Load())
	})
}

func TestMalformedToolArgumentsCompleteTheTurn(t *testing.T) {
	t.Parallel()
	runBoth(t, `[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":"}}]`,
		func(t *testing.T, s *messyServer, ran int32) {
			if ran != 0 {
				t.Fatalf("the tool ran %d times on arguments that are not JSON", ran)
			}
			req := s.second(t)
			var asst, res = req.Messages[len(req.Messages)-2], req.Messages[len(req.Messages)-1]
			if len(asst.ToolCalls) != 1 || asst.ToolCalls[0].Function.Arguments != `{"path":` {
				t.Fatalf("the call went back as %+v, want its arguments as the model sent them", asst.ToolCalls)
			}
			if res.ToolCallID != "c1" || !strings.Contains(string(res.Content), "not valid JSON") || !strings.Contains(string(res.Content), `path`) {
				t.Fatalf("tool result %s for %q, want an error naming the invalid JSON", res.Content, res.ToolCallID)
			}
		})
}

func TestToolCallsWithoutIDsCompleteTheTurn(t *testing.T) {
	t.Parallel()
	runBoth(t, `[{"id":"","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}},{"id":"","type":"function","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]`,
		func(t *testing.T, s *messyServer, ran int32) {
			if ran != 2 {
				t.Fatalf("the tool ran %d times, want 2", ran)
			}
			req := s.second(t)
			n := len(req.Messages)
			asst := req.Messages[n-3]
			if len(asst.ToolCalls) != 2 {
				t.Fatalf("assistant message %+v, want two calls", asst)
			}
			ids := map[string]string{}
			for _, c := range asst.ToolCalls {
				if c.ID == "" || ids[c.ID] != "" {
					t.Fatalf("call ids %+v: want unique, non-empty", asst.ToolCalls)
				}
				ids[c.ID] = c.Function.Arguments
			}
			for _, res := range req.Messages[n-2:] {
				args, ok := ids[res.ToolCallID]
				if res.Role != "tool" || !ok {
					t.Fatalf("result %+v does not pair with a call (%v)", res, ids)
				}
				var in readArgs
				json.Unmarshal([]byte(args), &in)
				if !strings.Contains(string(res.Content), "contents of "+in.Path) {
					t.Fatalf("result %s for the call with %s", res.Content, args)
				}
			}
		})
}
