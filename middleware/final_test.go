package middleware

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

// finalTool ends the turn when its arguments say ok.
type finalTool struct{ funcTool }

func (finalTool) EndsTurn() bool { return true }

// TestFinalToolEndsTurn: a successful call to a tool.Final tool ends the
// turn once its batch ran, without another model call; a failed one does
// not.
func TestFinalToolEndsTurn(t *testing.T) {
	t.Parallel()
	answer := finalTool{funcTool{name: "answer", fn: func(_ context.Context, in json.RawMessage) (string, error) {
		var v struct{ OK bool }
		_ = json.Unmarshal(in, &v)
		if !v.OK {
			return "", errors.New("not ok")
		}
		return "recorded", nil
	}}}
	for _, stream := range modes() {
		t.Run(modeName(stream), func(t *testing.T) {
			echo := newCounter("echo")
			m := llmtest.New(
				llmtest.Reply(llmtest.Call("c1", "answer", `{"OK":false}`)),
				llmtest.Reply(llmtest.Call("c2", "echo", `{}`), llmtest.Call("c3", "answer", `{"OK":true}`)),
				llmtest.Text("never asked"),
			)
			loop := FunctionInvocation(ToolLoop{Tools: []tool.Tool{echo, answer}})(m)
			r := runTurn(context.Background(), loop, user("go"), stream)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if m.Calls() != 2 {
				t.Errorf("model calls = %d, want 2: a failed final call goes on, a successful one ends the turn", m.Calls())
			}
			if r.resp.FinishReason != llm.FinishStop {
				t.Errorf("finish = %s, want stop", r.resp.FinishReason)
			}
			if echo.runs.Load() != 1 {
				t.Errorf("echo ran %d times, want 1 (the batch runs whole)", echo.runs.Load())
			}
			checkTranscript(t, r.resp.Transcript)
			if n := len(r.resp.Transcript); n != 5 || r.resp.Transcript[n-1].Text() != "recorded" {
				t.Errorf("transcript:\n%s", dump(r.resp.Transcript))
			}
		})
	}
}

// TestWithInfoKeepsStructured: a model-info override that does not set
// Structured keeps the mode of the model below (the API's, which a catalog
// override does not know); one that sets it wins.
func TestWithInfoKeepsStructured(t *testing.T) {
	t.Parallel()
	below := llmtest.New().WithInfo(llm.ModelInfo{Name: "m", Structured: llm.StructuredStrict})
	if got := WithInfo(llm.ModelInfo{Name: "m", ContextWindow: 1000})(below).Info(); got.Structured != llm.StructuredStrict || got.ContextWindow != 1000 {
		t.Errorf("info = %+v, want the override with the model's structured mode", got)
	}
	if got := WithInfo(llm.ModelInfo{Structured: llm.StructuredSchema})(below).Info().Structured; got != llm.StructuredSchema {
		t.Errorf("structured = %v, want the override's", got)
	}
}
