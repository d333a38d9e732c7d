package compact

import (
	"bytes"
	"errors"
	"image"
	"image/png"
	"testing"

	"github.com/agcore/agcore/compact/internal/compacttest"
	"github.com/agcore/agcore/compact/internal/tokens"
	"github.com/agcore/agcore/llm"
)

var counters = []struct {
	name string
	c    interface {
		TokenCounter
		CountText(string) int
	}
}{{"estimator", Estimator{}}, {"estimator×1.2", Estimator{Scale: 1.2}}}

func TestEveryBlockKindCostsTokens(t *testing.T) {
	t.Parallel()
	for _, c := range counters {
		base := c.c.CountMessages([]llm.Message{{Role: llm.RoleUser}})
		for _, b := range compacttest.OneOfEach() {
			got := c.c.CountMessages([]llm.Message{{Role: llm.RoleUser, Content: []llm.Block{b}}}) - base
			if got <= 0 {
				t.Errorf("%s: a %s block costs %d tokens", c.name, b.BlockType(), got)
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

func TestEstimatorScaleMultiplies(t *testing.T) {
	t.Parallel()
	text := compacttest.Text("english.txt")
	base := Estimator{}.CountText(text)
	if got := (Estimator{Scale: 1.5}).CountText(text); got < base*3/2-1 || got > base*3/2+1 {
		t.Errorf("scaled %d, want about %d", got, base*3/2)
	}
}

func TestEstimatorTellsScriptsApart(t *testing.T) {
	t.Parallel()
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
			t.Errorf("%s: %q estimated %d, want %d..%d", tc.rule, tc.text, got, tc.lo, tc.hi)
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
	t.Parallel()
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
		if got := tokens.ImageCost(tc.img, true); got != tc.openai {
			t.Errorf("%s: OpenAI cost %d, want %d", tc.rule, got, tc.openai)
		}
		if got := tokens.ImageCost(tc.img, false); got != tc.any {
			t.Errorf("%s: estimate %d, want %d", tc.rule, got, tc.any)
		}
	}
}

func TestInlineTextFilesAreCountedAsText(t *testing.T) {
	t.Parallel()
	doc := compacttest.Text("english.txt")
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
	t.Parallel()
	tests := []struct {
		info  llm.ModelInfo
		scale float64
	}{
		{llm.ModelInfo{Name: "gpt-4o"}, 0},
		{llm.ModelInfo{Name: "claude-sonnet-4-5"}, anthropicScale},
		{llm.ModelInfo{Name: "us.anthropic.claude-haiku-4-5-20251001-v1:0"}, anthropicScale},
		{llm.ModelInfo{Provider: "openrouter", Name: "anthropic/claude-opus-4-1"}, anthropicScale},
		{llm.ModelInfo{Provider: "anthropic", Name: "a-model-of-theirs"}, anthropicScale},
		{llm.ModelInfo{Name: "deepseek-chat"}, 0},
		{llm.ModelInfo{Name: "qwen2.5:7b"}, 0},
		{llm.ModelInfo{}, 0},
	}
	for _, tc := range tests {
		c, ok := CounterFor(tc.info).(Estimator)
		if !ok || c.Scale != tc.scale {
			t.Errorf("CounterFor(%+v) = %#v, want an estimator scaled %v", tc.info, CounterFor(tc.info), tc.scale)
		}
	}
}

func TestNilBlocksDoNotPanic(t *testing.T) {
	t.Parallel()
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
