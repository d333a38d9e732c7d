package responses

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

// fixtureSet is the folder of recordings this adapter replays.
const fixtureSet = "openai-responses"

// responseFixtures lists the recorded responses (streams and JSON bodies),
// leaving out the recorded requests.
func responseFixtures(t testing.TB) []string {
	t.Helper()
	files, err := os.ReadDir(filepath.Join(fixtureDir, fixtureSet))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if !strings.HasSuffix(f.Name(), ".request.json") {
			out = append(out, f.Name())
		}
	}
	return out
}

// TestFixturesReplay replays every recording (streams in streaming mode;
// JSON bodies in blocking mode
// with the status their file name gives) and compares the result with a
// golden file read by hand.
func TestFixturesReplay(t *testing.T) {
	n := 0
	for _, name := range responseFixtures(t) {
		rel := fixtureSet + "/" + name
		body := readFixture(t, rel)
		n++
		t.Run(name, func(t *testing.T) {
			switch {
			case strings.HasSuffix(name, ".sse"):
				// Written at once, with a charset; TestConformance
				// replays every piece size.
				srv, _ := replay(t, http.StatusOK, "text/event-stream; charset=utf-8", body, 0)
				_, resp, err := drain(t, testModel(srv).Stream(bg, userRequest()))
				checkGolden(t, strings.TrimSuffix(name, ".sse")+".stream", marshalGolden(t, goldenOf(t, resp, err)))
			case strings.HasSuffix(name, ".json"):
				srv, _ := replay(t, statusOf(name), "application/json", body, 0)
				resp, err := testModel(srv).Generate(bg, userRequest())
				checkGolden(t, strings.TrimSuffix(name, ".json")+".generate", marshalGolden(t, goldenOf(t, resp, err)))
			default:
				t.Fatalf("unexpected fixture %s", rel)
			}
		})
	}
	if n != 22 {
		t.Fatalf("replayed %d fixtures, want the 22 recorded responses", n)
	}
}

// TestFixturesJSONAsStream: a server answering a stream request with a
// JSON body (it ignored "stream": true) still streams, and the result is
// what Generate gives.
func TestFixturesJSONAsStream(t *testing.T) {
	for _, name := range responseFixtures(t) {
		if !strings.HasSuffix(name, ".json") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			body := readFixture(t, fixtureSet+"/"+name)
			srv, _ := replay(t, statusOf(name), "application/json", body, 0)
			m := testModel(srv)
			_, streamed, serr := drain(t, m.Stream(bg, userRequest()))
			blocking, berr := m.Generate(bg, userRequest())
			a, _ := json.Marshal(goldenOf(t, streamed, serr))
			b, _ := json.Marshal(goldenOf(t, blocking, berr))
			if string(a) != string(b) {
				t.Fatalf("streamed %s\nblocking %s", a, b)
			}
		})
	}
}

// cite is a citation a recording holds: its kind, its source, and the text
// of the answer it covers (for a position, the text before it).
type cite struct {
	kind, source, span string
	point              bool
}

// want is a fact about a recording, written from the recording itself (see
// PROVENANCE.md), not from the parser's output.
type want struct {
	textPrefix     string
	thinkingPrefix string
	thinkingIDs    []string // the reasoning items, in order
	signed         bool     // every reasoning item carries encrypted content
	tools          []llm.ToolUse
	extensions     []string // the kinds of the extension blocks, in order
	cites          []cite
	finish         llm.FinishReason
	usage          llm.Usage
	err            *llm.Error // Kind, StatusCode, Code, Message prefix
}

func call(id, name, input string) llm.ToolUse {
	return llm.ToolUse{ID: id, Name: name, Input: json.RawMessage(input)}
}

var fixtureFacts = map[string]want{
	"error-400-decimal-below-min-value.json": {err: &llm.Error{Kind: llm.KindInvalidRequest, StatusCode: 400, Code: "decimal_below_min_value", Message: "Invalid 'temperature'"}},
	"error-401-invalid-api-key.json":         {err: &llm.Error{Kind: llm.KindAuth, StatusCode: 401, Code: "invalid_api_key", Message: "Incorrect API key provided"}},
	"error-429-insufficient-quota.json":      {err: &llm.Error{Kind: llm.KindAuth, StatusCode: 429, Code: "insufficient_quota", Message: "You exceeded your current quota"}},

	"responses-cached-tokens.json": {textPrefix: `"Fear not, young Padawan.`, finish: llm.FinishStop,
		usage: llm.Usage{InputTokens: 3821, OutputTokens: 39, CachedInputTokens: 3584}},
	"responses-image-generation.json": {thinkingIDs: []string{"rs_08acbdf1ae54befc0068dd9cee0698819791dc1b2461291dbe"}, signed: true,
		extensions: []string{"openai.image_generation_call"}, finish: llm.FinishStop,
		usage: llm.Usage{InputTokens: 1889, OutputTokens: 1434, ReasoningTokens: 1280}},
	"responses-incomplete-max-output-tokens.json": {textPrefix: "Sure! Here is a list of all 50 U.S. states:\n\n1. Alabama", finish: llm.FinishLength,
		usage: llm.Usage{InputTokens: 14, OutputTokens: 50}},
	"responses-parallel-function-calls.json": {finish: llm.FinishToolUse, usage: llm.Usage{InputTokens: 108, OutputTokens: 51},
		tools: []llm.ToolUse{call("call_IAQ7c0mnAiAE89MUQa42HQy4", "add", `{"a":2,"b":3}`), call("call_gXYDdXX5Ld6zWOSpIAh0QHPr", "multiply", `{"a":2,"b":3}`)}},
	"responses-reasoning-encrypted-function-call.json": {thinkingPrefix: "**Checking weather in Florence**",
		thinkingIDs: []string{"rs_0d8949369356df9a016a3c1243e5a0819c87655df5f53e767e"}, signed: true, finish: llm.FinishToolUse,
		usage: llm.Usage{InputTokens: 63, OutputTokens: 212, ReasoningTokens: 128},
		tools: []llm.ToolUse{call("call_4QfIn5gPKIOWzKqBb5D2uuh4", "weather", `{"location":"Florence, Italy"}`)}},
	"responses-refusal.json": {textPrefix: "I'm very sorry, but I can't assist with that.", finish: llm.FinishRefusal,
		usage: llm.Usage{InputTokens: 54, OutputTokens: 13}},
	"responses-web-search-url-citation.json": {textPrefix: "Here’s the historical Bitcoin price", finish: llm.FinishStop,
		extensions: []string{"openai.web_search_call"}, usage: llm.Usage{InputTokens: 16981, OutputTokens: 461},
		cites: []cite{
			{kind: llm.CitationURL, source: "https://www.statmuse.com/money/ask/bitcoin-price-january-1.-2026?utm_source=openai", span: "([statmuse.com](https://www.statmuse.com/money/ask/bitcoin-price-january-1.-2026?utm_source=openai))"},
			{kind: llm.CitationURL, source: "https://www.tipranks.com/cryptocurrency/btc-usd/historical-prices?utm_source=openai", span: "([tipranks.com](https://www.tipranks.com/cryptocurrency/btc-usd/historical-prices?utm_source=openai))"},
			{kind: llm.CitationURL, source: "https://m.economictimes.com/markets/cryptocurrency/bitcoin-stays-range-bound-between-87500-and-88000-as-crypto-consolidation-continues/articleshow/126283114.cms?utm_source=openai", span: "([m.economictimes.com](https://m.economictimes.com/markets/cryptocurrency/bitcoin-stays-range-bound-between-87500-and-88000-as-crypto-consolidation-continues/articleshow/126283114.cms?utm_source=openai))"},
			{kind: llm.CitationURL, source: "https://www.statmuse.com/money/ask/bitcoin-price-january-1.-2026?utm_source=openai", span: "([statmuse.com](https://www.statmuse.com/money/ask/bitcoin-price-january-1.-2026?utm_source=openai))"},
			{kind: llm.CitationURL, source: "https://www.tipranks.com/cryptocurrency/btc-usd/historical-prices?utm_source=openai", span: "([tipranks.com](https://www.tipranks.com/cryptocurrency/btc-usd/historical-prices?utm_source=openai))"},
			{kind: llm.CitationURL, source: "https://m.economictimes.com/markets/cryptocurrency/bitcoin-stays-range-bound-between-87500-and-88000-as-crypto-consolidation-continues/articleshow/126283114.cms?utm_source=openai", span: "([m.economictimes.com](https://m.economictimes.com/markets/cryptocurrency/bitcoin-stays-range-bound-between-87500-and-88000-as-crypto-consolidation-continues/articleshow/126283114.cms?utm_source=openai))"},
		}},

	"responses-stream-code-interpreter-cached-tokens.sse": {textPrefix: "123456^123 equals:\n180302106304044807508140927865938572807", thinkingPrefix: "**Calculating a large integer**",
		thinkingIDs: []string{"rs_68c3509b2ee0819eba32735182d275ad0f2d670b80edc507"}, signed: true,
		extensions: []string{"openai.code_interpreter_call", "openai.code_interpreter_call", "openai.code_interpreter_call"}, finish: llm.FinishStop,
		usage: llm.Usage{InputTokens: 3727, OutputTokens: 347, CachedInputTokens: 3200, ReasoningTokens: 128}},
	"responses-stream-error-event-response-failed.sse": {err: &llm.Error{Kind: llm.KindAuth, StatusCode: 200, Code: "insufficient_quota", Message: "You exceeded your current quota"}},
	"responses-stream-file-search.sse": {textPrefix: "The capital of France is Paris.", finish: llm.FinishStop,
		extensions: []string{"openai.file_search_call"}, usage: llm.Usage{InputTokens: 1177, OutputTokens: 37},
		cites: []cite{{kind: llm.CitationFile, source: "file-9RhPAs9YqVajpGXRfcgavJ", span: "The capital of France is Paris", point: true}}},
	"responses-stream-function-call.sse": {finish: llm.FinishToolUse, usage: llm.Usage{InputTokens: 255, OutputTokens: 16},
		tools: []llm.ToolUse{call("call_kL0PCQV7M2WMoVX8V8OtYSAL", "get_capital", `{"country":"France"}`)}},
	"responses-stream-incomplete-max-output-tokens.sse": {textPrefix: "Sure! Here is a list of all 50 U.S. states:\n\n1. Alabama", finish: llm.FinishLength,
		usage: llm.Usage{InputTokens: 14, OutputTokens: 50}},
	"responses-stream-mcp-call.sse": {textPrefix: "pydantic-ai is a Python “agent” framework",
		thinkingIDs: []string{"rs_00b9cc7a23d047270068faa0e4cd5c819f8855c183ff0fe957", "rs_00b9cc7a23d047270068faa0f4ff54819f9fb9ff25bebe7f5f"}, signed: true,
		extensions: []string{"openai.mcp_list_tools", "openai.mcp_call"}, finish: llm.FinishStop,
		usage: llm.Usage{InputTokens: 1401, OutputTokens: 480, ReasoningTokens: 256}},
	"responses-stream-parallel-function-calls.sse": {finish: llm.FinishToolUse, usage: llm.Usage{InputTokens: 36, OutputTokens: 54},
		tools: []llm.ToolUse{call("call_sKC7OABqf2A2PTLCm0CLeRWV", "secret_retrieval_tool", `{"password":"mellon"}`), call("call_OdR3s3xop0vtgkDyWRMLafuH", "secret_retrieval_tool", `{"password":"radiance"}`)}},
	"responses-stream-reasoning-summary-encrypted-function-call.sse": {thinkingPrefix: "**Getting weather info**",
		thinkingIDs: []string{"rs_017e85da2ae23b69016a3c1251dcec819daf72930a854fd4d1"}, signed: true, finish: llm.FinishToolUse,
		usage: llm.Usage{InputTokens: 63, OutputTokens: 121, ReasoningTokens: 64},
		tools: []llm.ToolUse{call("call_zgUaIBRPTwxxOusyyKw5NVMH", "weather", `{"location":"Florence, Italy"}`)}},
	"responses-stream-reasoning-summary-text-after-tool.sse": {textPrefix: "Right now in Florence, Italy, it’s about 40°C (104°F).", thinkingPrefix: "**Finalizing the response**",
		thinkingIDs: []string{"rs_065915db01d8635a016a3c1256d2dc81a3a6206cbb8ad411b6"}, signed: true, finish: llm.FinishStop,
		usage: llm.Usage{InputTokens: 92, OutputTokens: 456, ReasoningTokens: 384}},
	"responses-stream-refusal.sse": {textPrefix: "I'm sorry, I can't assist with that.", finish: llm.FinishRefusal, usage: llm.Usage{InputTokens: 54, OutputTokens: 11}},
	"responses-stream-text.sse":    {textPrefix: `Hi in Portuguese is "Oi!"`, finish: llm.FinishStop, usage: llm.Usage{InputTokens: 20, OutputTokens: 8}},
	"responses-stream-web-search-url-citation.sse": {textPrefix: "The tallest mountain in Alberta is **Mount Columbia** (3,747 m / 12,294 ft).", finish: llm.FinishStop,
		extensions: []string{"openai.web_search_call", "openai.web_search_call"}, usage: llm.Usage{InputTokens: 12243, OutputTokens: 140, ReasoningTokens: 100},
		cites: []cite{{kind: llm.CitationURL, source: "https://www.britannica.com/place/Mount-Columbia?utm_source=openai", span: "([britannica.com](https://www.britannica.com/place/Mount-Columbia?utm_source=openai))"}}},
}

// TestFixtureFacts checks what each recording is known to hold.
func TestFixtureFacts(t *testing.T) {
	for _, name := range responseFixtures(t) {
		if _, ok := fixtureFacts[name]; !ok {
			t.Errorf("no facts for %s", name)
		}
	}
	for name, w := range fixtureFacts {
		t.Run(name, func(t *testing.T) {
			body := readFixture(t, fixtureSet+"/"+name)
			var resp *llm.Response
			var err error
			if strings.HasSuffix(name, ".sse") {
				srv, _ := replay(t, http.StatusOK, "text/event-stream", body, 0)
				_, resp, err = drain(t, testModel(srv).Stream(bg, userRequest()))
			} else {
				srv, _ := replay(t, statusOf(name), "application/json", body, 0)
				resp, err = testModel(srv).Generate(bg, userRequest())
			}
			if w.err != nil {
				checkError(t, err, w.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkResponse(t, resp, w)
		})
	}
}

func checkError(t *testing.T, err error, w *llm.Error) {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("err = %v, want an *llm.Error", err)
	}
	if le.Kind != w.Kind || le.StatusCode != w.StatusCode || le.Code != w.Code || !strings.HasPrefix(le.Message, w.Message) {
		t.Fatalf("error = {%s %d %q %q}, want {%s %d %q %q...}", le.Kind, le.StatusCode, le.Code, le.Message, w.Kind, w.StatusCode, w.Code, w.Message)
	}
	if le.Provider != "openai" {
		t.Fatalf("provider = %q", le.Provider)
	}
}

func checkResponse(t *testing.T, resp *llm.Response, w want) {
	t.Helper()
	if resp.FinishReason != w.finish {
		t.Errorf("finish = %s, want %s", resp.FinishReason, w.finish)
	}
	if resp.Usage != w.usage {
		t.Errorf("usage = %+v, want %+v", resp.Usage, w.usage)
	}
	text := resp.Message.Text()
	if !strings.HasPrefix(text, w.textPrefix) || (w.textPrefix == "") != (text == "") {
		t.Errorf("text = %.80q..., want it to start with %q", text, w.textPrefix)
	}
	var thinking string
	var ids, kinds []string
	var cites []llm.Citation
	var citeText []string
	for _, b := range resp.Message.Content {
		switch b := b.(type) {
		case llm.Thinking:
			thinking += b.Text
			ids = append(ids, b.ID)
			if b.Provider != Provider || (w.signed && b.Signature == "") {
				t.Errorf("thinking %s: provider %q, signature %d bytes", b.ID, b.Provider, len(b.Signature))
			}
		case llm.Extension:
			kinds = append(kinds, b.Kind)
			var head struct{ Type, ID string }
			if json.Unmarshal(b.Data, &head) != nil || "openai."+head.Type != b.Kind || head.ID == "" {
				t.Errorf("extension %s holds %.100s", b.Kind, b.Data)
			}
		case llm.Text:
			for _, c := range b.Citations {
				cites = append(cites, c)
				citeText = append(citeText, b.Text)
			}
		}
	}
	if !strings.HasPrefix(thinking, w.thinkingPrefix) || (w.thinkingPrefix == "") != (thinking == "") {
		t.Errorf("thinking = %.60q..., want it to start with %q", thinking, w.thinkingPrefix)
	}
	if fmt.Sprint(ids) != fmt.Sprint(w.thinkingIDs) {
		t.Errorf("reasoning items = %v, want %v", ids, w.thinkingIDs)
	}
	if fmt.Sprint(kinds) != fmt.Sprint(w.extensions) {
		t.Errorf("extensions = %v, want %v", kinds, w.extensions)
	}
	if len(cites) != len(w.cites) {
		t.Fatalf("citations = %+v, want %d", cites, len(w.cites))
	}
	for i, c := range cites {
		wc := w.cites[i]
		src := c.URL
		if c.Kind == llm.CitationFile {
			src = c.FileID
		}
		span := citeText[i][c.Start:c.End]
		if wc.point {
			span = citeText[i][:c.Start]
		}
		if c.Kind != wc.kind || src != wc.source || span != wc.span || (wc.point && c.End != c.Start) {
			t.Errorf("citation %d = %+v covering %q, want %+v", i, c, span, wc)
		}
	}
	got := resp.Message.ToolUses()
	if len(got) != len(w.tools) {
		t.Fatalf("tool calls = %v, want %v", got, w.tools)
	}
	for i, tc := range got {
		wt := w.tools[i]
		if tc.ID != wt.ID || tc.Name != wt.Name || string(tc.Input) != string(wt.Input) {
			t.Errorf("tool call %d = %s %s %s, want %s %s %s", i, tc.ID, tc.Name, tc.Input, wt.ID, wt.Name, wt.Input)
		}
	}
}
