package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

func textChunk(text, finish string) string {
	f := ""
	if finish != "" {
		f = `,"finishReason":"` + finish + `"`
	}
	q, _ := json.Marshal(text)
	return `{"candidates":[{"content":{"parts":[{"text":` + string(q) + `}],"role":"model"}` + f + `,"index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":2,"totalTokenCount":7},"modelVersion":"gemini-test","responseId":"r1"}`
}

// TestStreamEventsInOrder checks the event sequence for a small answer.
func TestStreamEventsInOrder(t *testing.T) {
	srv := serve(t, 200, "text/event-stream", sseOf(textChunk("Hi", ""), textChunk("Hi", "STOP")), 0, nil)
	evs, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type.String())
	}
	want := "message_start block_start text_delta text_delta block_stop usage complete"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if resp.ID != "r1" || resp.Model != "gemini-test" || resp.Message.Text() != "HiHi" ||
		resp.Usage != (llm.Usage{InputTokens: 5, OutputTokens: 2}) || resp.FinishReason != llm.FinishStop {
		t.Errorf("response %+v", resp)
	}
}

// TestFinishedStreamSurvivesADroppedEnd: a connection that breaks after
// the chunk with the finishReason still gives the whole answer.
func TestFinishedStreamSurvivesADroppedEnd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sseOf(textChunk("Done.", "STOP")))
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close() // no end of the chunked body
		}
	}))
	defer srv.Close()
	_, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
	if err != nil || resp.Message.Text() != "Done." {
		t.Fatalf("got %+v, %v", resp, err)
	}
}

// TestPartsMapToBlocks covers the part mapping rules on one stream:
// consecutive text merges, thoughts, a signed thought, a signature on a
// text part, a call with a duplicate id, an unknown part, and a signed
// empty final part.
func TestPartsMapToBlocks(t *testing.T) {
	body := sseOf(
		`{"candidates":[{"content":{"parts":[{"text":"Think","thought":true},{"text":"ing.","thought":true,"thoughtSignature":"sigA"},{"text":"More","thought":true}]},"index":0}],"responseId":"rX"}`,
		`{"candidates":[{"content":{"parts":[{"text":"Answer ","thoughtSignature":"sigB"},{"text":"here."}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"id":"c1","name":"f","args":{"a": 1}}},{"functionCall":{"id":"c1","name":"g"}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"inlineData":{"mimeType":"image/png","data":"iVBO"},"thoughtSignature":"sigC"}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"thoughtSignature":"sigD"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"thoughtsTokenCount":5,"cachedContentTokenCount":2,"toolUsePromptTokenCount":1}}`,
	)
	srv := serve(t, 200, "text/event-stream", body, 0, nil)
	_, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Block{
		llm.Thinking{Text: "Thinking.", Signature: "sigA", Provider: "gemini"},
		llm.Thinking{Text: "More", Provider: "gemini"},
		llm.Thinking{Signature: "sigB", Provider: "gemini"},
		llm.Text{Text: "Answer here."},
		llm.ToolUse{ID: "c1", Name: "f", Input: json.RawMessage(`{"a":1}`), Provider: "gemini"},
		llm.ToolUse{ID: "gcall_rX_1", Name: "g", Input: json.RawMessage(`{}`), Provider: "gemini"},
		llm.Extension{Kind: "gemini.inline_data", Data: json.RawMessage(`{"inlineData":{"mimeType":"image/png","data":"iVBO"},"thoughtSignature":"sigC"}`)},
		llm.Thinking{Signature: "sigD", Provider: "gemini"},
	}
	if !reflect.DeepEqual(resp.Message.Content, want) {
		got, _ := json.MarshalIndent(resp.Message.Content, "", " ")
		t.Errorf("blocks:\n%s", got)
	}
	if resp.FinishReason != llm.FinishToolUse || resp.ID != "rX" || resp.Model != "gemini-test" ||
		resp.Usage != (llm.Usage{InputTokens: 4, OutputTokens: 9, CachedInputTokens: 2, ReasoningTokens: 5}) {
		t.Errorf("response %+v", resp)
	}

	// Sent back, every signature is where it came from.
	msgs := append([]llm.Message{llm.UserText("q"), resp.Message}, resultsFor(resp.Message, "r")...)
	sentBody, _ := sent(t, &llm.Request{Messages: msgs})
	var w struct {
		Contents []struct{ Parts []json.RawMessage }
	}
	json.Unmarshal(sentBody, &w)
	var parts []string
	for _, p := range w.Contents[1].Parts {
		var b bytes.Buffer
		json.Compact(&b, p)
		parts = append(parts, b.String())
	}
	wantParts := []string{
		`{"text":"Thinking.","thought":true,"thoughtSignature":"sigA"}`,
		`{"text":"More","thought":true}`,
		`{"text":"Answer here.","thoughtSignature":"sigB"}`,
		`{"functionCall":{"id":"c1","name":"f","args":{"a":1}},"thoughtSignature":"skip_thought_signature_validator"}`,
		`{"functionCall":{"name":"g","args":{}}}`,
		`{"inlineData":{"mimeType":"image/png","data":"iVBO"},"thoughtSignature":"sigC"}`,
		`{"text":"","thoughtSignature":"sigD"}`,
	}
	if !reflect.DeepEqual(parts, wantParts) {
		t.Errorf("sent parts\n%s\nwant\n%s", strings.Join(parts, "\n"), strings.Join(wantParts, "\n"))
	}
}

func TestFinishReasons(t *testing.T) {
	for reason, want := range map[string]llm.FinishReason{
		"STOP": llm.FinishStop, "MAX_TOKENS": llm.FinishLength, "SAFETY": llm.FinishContentFilter,
		"RECITATION": llm.FinishContentFilter, "BLOCKLIST": llm.FinishContentFilter, "PROHIBITED_CONTENT": llm.FinishContentFilter,
		"SPII": llm.FinishContentFilter, "IMAGE_SAFETY": llm.FinishContentFilter, "MALFORMED_FUNCTION_CALL": llm.FinishUnknown,
		"MODEL_ARMOR": llm.FinishContentFilter, "IMAGE_PROHIBITED_CONTENT": llm.FinishContentFilter,
		"IMAGE_RECITATION": llm.FinishContentFilter, "IMAGE_OTHER": llm.FinishUnknown, "NO_IMAGE": llm.FinishUnknown,
		"OTHER": llm.FinishUnknown, "LANGUAGE": llm.FinishUnknown, "SOMETHING_NEW": llm.FinishUnknown,
	} {
		srv := serve(t, 200, "text/event-stream", sseOf(textChunk("x", reason)), 0, nil)
		_, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
		if err != nil || resp.FinishReason != want {
			t.Errorf("%s: %v, %v; want %s", reason, resp, err, want)
		}
	}
}
