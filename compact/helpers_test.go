package compact

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/llm"
)

// words is a small vocabulary for generated text.
var words = strings.Fields(`the a tool result file error build test value config server client request
response token budget cache session agent model message thinking signature parse write read list
search query index table row column field status retry timeout deadline context cancel
模型 工具 结果 文件 错误 缓存 会话`)

func randText(r *rand.Rand, n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(words[r.IntN(len(words))])
	}
	return sb.String()
}

// history generates a valid, tool-heavy conversation of about n messages
// (at least 1): a system prompt, then turns of a user message, zero to three
// exchanges of parallel tool calls (some with thinking blocks, some results
// errors, some results large), and a closing assistant answer.
func history(r *rand.Rand, n int) []llm.Message {
	var msgs []llm.Message
	if r.IntN(4) > 0 {
		msgs = append(msgs, llm.SystemText("You are a careful agent. "+randText(r, 20)))
	}
	call := 0
	for len(msgs) < n {
		msgs = append(msgs, llm.UserText(randText(r, 5+r.IntN(40))))
		for range r.IntN(4) {
			var a llm.Message
			a.Role = llm.RoleAssistant
			if r.IntN(3) == 0 {
				a.Content = append(a.Content, llm.Thinking{Text: randText(r, 30), Signature: fmt.Sprintf("sig-%d", r.Uint64())})
			}
			if r.IntN(2) == 0 {
				a.Content = append(a.Content, llm.Text{Text: randText(r, 10)})
			}
			k := 1 + r.IntN(4)
			var ids []string
			for range k {
				call++
				id := fmt.Sprintf("call_%d", call)
				ids = append(ids, id)
				input, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("src/f%d.go", r.IntN(50)), "q": randText(r, 3)})
				a.Content = append(a.Content, llm.ToolUse{ID: id, Name: []string{"read_file", "grep", "run_tests", "list_dir"}[r.IntN(4)], Input: input})
			}
			msgs = append(msgs, a)
			for _, id := range ids {
				size := 5 + r.IntN(60)
				if r.IntN(5) == 0 {
					size = 200 + r.IntN(1500)
				}
				msgs = append(msgs, llm.ToolResultText(id, randText(r, size), r.IntN(7) == 0))
			}
		}
		msgs = append(msgs, llm.AssistantText(randText(r, 5+r.IntN(60))))
	}
	return msgs
}

// deepCopy copies messages and their content slices, so a test can tell
// whether a strategy changed its input.
func deepCopy(msgs []llm.Message) []llm.Message {
	if msgs == nil {
		return nil
	}
	out := make([]llm.Message, len(msgs))
	for i, m := range msgs {
		out[i] = m.Clone()
	}
	return out
}

func mustUnchanged(t *testing.T, before, after []llm.Message) {
	t.Helper()
	if !reflect.DeepEqual(before, after) {
		t.Fatal("the input was modified")
	}
}

// lastExchangeMessage returns the last assistant message with tool calls.
func lastExchangeMessage(msgs []llm.Message) (llm.Message, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant && msgs[i].HasToolUse() {
			return msgs[i], true
		}
	}
	return llm.Message{}, false
}

func contains(msgs []llm.Message, m llm.Message) bool {
	for i := range msgs {
		if reflect.DeepEqual(msgs[i], m) {
			return true
		}
	}
	return false
}

// fakeModel is a summarizer that answers with a fixed-size summary, or
// fails while fail is set. It records its requests.
type fakeModel struct {
	mu       sync.Mutex
	fail     error
	calls    int
	requests []*llm.Request
}

func (f *fakeModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	f.requests = append(f.requests, req)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if f.fail != nil {
		return nil, f.fail
	}
	text := fmt.Sprintf("Goal: finish the task. Done: summary number %d of %d bytes of history. Pending: continue.",
		f.calls, len(req.Messages[len(req.Messages)-1].Text()))
	return &llm.Response{Message: llm.AssistantText(text), FinishReason: llm.FinishStop}, nil
}

func (f *fakeModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	resp, err := f.Generate(ctx, req)
	if err != nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}
	return llm.StreamOf(resp)
}

func (f *fakeModel) Info() llm.ModelInfo { return llm.ModelInfo{Provider: "fake", Name: "summarizer"} }

func (f *fakeModel) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}
