package anthropic

import (
	"reflect"
	"testing"

	"github.com/agcore/agcore/llm"
)

// Citations in the shapes the Messages API documents: on a text block of a
// whole response, and as citations_delta events in a stream. Anthropic
// cites whole text blocks, so Start and End stay 0.

const (
	charCitation = `{"type":"char_location","cited_text":"The grass is green.","document_index":0,"document_title":"Facts","start_char_index":0,"end_char_index":20}`
	pageCitation = `{"type":"page_location","cited_text":"p.2 text","document_index":1,"document_title":"Report","start_page_number":2,"end_page_number":3}`
	webCitation  = `{"type":"web_search_result_location","cited_text":"Go 1.26 was released","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_index":"Eo8BCioIAhgB"}`
)

var wantCitations = []llm.Citation{
	{Kind: llm.CitationDocument, CitedText: "The grass is green.", Title: "Facts", Unit: "char", From: 0, To: 20},
	{Kind: llm.CitationDocument, CitedText: "p.2 text", Document: 1, Title: "Report", Unit: "page", From: 2, To: 3},
	{Kind: llm.CitationURL, CitedText: "Go 1.26 was released", URL: "https://go.dev/doc/go1.26", Title: "Go 1.26 Release Notes"},
}

func TestCitationsOfAResponse(t *testing.T) {
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",
		"content":[{"type":"text","text":"According to the documents, "},
		{"type":"text","text":"the grass is green","citations":[` + charCitation + `,` + pageCitation + `,` + webCitation + `]}],
		"usage":{"input_tokens":10,"output_tokens":5}}`
	srv := serve(t, 200, "application/json", []byte(body), 0, nil)
	resp, err := newTestModel(srv.URL).Generate(bg, fixtureRequest)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Message.Content[0].(llm.Text).Citations; got != nil {
		t.Errorf("uncited text has citations %+v", got)
	}
	if got := resp.Message.Content[1].(llm.Text).Citations; !reflect.DeepEqual(got, wantCitations) {
		t.Errorf("citations %+v\nwant %+v", got, wantCitations)
	}
}

// citationsStream is a stream whose text block is cited three times, in
// citations_delta events.
func citationsStream() string {
	delta := func(c string) string {
		return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"citations_delta\",\"citation\":" + c + "}}\n\n"
	}
	return evStart +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\",\"citations\":[]}}\n\n" +
		delta(charCitation) + evDelta + delta(pageCitation) + delta(webCitation) + evStop + evEnd
}

// TestCitationsOfAStream: the citations' fields as the Messages API gives
// them (TestConformance replays the stream in every piece size).
func TestCitationsOfAStream(t *testing.T) {
	srv := serve(t, 200, "text/event-stream", []byte(citationsStream()), 0, nil)
	evs, resp, err := drain(t, newTestModel(srv.URL).Stream(bg, fixtureRequest))
	if err != nil {
		t.Fatal(err)
	}
	var streamed []llm.Citation
	for _, ev := range evs {
		if ev.Type == llm.EventCitation {
			streamed = append(streamed, *ev.Citation)
		}
	}
	text := resp.Message.Content[0].(llm.Text)
	if text.Text != "Hi" || !reflect.DeepEqual(text.Citations, wantCitations) || !reflect.DeepEqual(streamed, wantCitations) {
		t.Fatalf("text %+v, streamed %+v\nwant %+v", text, streamed, wantCitations)
	}
}
