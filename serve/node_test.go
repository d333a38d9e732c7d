package serve_test

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/tool"
)

// adder echoes, except that "add …" calls the add tool and a tool result
// is answered with "the sum is N".
func adder() *model {
	return &model{fn: func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == llm.RoleTool:
			return llm.StreamOf(&llm.Response{Message: llm.AssistantText("the sum is " + last.Text()), FinishReason: llm.FinishStop, Usage: llm.Usage{InputTokens: 7, OutputTokens: 4}})
		case strings.HasPrefix(last.Text(), "add"):
			return llm.StreamOf(&llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.ToolUse{ID: "call_add", Name: "add", Input: json.RawMessage(`{"a":2,"b":3}`)}}}, FinishReason: llm.FinishToolUse})
		}
		return llm.StreamOf(echo(req))
	}}
}

// nodeResult is what testdata/openai-node.mjs prints.
type nodeResult struct {
	Models []struct{ ID, Object, OwnedBy string } `json:"models"`
	Chat   struct {
		Object, Text, Finish string
		Total                int
	} `json:"chat"`
	ChatStream struct {
		Text, Finish  string
		Total, Chunks int
	} `json:"chatStream"`
	ChatHelper struct{ Text, Finish string } `json:"chatHelper"`
	Responses  []struct {
		ID, Status, Text, Previous string
		Total                      int
	} `json:"responses"`
	ResponsesStream struct {
		Text, First, Last, ID string
		OutputText            *string
		Ordered               bool
		Total                 int
	} `json:"responsesStream"`
	ResponsesHelper struct{ ID, Text, Status string }   `json:"responsesHelper"`
	Retrieved       string                              `json:"retrieved"`
	Branch          struct{ ID, Previous, Text string } `json:"branch"`
	Tools           *struct {
		Text  string
		Items []string
	} `json:"tools"`
	ChatTools *struct {
		Text      string
		ToolCalls any
		Finish    string
	} `json:"chatTools"`
	Errors map[string]struct {
		OK     bool
		Status int
		Code   *string
		Name   string
	} `json:"errors"`
}

// runNode runs the Node SDK script against baseURL and decodes its result.
func runNode(t *testing.T, baseURL, token, model string, tools bool) nodeResult {
	t.Helper()
	dir := os.Getenv("AGCORE_OPENAI_NODE_DIR")
	if dir == "" {
		testenv.Missing(t, "the openai npm package is not installed: eval \"$(.ci/openai-node-setup.sh)\"")
	}
	script, err := filepath.Abs(filepath.Join(testdataDir(), "openai-node.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	toolsEnv := "0"
	if tools {
		toolsEnv = "1"
	}
	cmd.Env = append(os.Environ(), "AGCORE_BASE_URL="+baseURL, "AGCORE_TOKEN="+token, "AGCORE_MODEL="+model, "AGCORE_TOOLS="+toolsEnv)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	t.Logf("the Node SDK saw: %s", out)
	var r nodeResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("the script printed %s: %v", out, err)
	}
	return r
}

func testdataDir() string { return "testdata" }

// CheckNodeResult checks what the Node SDK saw of a server whose model
// echoes "echo: " and the user's text.
func checkNodeResult(t *testing.T, r nodeResult, model string, tools bool) {
	t.Helper()
	if len(r.Models) == 0 || r.Models[0].ID != model || r.Models[0].Object != "model" {
		t.Errorf("models %+v", r.Models)
	}
	if r.Chat.Object != "chat.completion" || r.Chat.Text != "echo: hello" || r.Chat.Finish != "stop" || r.Chat.Total == 0 {
		t.Errorf("chat %+v", r.Chat)
	}
	if r.ChatStream.Text != "echo: streamed" || r.ChatStream.Finish != "stop" || r.ChatStream.Total == 0 || r.ChatStream.Chunks < 3 {
		t.Errorf("chat stream %+v", r.ChatStream)
	}
	if r.ChatHelper.Text != "echo: helper" || r.ChatHelper.Finish != "stop" {
		t.Errorf("chat stream helper %+v", r.ChatHelper)
	}
	if len(r.Responses) != 2 || r.Responses[0].Text != "echo: one" || r.Responses[0].Status != "completed" || r.Responses[0].Total == 0 ||
		r.Responses[1].Text != "echo: two" || r.Responses[1].Previous != r.Responses[0].ID {
		t.Errorf("responses %+v", r.Responses)
	}
	if s := r.ResponsesStream; s.Text != "echo: three" || !s.Ordered || s.First != "response.created" || s.Last != "response.completed" || s.ID == "" || s.Total == 0 {
		t.Errorf("responses stream %+v", s)
	}
	if h := r.ResponsesHelper; h.Text != "echo: four" || h.Status != "completed" {
		t.Errorf("responses stream helper %+v", h)
	}
	if r.Retrieved != "echo: one" {
		t.Errorf("retrieved %q", r.Retrieved)
	}
	if b := r.Branch; len(r.Responses) == 2 && (b.Text != "echo: branch" || b.Previous != r.Responses[0].ID || !strings.HasSuffix(b.ID, "_2") || b.ID == r.Responses[1].ID) {
		t.Errorf("a branch from the first response: %+v", b)
	}
	if tools {
		if r.Tools == nil || r.Tools.Text != "the sum is 5" || strings.Join(r.Tools.Items, " ") != "function_call:completed function_call_output:completed message:completed" {
			t.Errorf("tools %+v", r.Tools)
		}
		if r.ChatTools == nil || r.ChatTools.Text != "the sum is 5" || r.ChatTools.ToolCalls != nil || r.ChatTools.Finish != "stop" {
			t.Errorf("chat tools %+v", r.ChatTools)
		}
	}
	for name, want := range map[string]struct {
		status int
		code   string
	}{"unknownModel": {404, "model_not_found"}, "badToken": {401, "invalid_api_key"}} {
		got := r.Errors[name]
		if got.OK || got.Status != want.status || got.Code == nil || *got.Code != want.code {
			t.Errorf("error %s: %+v, want %d %s", name, got, want.status, want.code)
		}
	}
}

// TestOpenAINodeSDK runs OpenAI's official Node SDK against the handler.
func TestOpenAINodeSDK(t *testing.T) {
	e := newEnv(t, serve.Options{Tokens: map[string]string{"node": "node-token"}},
		agentSpec{name: "assistant", model: adder(), tools: []tool.Tool{addTool()}})
	r := runNode(t, e.srv.URL+"/v1", "node-token", "assistant", true)
	checkNodeResult(t, r, "assistant", true)
}
