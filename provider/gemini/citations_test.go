package gemini

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agcore/agcore/llm"
)

// TestModelArmorIsContentFilter replays the answer Vertex AI gave when
// Model Armor blocked the response (finishReason MODEL_ARMOR, no content),
// recorded by pydantic-ai: the finish is content_filter, not unknown.
func TestModelArmorIsContentFilter(t *testing.T) {
	for _, chunk := range []int{0, 3} {
		resp, err := replayFixture(t, "generate-model-armor-response-blocked-vertex.json", chunk, "")
		if err != nil {
			t.Fatal(err)
		}
		if resp.FinishReason != llm.FinishContentFilter || len(resp.Message.Content) != 0 {
			t.Fatalf("finish %q, content %+v; want content_filter and no content", resp.FinishReason, resp.Message.Content)
		}
	}
	// The same answer as the last chunk of a stream.
	data, err := os.ReadFile(filepath.Join(fixtureDir, "generate-model-armor-response-blocked-vertex.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	json.Unmarshal(data, &v)
	one, _ := json.Marshal(v)
	srv := serve(t, 200, "text/event-stream", sseOf(textChunk("I want", ""), string(one)), 0, nil)
	_, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
	if err != nil || resp.FinishReason != llm.FinishContentFilter {
		t.Fatalf("stream: %+v, %v; want content_filter", resp, err)
	}
}

// TestGemini3FileSearchStreamCitesItsAnswer replays a recorded Gemini 3
// file-search stream whose last chunk holds only an empty text part with
// a thoughtSignature next to the groundingMetadata: the support's segment
// (bytes 0 to 35 of the answer) is cited in the answer's text block, and
// the signature block still follows it.
func TestGemini3FileSearchStreamCitesItsAnswer(t *testing.T) {
	resp, err := replayFixture(t, "stream-gemini-3-file-search-grounding.sse", 0, "text/event-stream")
	if err != nil {
		t.Fatal(err)
	}
	var text llm.Text
	var kinds []string
	for _, b := range resp.Message.Content {
		kinds = append(kinds, string(b.BlockType()))
		if tb, ok := b.(llm.Text); ok {
			text = tb
		}
	}
	want := []string{"extension", "extension", "text", "thinking", "extension"}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("blocks %v, want %v", kinds, want)
	}
	if len(text.Citations) != 1 {
		t.Fatalf("citations %+v, want one", text.Citations)
	}
	c := text.Citations[0]
	if got := text.Text[c.Start:c.End]; got != "The capital of France is **Paris**." || c.Kind != llm.CitationDocument ||
		c.CitedText != "Paris is the capital of France. The Eiffel Tower is a famous landmark in Paris.\n" {
		t.Fatalf("citation %+v spans %q", c, text.Text[c.Start:c.End])
	}
}

// TestCitationsCountTheWholeAnswer splits one answer into three text
// blocks (a signed text part, a call, an empty signed part between them)
// with multi-byte text before the segments: each segment, counted in UTF-8
// bytes of the whole answer, is cited in every block it overlaps, at that
// block's own offsets; the Generate path places them alike.
func TestCitationsCountTheWholeAnswer(t *testing.T) {
	// The answer's text: "Café crème. " + "Deux sources. " + "Fin."
	grounding := `"groundingMetadata":{"groundingChunks":[{"web":{"uri":"https://a.example","title":"A"}},{"web":{"uri":"https://b.example","title":"B"}},{"web":{"uri":"https://c.example"}}],` +
		`"groundingSupports":[` +
		`{"segment":{"startIndex":0,"endIndex":13,"text":"Café crème."},"groundingChunkIndices":[0]},` +
		`{"segment":{"startIndex":6,"endIndex":26,"text":"crème. Deux sources"},"groundingChunkIndices":[1]},` +
		`{"segment":{"startIndex":28,"endIndex":32,"text":"Fin."},"groundingChunkIndices":[0,9]}]}`
	chunks := []string{
		`{"candidates":[{"content":{"parts":[{"text":"Café crème. ","thoughtSignature":"s1"}]},"index":0}]}`,
		`{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"s2"},{"text":"Deux sources. "}]},"index":0}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}},{"text":"Fin."},{"text":"","thoughtSignature":"s3"}]},"finishReason":"STOP",` + grounding + `}]}`,
	}
	a := func(s, e int) llm.Citation {
		return llm.Citation{Kind: llm.CitationURL, URL: "https://a.example", Title: "A", Start: s, End: e}
	}
	b := func(s, e int) llm.Citation {
		return llm.Citation{Kind: llm.CitationURL, URL: "https://b.example", Title: "B", Start: s, End: e}
	}
	unnamed := llm.Citation{Kind: llm.CitationURL, URL: "https://c.example"}
	want := []llm.Block{
		llm.Thinking{Signature: "s1", Provider: "gemini"},
		llm.Text{Text: "Café crème. ", Citations: []llm.Citation{a(0, 13), b(6, 14)}},
		llm.Thinking{Signature: "s2", Provider: "gemini"},
		llm.Text{Text: "Deux sources. ", Citations: []llm.Citation{b(0, 12)}},
		llm.ToolUse{ID: "gcall_x_0", Name: "f", Input: json.RawMessage(`{}`), Provider: "gemini"},
		llm.Text{Text: "Fin.", Citations: []llm.Citation{a(0, 4), unnamed}},
		llm.Thinking{Signature: "s3", Provider: "gemini"},
	}
	check := func(name string, resp *llm.Response) {
		t.Helper()
		got := resp.Message.Content[:len(resp.Message.Content)-1] // the grounding extension last
		for i := range got {
			if tu, ok := got[i].(llm.ToolUse); ok {
				tu.ID = "gcall_x_0"
				got[i] = tu
			}
		}
		if !reflect.DeepEqual(got, want) {
			g, _ := json.MarshalIndent(got, "", " ")
			t.Errorf("%s: blocks\n%s", name, g)
		}
	}
	srv := serve(t, 200, "text/event-stream", sseOf(chunks...), 0, nil)
	_, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
	if err != nil {
		t.Fatal(err)
	}
	check("stream", resp)

	// One generateContent answer holding every part.
	var parts []json.RawMessage
	for _, c := range chunks {
		var w struct {
			Candidates []struct {
				Content struct{ Parts []json.RawMessage }
			}
		}
		if err := json.Unmarshal([]byte(c), &w); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, w.Candidates[0].Content.Parts...)
	}
	all, _ := json.Marshal(parts)
	body := `{"candidates":[{"content":{"parts":` + string(all) + `},"finishReason":"STOP",` + grounding + `}]}`
	srv = serve(t, 200, "application/json", []byte(body), 0, nil)
	resp, err = newTestModel(srv.URL).Generate(bg, fixtureRequest)
	if err != nil {
		t.Fatal(err)
	}
	check("generate", resp)
}
