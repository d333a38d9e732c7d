package compact

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"sync"
	"testing"

	"github.com/agcore/agcore/llm"
)

// oneOfEach holds one block of every kind, each with some content.
func oneOfEach() []llm.Block {
	return []llm.Block{
		llm.Text{Text: "some text here"},
		llm.Image{URL: "https://example.com/a.png"},
		llm.Audio{URL: "https://example.com/a.wav"},
		llm.File{FileID: "file-123", Name: "report.pdf"},
		llm.ToolUse{ID: "call_1", Name: "grep", Input: json.RawMessage(`{"q":"x"}`)},
		llm.ToolResult{ToolUseID: "call_1", Content: []llm.Block{llm.Text{Text: "found"}}},
		llm.Thinking{Text: "let me think", Signature: "sig"},
		llm.RedactedThinking{Data: "ZW5jcnlwdGVkIHJlYXNvbmluZw=="},
		llm.Extension{Kind: "citation", Data: json.RawMessage(`{"url":"https://example.com"}`)},
	}
}

var counters = []struct {
	name string
	c    interface {
		TokenCounter
		CountText(string) int
	}
}{{"estimator", Estimator{}}, {"o200k", O200k()}, {"cl100k", Cl100k()}}

func TestEveryBlockKindCostsTokens(t *testing.T) {
	for _, c := range counters {
		base := c.c.CountMessages([]llm.Message{{Role: llm.RoleUser}})
		for _, b := range oneOfEach() {
			got := c.c.CountMessages([]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{b}}}) - base
			if got <= 0 {
				t.Errorf("%s: a %s block costs %d tokens", c.name, b.BlockType(), got)
			}
		}
	}
}

func TestCountMessagesIsAdditive(t *testing.T) {
	msgs := []llm.Message{
		llm.SystemText("You are terse."),
		{Role: llm.RoleUser, Content: oneOfEach()},
		llm.AssistantText("ok"),
		llm.ToolResultText("call_1", "result text", false),
	}
	for _, c := range counters {
		base := c.c.CountMessages(nil)
		sum := base
		for i := range msgs {
			sum += c.c.CountMessages(msgs[i:i+1]) - base
		}
		if got := c.c.CountMessages(msgs); got != sum {
			t.Errorf("%s: count of all %d != base + shares %d", c.name, got, sum)
		}
	}
}

func TestOpenAIMessageOverheadFollowsTheRecipe(t *testing.T) {
	// OpenAI's recipe: 3 tokens per message, the role, the content, and 3
	// to prime the reply. "hello world" is 2 tokens in both encodings.
	for _, c := range []*OpenAICounter{O200k(), Cl100k()} {
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

func TestOpenAIToolsFollowTheRecipe(t *testing.T) {
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
	if c.CountTools(nil) != 0 || (Estimator{}).CountTools(nil) != 0 {
		t.Error("no tools should cost nothing")
	}
	if Cl100k().CountTools(noParams) != 10+Cl100k().CountText("now:Current time")+12 {
		t.Error("cl100k models use 10 tokens per function")
	}
}

func TestEstimatorScaleMultiplies(t *testing.T) {
	text := readCorpus(t, "english.txt")
	base := Estimator{}.CountText(text)
	if got := (Estimator{Scale: 1.5}).CountText(text); got < base*3/2-1 || got > base*3/2+1 {
		t.Errorf("scaled %d, want about %d", got, base*3/2)
	}
}

func TestEstimatorTellsScriptsApart(t *testing.T) {
	// Per byte, Chinese costs about twice English prose in o200k_base; an
	// estimate that counted bytes/4 would be badly off for one of them.
	tests := []struct {
		rule, text string
		lo, hi     int // acceptable range of the estimate
	}{
		{"english words are about a token each", "the quick brown fox jumps over the lazy dog", 8, 11},
		{"chinese is close to a token per character", "今天天气很好我们去公园散步吧", 10, 16},
		{"long digit runs split every three digits", "1234567890", 4, 4},
		{"camel case splits", "CountMessagesWithOverhead", 4, 6},
		{"empty text is free", "", 0, 0},
	}
	for _, tc := range tests {
		got := Estimator{}.CountText(tc.text)
		if got < tc.lo || got > tc.hi {
			t.Errorf("%s: %q estimated %d, want %d..%d (o200k says %d)", tc.rule, tc.text, got, tc.lo, tc.hi, O200k().CountText(tc.text))
		}
	}
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestImageCostFollowsProviderFormulas(t *testing.T) {
	tests := []struct {
		rule        string
		img         llm.Image
		openai, any int
	}{
		{"unknown size uses the fixed estimate", llm.Image{URL: "https://x/y.png"}, ImageTokens, ImageTokens},
		{"low detail is 85 on OpenAI", llm.Image{URL: "https://x/y.png", Detail: "low"}, ImageLowTokens, ImageTokens},
		// 1024×1024: scaled to 768×768, 4 tiles: 85+680. Anthropic: 1398.
		{"square image", llm.Image{Data: pngOf(t, 1024, 1024)}, 765, 1399},
		// 2048×4096: fits 1024×2048, then 768×1536: 2×3 tiles.
		{"tall image", llm.Image{Data: pngOf(t, 2048, 4096)}, 85 + 170*6, max(85+170*6, 784*1568/750+1)},
		{"small image", llm.Image{Data: pngOf(t, 100, 50)}, 85 + 170, 85 + 170},
	}
	for _, tc := range tests {
		if got := imageCost(tc.img, true); got != tc.openai {
			t.Errorf("%s: OpenAI cost %d, want %d", tc.rule, got, tc.openai)
		}
		if got := imageCost(tc.img, false); got != tc.any {
			t.Errorf("%s: estimate %d, want %d", tc.rule, got, tc.any)
		}
	}
}

func TestInlineTextFilesAreCountedAsText(t *testing.T) {
	doc := readCorpus(t, "english.txt")
	text := llm.File{Data: []byte(doc), MediaType: "text/plain; charset=utf-8"}
	pdf := llm.File{Data: []byte("%PDF-1.7 ..."), MediaType: "application/pdf"}
	e := Estimator{}
	if got, want := e.countBlock(text), e.CountText(doc); got != want {
		t.Errorf("text file = %d, want its text's %d", got, want)
	}
	if got := e.countBlock(pdf); got != FileTokens {
		t.Errorf("pdf = %d, want %d", got, FileTokens)
	}
}

func TestCounterFor(t *testing.T) {
	tests := []struct {
		model string
		want  string
	}{
		{"gpt-4o", "o200k_base"},
		{"gpt-4o-mini-2024-07-18", "o200k_base"},
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
		switch c := CounterFor(tc.model).(type) {
		case *OpenAICounter:
			got = string(c.Encoding())
		case Estimator:
			got = "estimate"
			if c.Scale != 0 && c.Scale != 1 {
				got = "estimate×1.2"
			}
		}
		if got != tc.want {
			t.Errorf("CounterFor(%q) = %s, want %s", tc.model, got, tc.want)
		}
	}
}

func TestOpenAICounterIsSafeForConcurrentUse(t *testing.T) {
	text := readCorpus(t, "code_go.txt")
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

func TestNewOpenAICounterRejectsUnknownEncodings(t *testing.T) {
	if _, err := NewOpenAICounter("p50k_base"); err == nil {
		t.Fatal("no error for an unsupported encoding")
	}
}

func TestNilBlocksDoNotPanic(t *testing.T) {
	msgs := []llm.Message{llm.UserText("go"), {Role: llm.RoleUser, Content: []llm.Block{nil, llm.Text{Text: "x"}}}, llm.AssistantText("ok")}
	for _, c := range counters {
		c.c.CountMessages(msgs)
	}
	Check(msgs)
	Repair(msgs)
	for _, s := range []Strategy{Microcompact{MinFree: -1}, Truncate{}, &Summarize{Model: &fakeModel{}}, NewIncremental(DefaultPipeline(nil))} {
		if _, err := s.Compress(ctx, msgs, 5, est); err != nil && !errors.Is(err, ErrCannotFit) {
			t.Errorf("%T: %v", s, err)
		}
	}
}
