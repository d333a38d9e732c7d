package tiktoken

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/compact/internal/compacttest"
	"github.com/agcore/agcore/llm"
)

func TestEveryBlockKindCostsTokens(t *testing.T) {
	t.Parallel()
	for _, c := range []*Counter{O200k(), Cl100k()} {
		base := c.CountMessages([]llm.Message{{Role: llm.RoleUser}})
		for _, b := range compacttest.OneOfEach() {
			got := c.CountMessages([]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{b}}}) - base
			if got <= 0 {
				t.Errorf("%s: a %s block costs %d tokens", c.Encoding(), b.BlockType(), got)
			}
		}
	}
}

func TestCountMessagesIsAdditive(t *testing.T) {
	t.Parallel()
	msgs := []llm.Message{
		llm.SystemText("You are terse."),
		{Role: llm.RoleUser, Content: compacttest.OneOfEach()},
		llm.AssistantText("ok"),
		llm.ToolResultText("call_1", "result text", false),
	}
	for _, c := range []*Counter{O200k(), Cl100k()} {
		base := c.CountMessages(nil)
		sum := base
		for i := range msgs {
			sum += c.CountMessages(msgs[i:i+1]) - base
		}
		if got := c.CountMessages(msgs); got != sum {
			t.Errorf("%s: count of all %d != base + shares %d", c.Encoding(), got, sum)
		}
	}
}

func TestMessageOverheadFollowsTheRecipe(t *testing.T) {
	t.Parallel()
	// OpenAI's recipe: 3 tokens per message, the role, the content, and 3
	// to prime the reply. "hello world" is 2 tokens in both encodings.
	for _, c := range []*Counter{O200k(), Cl100k()} {
		if n := c.CountText("hello world"); n != 2 {
			t.Fatalf("%s: hello world = %d tokens", c.Encoding(), n)
		}
		if got := c.CountMessages([]llm.Message{llm.UserText("hello world")}); got != 3+1+2+3 {
			t.Errorf("%s: one message = %d, want 9", c.Encoding(), got)
		}
		if got := c.CountMessages(nil); got != 3 {
			t.Errorf("%s: no messages = %d, want 3", c.Encoding(), got)
		}
	}
}

func TestToolsFollowTheRecipe(t *testing.T) {
	t.Parallel()
	c := O200k()
	noParams := []llm.ToolDefinition{{Name: "now", Description: "Current time."}}
	// 7 per function + "now:Current time" + 12 at the end.
	if got, want := c.CountTools(noParams), 7+c.CountText("now:Current time")+12; got != want {
		t.Errorf("tool without parameters = %d, want %d", got, want)
	}
	withEnum := []llm.ToolDefinition{{Name: "set", Description: "Set mode", Parameters: json.RawMessage(
		`{"type":"object","properties":{"mode":{"type":"string","description":"The mode.","enum":["on","off"]}}}`)}}
	want := 7 + c.CountText("set:Set mode") + 3 + 3 - 3 + (3 + c.CountText("on")) + (3 + c.CountText("off")) + c.CountText("mode:string:The mode") + 12
	if got := c.CountTools(withEnum); got != want {
		t.Errorf("tool with an enum = %d, want %d", got, want)
	}
	if c.CountTools(nil) != 0 {
		t.Error("no tools should cost nothing")
	}
	if Cl100k().CountTools(noParams) != 10+Cl100k().CountText("now:Current time")+12 {
		t.Error("cl100k models use 10 tokens per function")
	}
}

func TestFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		model string
		want  string
	}{
		{"gpt-4o", "o200k_base"},
		{"gpt-4o-mini-2024-07-18", "o200k_base"},
		{"ft:gpt-4o-mini-2024-07-18:org::abc", "o200k_base"},
		{"gpt-4.1-nano", "o200k_base"},
		{"gpt-5", "o200k_base"},
		{"gpt-5.1", "o200k_base"},
		{"o3-mini", "o200k_base"},
		{"openai/o4-mini", "o200k_base"},
		{"gpt-4-turbo", "cl100k_base"},
		{"gpt-4", "cl100k_base"},
		{"gpt-3.5-turbo-0125", "cl100k_base"},
		{"claude-sonnet-4-5", "estimate×1.2"},
		{"deepseek-chat", "estimate"},
		{"qwen2.5:7b", "estimate"},
		{"o1x", "estimate"},
		{"", "estimate"},
	}
	for _, tc := range tests {
		var got string
		counter, exact := For(tc.model)
		switch c := counter.(type) {
		case *Counter:
			got = string(c.Encoding())
		case compact.Estimator:
			got = "estimate"
			if c.Scale != 0 && c.Scale != 1 {
				got = "estimate×1.2"
			}
		}
		if got != tc.want || exact != (got != "estimate" && got != "estimate×1.2") {
			t.Errorf("For(%q) = %s, %v; want %s", tc.model, got, exact, tc.want)
		}
	}
}

func TestCounterIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	text := compacttest.Text("code_go.txt")
	want := O200k().CountText(text)
	msgs := []llm.Message{llm.UserText(text)}
	wantMsgs := O200k().CountMessages(msgs)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				if got := O200k().CountText(text); got != want {
					t.Errorf("concurrent count %d != %d", got, want)
				}
				if got := O200k().CountMessages(msgs); got != wantMsgs {
					t.Errorf("concurrent message count %d != %d", got, wantMsgs)
				}
			}
		})
	}
	wg.Wait()
}

func TestNewRejectsUnknownEncodings(t *testing.T) {
	t.Parallel()
	if _, err := New("p50k_base"); err == nil {
		t.Fatal("no error for an unsupported encoding")
	}
}

func TestNilBlocksDoNotPanic(t *testing.T) {
	t.Parallel()
	msgs := []llm.Message{llm.UserText("go"), {Role: llm.RoleUser, Content: []llm.Block{nil, llm.Text{Text: "x"}}}, llm.AssistantText("ok")}
	for _, c := range []*Counter{O200k(), Cl100k()} {
		c.CountMessages(msgs)
	}
}

// TestStrategiesWorkWithTheExactCounter compresses a history with the
// exact counter, as an agent on an OpenAI model does.
func TestStrategiesWorkWithTheExactCounter(t *testing.T) {
	t.Parallel()
	var msgs []llm.Message
	for i := range 60 {
		msgs = append(msgs, llm.UserText(compacttest.Text("english.txt")[:200+i]), llm.AssistantText("noted"))
	}
	c := O200k()
	budget := c.CountMessages(msgs) / 3
	out, err := compact.NewIncremental(compact.DefaultPipeline(nil)).Compress(t.Context(), msgs, budget, c)
	if err != nil && !errors.Is(err, compact.ErrCannotFit) {
		t.Fatal(err)
	}
	if err == nil && c.CountMessages(out) > budget {
		t.Errorf("compressed to %d tokens, over the budget of %d", c.CountMessages(out), budget)
	}
}
