package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

// encoderModels are the configurations whose mapping differs: OpenAI's own
// server (reasoning_details never sent, max_completion_tokens for its
// reasoning families), a compatible server (Gemini's signatures), DeepSeek
// (reasoning_content), OpenRouter (reasoning_details), a forced
// max-tokens parameter.
func encoderModels() map[string]*Model {
	return map[string]*Model{
		"openai":          New(WithAPIKey("k"), WithBaseURL("https://api.openai.com/v1"), WithModel("gpt-4o")),
		"openai-gpt-5":    New(WithAPIKey("k"), WithBaseURL("https://api.openai.com/v1"), WithModel("gpt-5")),
		"compatible":      New(WithAPIKey("k"), WithBaseURL("http://x.invalid/v1beta/openai"), WithModel("gemini-3-pro-preview")),
		"deepseek":        New(DeepSeek(), WithAPIKey("k"), WithModel("deepseek-reasoner")),
		"openrouter":      New(OpenRouter(), WithAPIKey("k"), WithModel("anthropic/claude-sonnet-4")),
		"reasoning+param": New(WithAPIKey("k"), WithBaseURL("http://x.invalid/v1"), WithReasoningContent(true), WithMaxTokensParam("max_completion_tokens")),
		"no-model":        New(WithAPIKey("k"), WithBaseURL("http://x.invalid/v1")),
	}
}

// checkFastEncoder compares the encoder with the reference for req: the
// same error (kind and message) where the reference fails, the
// reference's bytes everywhere else. It reports whether a body was
// written.
func checkFastEncoder(t testing.TB, m *Model, req *llm.Request, stream bool) bool {
	t.Helper()
	fast, ferr := m.appendRequest(nil, req, stream)
	ref, err := m.marshalRequest(req, stream)
	if (ferr == nil) != (err == nil) || (err != nil && ferr.Error() != err.Error()) || llm.KindOf(ferr) != llm.KindOf(err) {
		t.Fatalf("encoder error %v, reference error %v\nencoder: %s", ferr, err, fast)
	}
	if err == nil && !bytes.Equal(fast, ref) {
		i := 0
		for i < len(fast) && i < len(ref) && fast[i] == ref[i] {
			i++
		}
		lo := max(0, i-60)
		t.Fatalf("the encoder differs at byte %d:\nfast: %q\n ref: %q", i, fast[lo:min(len(fast), i+60)], ref[lo:min(len(ref), i+60)])
	}
	return err == nil
}

// checkAllModels runs checkFastEncoder for every configuration, streamed
// and not, and returns how many bodies the fast path wrote and how many
// name a model (without one there is no body).
func checkAllModels(t testing.TB, models map[string]*Model, req *llm.Request) (written, named int) {
	t.Helper()
	for _, m := range models {
		for _, stream := range []bool{false, true} {
			if checkFastEncoder(t, m, req, stream) {
				written++
			}
			if req.Model != "" || m.cfg.o.Model != "" {
				named++
			}
		}
	}
	return written, named
}

// TestFastEncoderMatchesJSON is the differential test of the fast path:
// the request goldens' conversation, every recorded fixture's answer sent
// back in a follow-up request, the extras (reasoning_details, Gemini
// signatures, malformed arguments), and randomized requests full of odd
// strings, under every configuration.
func TestFastEncoderMatchesJSON(t *testing.T) {
	models := encoderModels()
	t.Run("golden conversation", func(t *testing.T) {
		for _, model := range []string{"", "gpt-5", "deepseek-reasoner"} {
			req := conversation()
			req.Model = model
			if n, named := checkAllModels(t, models, req); n != named {
				t.Fatalf("the fast path wrote %d of the %d bodies", n, named)
			}
		}
	})
	t.Run("message mapping cases", func(t *testing.T) {
		for _, req := range mappingRequests() {
			checkAllModels(t, models, req)
		}
	})
	t.Run("fixtures sent back", func(t *testing.T) {
		n := 0
		for _, req := range fixtureFollowUps(t) {
			if n, named := checkAllModels(t, models, req); n != named {
				t.Fatalf("the fast path wrote %d of the %d bodies for %v", n, named, req.Messages)
			}
			n++
		}
		if n < 20 {
			t.Fatalf("only %d fixture answers", n)
		}
	})
	t.Run("random", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 11))
		total, written := 0, 0
		for range 3000 {
			req := randomRequest(rng)
			n, named := checkAllModels(t, models, req)
			written += n
			total += named
		}
		// Most random requests are valid: the fast path must have written
		// most bodies, or the test says little.
		if written < total*3/4 {
			t.Fatalf("the fast path wrote only %d of %d bodies", written, total)
		}
		t.Logf("the fast path wrote %d of %d bodies", written, total)
	})
}

// TestEncodeRequestMergesExtraAfterTheFastPath checks that Extra is merged
// into the fast path's body as into the reference's.
func TestEncodeRequestMergesExtraAfterTheFastPath(t *testing.T) {
	m := New(WithAPIKey("k"), WithModel("m"))
	req := conversation()
	req.Extra = map[string]any{"seed": 7, "temperature": nil, "model": "x<y"}
	got, err := m.encodeRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.appendRequest(nil, req, true); err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	if v["seed"] != 7.0 || v["model"] != "x<y" || v["temperature"] != nil || v["stream"] != true {
		t.Fatalf("body %s", got)
	}
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 0.2, 1e-6, 9.99e-7, 1e-7, -1e-7, 1.5e-300, 1e20, 1e21, -1e21, 123456789e15, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1 + 0.2, 1e-10, 2.5e-100} {
		want, _ := json.Marshal(f)
		got, ok := appendFloat(nil, f)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, ok := appendFloat(nil, f); ok {
			t.Errorf("%v was written", f)
		}
	}
}

func TestStartsWithError(t *testing.T) {
	for _, s := range []string{"", "e", "erro", "error", "Error: x", "ERROR", "eRRoR!", "errors", "err", " error", "\xffrror", "errör", "ERRO\u0280", "errOR\u2028", "İrror", "error"[:4] + "\xc3", "\u212arror", strings.Repeat("x", 30)} {
		want := strings.HasPrefix(strings.ToLower(s), "error")
		if got := startsWithError([]llm.Block{llm.Text{Text: s}}); got != want {
			t.Errorf("%q: %v, want %v", s, got, want)
		}
		// Split in every place, in up to three blocks.
		for i := 0; i <= len(s); i++ {
			for j := i; j <= len(s); j++ {
				blocks := []llm.Block{llm.Text{Text: s[:i]}, llm.Text{Text: s[i:j]}, llm.Text{Text: s[j:]}}
				if got := startsWithError(blocks); got != want {
					t.Errorf("%q split at %d, %d: %v, want %v", s, i, j, got, want)
				}
			}
		}
	}
}

// mappingRequests are requests of the shapes TestMessageMapping and
// TestRequestErrors pin, and the extras, in one place.
func mappingRequests() []*llm.Request {
	temp, topP := 0.7, 1e-7
	parts := []llm.Block{
		llm.Text{Text: "look <here> & \"there\""},
		llm.Text{Text: ""},
		llm.Image{Data: pngPixel, MediaType: "image/png", Detail: "high"},
		llm.Image{Data: pngPixel[:16]},
		llm.Image{URL: "https://x/y.jpg?a=1&b=<2>"},
		llm.Audio{Data: []byte("RIFF\x00\x01"), MediaType: "audio/wav"},
		llm.Audio{URL: "data:audio/mpeg;base64,SUQz"},
		llm.File{Data: []byte("%PDF-1.4"), MediaType: "application/pdf", Name: "a \"b\".pdf"},
		llm.File{Data: []byte("%PDF-1.4")},
		llm.File{FileID: "file-1"},
		llm.File{Data: []byte("a,b\n1,\"2\"\u2028\xff"), MediaType: "text/csv; charset=utf-8"},
		llm.File{URL: "data:text/plain;base64,"},
		llm.Thinking{Text: "t"}, llm.RedactedThinking{Data: "r"}, llm.Extension{Kind: "k"},
		llm.ToolResult{ToolUseID: "n1", Content: []llm.Block{llm.Text{Text: "nested"}}},
	}
	reqs := []*llm.Request{
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: parts}}},
		{Messages: []llm.Message{{Role: llm.RoleUser}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{}}}},
		{Messages: []llm.Message{{Role: llm.RoleSystem}, {Role: llm.RoleAssistant}, {Role: llm.RoleTool}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Thinking{Text: "only thinking"}}}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult{ToolUseID: "a"}, llm.ToolResult{ToolUseID: "", IsError: true}}}}},
		{Messages: []llm.Message{
			{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.Thinking{Text: "think \u2028"}, llm.Text{Text: "a"}, llm.Text{Text: "b"},
				llm.ToolUse{ID: "c1", Name: "f", Input: json.RawMessage(`{"x": [1, 2], "y": "<\n>"}`), Signature: "sig/+=", Provider: "gemini"},
				llm.ToolUse{ID: "c2", Name: "g"},
				llm.MalformedInput("c3", "h", `{"path":`),
				llm.ToolUse{ID: "c4", Name: "i", Input: json.RawMessage(`[1, 2]`)},
				llm.ToolUse{ID: "c5", Name: "j", Input: json.RawMessage(`  `)},
				llm.ToolUse{ID: "c6", Name: "k", Input: json.RawMessage(`"\u00"`)},
				llm.ToolUse{ID: "c7", Name: "l", Input: json.RawMessage(`{}`), Signature: "other", Provider: "anthropic"},
				llm.Extension{Kind: ReasoningDetailsKind, Data: json.RawMessage(` [ {"type": "reasoning.text", "text": "a b\u2028<&>", "index": 0} ] `)},
				llm.Extension{Kind: ReasoningDetailsKind, Data: json.RawMessage(`[{`)},
				llm.RedactedThinking{Data: "x"},
			}},
			{Role: llm.RoleTool, ToolCallID: "c1", IsError: true, Content: []llm.Block{llm.Text{Text: "ERR"}, llm.Text{Text: "OR: x"}}},
			{Role: llm.RoleTool, ToolCallID: "c2", IsError: true, Content: []llm.Block{llm.Text{Text: "\u212arror"}}},
			{Role: llm.RoleTool, ToolCallID: "c3", IsError: true},
		}},
		{Messages: []llm.Message{llm.UserText("x")}, Model: "o3-mini", MaxTokens: 10, Temperature: &temp, TopP: &topP,
			StopSequences: []string{"\n\nUser:", "<|end|>"}, Reasoning: &llm.Reasoning{Effort: "high"},
			Tools: []llm.ToolDefinition{
				{Name: "f", Description: "does <f> & \"more\"", Parameters: json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"a b\": {\"type\": \"string\", \"description\": \"x\\\" y\"}}\n}")},
				{Name: "g"},
			},
			ToolChoice:     llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: "f"},
			ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Schema: json.RawMessage(` {"type" : "object"} `), Strict: true},
		},
		{Messages: []llm.Message{llm.UserText("x")}, ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Name: "n"}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNone}},
		{Messages: []llm.Message{llm.UserText("x")}, ResponseFormat: &llm.ResponseFormat{Type: "json_object"}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceRequired}, Reasoning: &llm.Reasoning{BudgetTokens: 5}},
	}
	// The error cases of TestRequestErrors.
	nan := math.NaN()
	for _, bad := range []*llm.Request{
		{Messages: []llm.Message{llm.UserText("x")}, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceTool}},
		{Messages: []llm.Message{llm.UserText("x")}, ToolChoice: llm.ToolChoice{Mode: "sometimes"}},
		{Messages: []llm.Message{llm.UserText("x")}, ResponseFormat: &llm.ResponseFormat{Type: "yaml"}},
		{Messages: []llm.Message{llm.UserText("x")}, ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Schema: json.RawMessage(`{`)}},
		{Messages: []llm.Message{llm.UserText("x")}, Temperature: &nan},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Audio{URL: "https://x/a.wav"}}}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Audio{Data: []byte("x"), MediaType: "audio/ogg"}}}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.File{URL: "https://x/a.pdf"}}}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.File{Data: []byte("x"), MediaType: "application/vnd.ms-excel"}}}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Image{}}}}},
		{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult{ToolUseID: "a", Content: []llm.Block{llm.Image{URL: "https://x"}}}}}}},
		{Messages: []llm.Message{{Role: llm.RoleTool, ToolCallID: "c", Content: []llm.Block{llm.Image{URL: "https://x"}}}}},
		{Messages: []llm.Message{{Role: llm.RoleSystem, Content: []llm.Block{llm.Image{URL: "https://x"}}}}},
		{Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{llm.Image{URL: "https://x"}}}}},
		{Messages: []llm.Message{{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolResult{}}}}},
		{Messages: []llm.Message{{Role: "robot"}}},
		{Tools: []llm.ToolDefinition{{Name: "f", Parameters: json.RawMessage(`{`)}}},
		{Tools: []llm.ToolDefinition{{Name: "f", Parameters: json.RawMessage(` `)}}},
	} {
		reqs = append(reqs, bad)
	}
	return reqs
}

// fixtureFollowUps replays every recorded answer and returns, for each
// one that is not an error, a request that sends it back: the user's
// question, the answer, a result for each of its tool calls (the first as
// a tool message, the others nested in a user message, one of them an
// error) and a follow-up question.
func fixtureFollowUps(t *testing.T) []*llm.Request {
	var reqs []*llm.Request
	for _, dir := range fixtureDirs {
		files, err := os.ReadDir(filepath.Join(fixtureDir, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rel := dir + "/" + f.Name()
			body := readFixture(t, rel)
			var resp *llm.Response
			if strings.HasSuffix(rel, ".sse") {
				srv, _ := replay(t, http.StatusOK, "text/event-stream", body, 0)
				_, resp, err = drain(t, testModel(srv).Stream(bg, userRequest()))
			} else {
				srv, _ := replay(t, statusOf(f.Name()), "application/json", body, 0)
				resp, err = testModel(srv).Generate(bg, userRequest())
			}
			if err != nil {
				continue
			}
			msgs := []llm.Message{llm.SystemText("You are helpful."), llm.UserText("hi"), resp.Message}
			var nested []llm.Block
			for i, tu := range resp.Message.ToolUses() {
				if i == 0 {
					msgs = append(msgs, llm.ToolResultText(tu.ID, fmt.Sprintf("result of %s: \"ok\"\n", tu.Name), false))
					continue
				}
				nested = append(nested, llm.ToolResult{ToolUseID: tu.ID, IsError: i == 1, Content: []llm.Block{llm.Text{Text: "failed"}}})
			}
			if nested != nil {
				msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: nested})
			}
			msgs = append(msgs, llm.UserText("and next?"))
			reqs = append(reqs, &llm.Request{Messages: msgs})
		}
	}
	return reqs
}

// oddPieces are the strings random text is made of: everything the
// escaping treats apart, and plain words.
var oddPieces = []string{
	"the ", "quick brown fox ", "jumps over the lazy dog. ", "error", "Error: ", "ERROR", "İ", "\u212a",
	`"`, `\`, `\"`, "\x00", "\x01", "\x08", "\x0c", "\n", "\r", "\t", "\x1b", "\x1f", "\x7f",
	"\xff", "\xfe", "\x80", "\xc3", "\xe2\x80", "\xed\xa0\x80", "\xf0\x9f", "\xf4\x90\x80\x80",
	"\u2028", "\u2029", "\u2027", "\u202a", "é", "中文", "👋", "🏳️‍🌈", "\ufffd", "\ufeff",
	"<", ">", "&", "<script>", "&amp;", "\u003c",
	`{"a": 1}`, "    ", "0123456789abcdef0123456789abcdef",
}

// randomText joins up to n random pieces; now and then it is empty.
func randomText(rng *rand.Rand, n int) string {
	if rng.IntN(10) == 0 {
		return ""
	}
	var sb strings.Builder
	for range 1 + rng.IntN(n) {
		sb.WriteString(oddPieces[rng.IntN(len(oddPieces))])
	}
	return sb.String()
}

// randomTexts returns text split into one to three Text blocks at random
// byte offsets, so that some splits cut a UTF-8 sequence.
func randomTexts(rng *rand.Rand, text string, thinking bool) []llm.Block {
	var cuts []int
	for range rng.IntN(3) {
		cuts = append(cuts, rng.IntN(len(text)+1))
	}
	if len(cuts) == 2 && cuts[0] > cuts[1] {
		cuts[0], cuts[1] = cuts[1], cuts[0]
	}
	var out []llm.Block
	prev := 0
	for _, c := range append(cuts, len(text)) {
		if thinking {
			out = append(out, llm.Thinking{Text: text[prev:c]})
		} else {
			out = append(out, llm.Text{Text: text[prev:c]})
		}
		prev = c
	}
	return out
}

func randomInput(rng *rand.Rand) json.RawMessage {
	switch rng.IntN(8) {
	case 0:
		return nil
	case 1:
		return llm.MalformedInput("", "", randomText(rng, 4)).Input
	case 2:
		return json.RawMessage(`[1, "2"]`)
	case 3:
		return json.RawMessage(" \n{ \"a\" : \"b\" } ")
	case 4:
		return json.RawMessage(`"\ud800"`)
	default:
		b, _ := json.Marshal(map[string]any{"path": randomText(rng, 3), "n": rng.IntN(100)})
		return b
	}
}

// randomBlock returns one or a few blocks; only with bad does it return
// the blocks that fail a request (an image without data, audio by URL, a
// spreadsheet, an image in a tool result).
func randomBlock(rng *rand.Rand, bad bool) []llm.Block {
	switch rng.IntN(14) {
	case 0, 1, 2, 3:
		return randomTexts(rng, randomText(rng, 8), false)
	case 4:
		return randomTexts(rng, randomText(rng, 4), true)
	case 5, 6:
		return []llm.Block{llm.ToolUse{ID: randomText(rng, 2), Name: randomText(rng, 1), Input: randomInput(rng),
			Signature: randomText(rng, 2), Provider: []string{"", "gemini", "other"}[rng.IntN(3)]}}
	case 7:
		var res []llm.Block
		if bad && rng.IntN(2) == 0 {
			res = []llm.Block{llm.Image{URL: "https://x"}}
		} else {
			res = randomTexts(rng, randomText(rng, 4), false)
		}
		return []llm.Block{llm.ToolResult{ToolUseID: randomText(rng, 2), IsError: rng.IntN(2) == 0, Content: res}}
	case 8:
		data := []string{`[{"type":"reasoning.text","text":` + string(mustJSON(randomText(rng, 3))) + `}]`, " [ 1 , 2 ] ", `[`, ``, `{"a":"\u2028 <b>"}`}[rng.IntN(5)]
		kind := ReasoningDetailsKind
		if rng.IntN(4) == 0 {
			kind = "other"
		}
		return []llm.Block{llm.Extension{Kind: kind, Data: json.RawMessage(data)}}
	case 9:
		return []llm.Block{llm.RedactedThinking{Data: randomText(rng, 2)}}
	case 10:
		return []llm.Block{[]llm.Block{
			llm.Image{Data: pngPixel, Detail: randomText(rng, 1)},
			llm.Image{URL: "https://x/" + randomText(rng, 2)},
			llm.Image{},
		}[rng.IntN(2+b2i(bad))]}
	case 11:
		return []llm.Block{[]llm.Block{
			llm.Audio{Data: []byte(randomText(rng, 3)), MediaType: "audio/mpeg"},
			llm.Audio{URL: "data:audio/wav;base64,UklGRg=="},
			llm.Audio{URL: "https://x/a.wav"},
		}[rng.IntN(2+b2i(bad))]}
	case 12:
		return []llm.Block{[]llm.Block{
			llm.File{FileID: randomText(rng, 2)},
			llm.File{Data: []byte(randomText(rng, 4)), MediaType: "text/markdown"},
			llm.File{Data: []byte("%PDF-1.7 " + randomText(rng, 2)), Name: randomText(rng, 2)},
			llm.File{Data: []byte("x"), MediaType: "application/zip"},
		}[rng.IntN(3+b2i(bad))]}
	default:
		return []llm.Block{llm.Text{Text: randomText(rng, 30)}}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// randomRequest returns a request of a few random messages. Roles are
// weighted toward what a conversation holds; the blocks a role cannot
// hold appear now and then, as do the other request fields.
func randomRequest(rng *rand.Rand) *llm.Request {
	req := &llm.Request{}
	if rng.IntN(3) == 0 {
		req.Model = randomText(rng, 2)
	}
	bad := rng.IntN(6) == 0 // let this request hold what fails
	for range rng.IntN(8) {
		msg := llm.Message{Role: []llm.Role{llm.RoleSystem, llm.RoleUser, llm.RoleUser, llm.RoleAssistant, llm.RoleAssistant, llm.RoleTool, "robot"}[rng.IntN(7)]}
		if msg.Role == "robot" && (!bad || rng.IntN(4) != 0) {
			msg.Role = llm.RoleUser
		}
		switch msg.Role {
		case llm.RoleSystem:
			msg.Content = randomTexts(rng, randomText(rng, 8), false)
			if bad && rng.IntN(4) == 0 {
				msg.Content = append(msg.Content, llm.Thinking{})
			}
		case llm.RoleTool:
			msg.ToolCallID, msg.IsError = randomText(rng, 2), rng.IntN(2) == 0
			msg.Content = randomTexts(rng, randomText(rng, 8), false)
			if bad && rng.IntN(4) == 0 {
				msg.Content = append(msg.Content, llm.Image{URL: "https://x"})
			}
		default:
			for range rng.IntN(5) {
				for _, b := range randomBlock(rng, bad) {
					// Keep most messages valid: user-only blocks rarely in
					// an assistant message.
					switch b.(type) {
					case llm.Image, llm.Audio, llm.File, llm.ToolResult:
						if msg.Role == llm.RoleAssistant && (!bad || rng.IntN(2) != 0) {
							continue
						}
					case llm.ToolUse:
						if msg.Role != llm.RoleAssistant && (!bad || rng.IntN(2) != 0) {
							continue
						}
					}
					msg.Content = append(msg.Content, b)
				}
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	if rng.IntN(3) == 0 {
		for range 1 + rng.IntN(3) {
			params := []string{"", `{"type":"object"}`, "{ \"type\" : \"object\" ,\n \"properties\" : { } }", `{"description":` + string(mustJSON(randomText(rng, 2))) + `}`, `{`}[rng.IntN(5)]
			if params == `{` && !bad {
				params = ""
			}
			req.Tools = append(req.Tools, llm.ToolDefinition{Name: randomText(rng, 1), Description: randomText(rng, 3), Parameters: json.RawMessage(params)})
		}
	}
	if rng.IntN(3) == 0 {
		req.ToolChoice = []llm.ToolChoice{{Mode: llm.ToolChoiceNone}, {Mode: llm.ToolChoiceRequired}, {Mode: llm.ToolChoiceTool, Name: "f" + randomText(rng, 2)}, {Mode: llm.ToolChoiceTool}, {Mode: "odd"}}[rng.IntN(3+2*b2i(bad))]
	}
	if rng.IntN(3) == 0 {
		req.MaxTokens = rng.IntN(3) * rng.IntN(100_000)
	}
	floats := []float64{0, 1, 0.7, 1e-7, 5e-324, 1e21, 1e300, -0.5, math.Copysign(0, -1), rng.Float64(), rng.NormFloat64() * 1e-8, rng.NormFloat64() * 1e22, math.NaN()}
	if rng.IntN(3) == 0 {
		f := floats[rng.IntN(len(floats)-1+b2i(bad))]
		req.Temperature = &f
	}
	if rng.IntN(4) == 0 {
		f := floats[rng.IntN(len(floats)-1)]
		req.TopP = &f
	}
	if rng.IntN(4) == 0 {
		req.StopSequences = []string{randomText(rng, 2)}
		if rng.IntN(2) == 0 {
			req.StopSequences = append(req.StopSequences, randomText(rng, 2))
		}
	}
	if rng.IntN(4) == 0 {
		req.ResponseFormat = &llm.ResponseFormat{Type: []string{"text", "json_object", "json_schema", "json_schema", "xml"}[rng.IntN(4+b2i(bad))],
			Name: randomText(rng, 1), Schema: json.RawMessage([]string{"", `{"type":"object"}`, " { } ", "{"}[rng.IntN(3+b2i(bad))]), Strict: rng.IntN(2) == 0}
	}
	if rng.IntN(4) == 0 {
		req.Reasoning = &llm.Reasoning{Effort: randomText(rng, 1)}
	}
	return req
}

// FuzzRequestEncoder puts fuzzed strings into every string field a request
// carries, text split at a fuzzed offset, and checks that the fast path
// writes the reference's bytes (and gives up exactly where the reference
// fails).
func FuzzRequestEncoder(f *testing.F) {
	f.Add("hello", "Error: \u2028\xff", `{"a": "b"}`, "think <&>", uint8(3), true)
	f.Add("\x00\"\\", "", "", "", uint8(0), false)
	f.Add("ERR\xc3", "\xa9OR", `"\u0000"`, `[{"type":"reasoning.text"}]`, uint8(200), true)
	f.Add("👋 é 中", "\u2029", `[1, 2]`, " { } ", uint8(17), false)
	models := encoderModels()
	f.Fuzz(func(t *testing.T, a, b, raw, c string, n uint8, isError bool) {
		cut := 0
		if len(a) > 0 {
			cut = int(n) % (len(a) + 1)
		}
		temp := float64(n) / 7
		req := &llm.Request{
			Messages: []llm.Message{
				llm.SystemText(c),
				{Role: llm.RoleUser, Content: []llm.Block{llm.Text{Text: a[:cut]}, llm.Text{Text: a[cut:]}, llm.ToolResult{ToolUseID: b, IsError: isError, Content: []llm.Block{llm.Text{Text: b}, llm.Text{Text: a}}}}},
				{Role: llm.RoleAssistant, Content: []llm.Block{
					llm.Thinking{Text: a[cut:]}, llm.Thinking{Text: c},
					llm.Text{Text: b}, llm.Text{Text: a[:cut]},
					llm.ToolUse{ID: a, Name: b, Input: json.RawMessage(raw), Signature: c, Provider: "gemini"},
					llm.MalformedInput(c, a, b),
					llm.Extension{Kind: ReasoningDetailsKind, Data: json.RawMessage(raw)},
				}},
				{Role: llm.RoleTool, ToolCallID: a, IsError: isError, Content: []llm.Block{llm.Text{Text: a[cut:]}, llm.Text{Text: b}}},
				{Role: llm.RoleUser, Content: []llm.Block{llm.Text{Text: c}, llm.Image{URL: a, Detail: b}, llm.File{Data: []byte(b), MediaType: "text/plain", Name: c}}},
			},
			Tools:          []llm.ToolDefinition{{Name: a, Description: b, Parameters: json.RawMessage(raw)}},
			ToolChoice:     llm.ToolChoice{Mode: llm.ToolChoiceTool, Name: c},
			Temperature:    &temp,
			StopSequences:  []string{a, c},
			ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Name: b, Schema: json.RawMessage(raw)},
			Reasoning:      &llm.Reasoning{Effort: b},
		}
		if n%5 == 0 {
			req.Model = c
		}
		// Keep most inputs valid requests: invalid raw JSON in the tool
		// parameters or the schema, or a tool choice naming no tool,
		// fails the whole request.
		if !json.Valid([]byte(raw)) && n%4 != 0 {
			req.Tools = nil
			req.ResponseFormat.Schema = nil
		}
		if c == "" && n%4 != 1 {
			req.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceRequired}
		}
		checkAllModels(t, models, req)
	})
}

// benchConversation returns n messages of a coding session's shapes:
// questions, assistant text with a tool call, the results, answers.
func benchConversation(n int) *llm.Request {
	rng := rand.New(rand.NewPCG(3, 4))
	words := strings.Fields("the a of to in is that for it with function file session store message request token hash cache turn agent model stream error return value type struct should could because however refactor rename extract")
	text := func(size int) string {
		var sb strings.Builder
		for sb.Len() < size {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		return sb.String()
	}
	req := &llm.Request{Messages: []llm.Message{llm.SystemText("You are a careful coding assistant.")}}
	for i := 0; len(req.Messages) < n; i++ {
		id := fmt.Sprintf("call_%d", i)
		input, _ := json.Marshal(map[string]any{"path": "pkg/file.go", "pattern": text(30), "context": 3})
		req.Messages = append(req.Messages,
			llm.UserText(text(300)),
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text{Text: text(100)}, llm.ToolUse{ID: id, Name: "grep", Input: input}}},
			llm.ToolResultText(id, text(900), i%20 == 0),
			llm.AssistantText(text(500)))
	}
	return req
}

// BenchmarkEncodeRequest compares the fast path with the reference on a
// long conversation.
func BenchmarkEncodeRequest(b *testing.B) {
	m := New(WithAPIKey("k"), WithModel("gpt-4o"))
	req := benchConversation(10_000)
	body, _ := m.marshalRequest(req, true)
	for _, c := range []struct {
		name string
		fn   func() ([]byte, error)
	}{
		{"fast", func() ([]byte, error) {
			// As a call does: the buffer goes back to the pool once sent.
			body, buf, err := m.encodeBody(req, true)
			httpx.PutBuffer(buf)
			return body, err
		}},
		{"reference", func() ([]byte, error) { return m.marshalRequest(req, true) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
