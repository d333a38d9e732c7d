package gemini

import (
	"encoding/json"
	"strings"

	"github.com/agcore/agcore/llm"
)

// citations yields the grounding of the answer as citations of the open
// text block (grounding arrives with the last chunk, while the answer's
// last text block is still open). Each groundingSupport gives one citation
// per source it names, spanning its segment: Gemini counts the segment in
// bytes of the answer's text, which is the concatenation of its text
// blocks, so the span is moved to the block's own offsets and checked
// against the segment's text (found by its text when the offsets do not
// match). Sources no support names are cited for the whole block. A
// support whose segment lies in an earlier block is not cited: the whole
// groundingMetadata is kept in the answer's "gemini.grounding_metadata"
// extension block anyway.
func (t *turn) citations(yield func(llm.Event, error) bool) (bool, error) {
	var g wireGrounding
	if json.Unmarshal(t.grounding, &g) != nil || t.openKind != blockText || len(g.GroundingChunks) == 0 {
		return true, nil
	}
	target, off := t.open, 0
	for _, i := range t.texts {
		if i == target {
			break
		}
		off += len(t.asm.BlockText(i))
	}
	text := t.asm.BlockText(target)
	named := make([]bool, len(g.GroundingChunks))
	for _, s := range g.GroundingSupports {
		for _, ci := range s.GroundingChunkIndices {
			if ci >= 0 && ci < len(named) {
				named[ci] = true
			}
		}
	}
	cite := func(ci, start, end int) (bool, error) {
		c, ok := citationOf(&g.GroundingChunks[ci])
		if !ok {
			return true, nil
		}
		c.Start, c.End = start, end
		return t.emit(llm.Event{Type: llm.EventCitation, Index: target, Citation: &c}, yield)
	}
	for _, s := range g.GroundingSupports {
		start, end, ok := span(text, off, &s.Segment)
		if !ok {
			continue
		}
		for _, ci := range s.GroundingChunkIndices {
			if ci < 0 || ci >= len(named) {
				continue
			}
			if more, err := cite(ci, start, end); !more || err != nil {
				return more, err
			}
		}
	}
	for ci := range named {
		if !named[ci] {
			if more, err := cite(ci, 0, 0); !more || err != nil {
				return more, err
			}
		}
	}
	return true, nil
}

// span returns a segment's span in a block that starts at byte off of the
// answer's text.
func span(text string, off int, seg *wireSegment) (start, end int, ok bool) {
	start, end = seg.StartIndex-off, seg.EndIndex-off
	if start >= 0 && start <= end && end <= len(text) && (seg.Text == "" || text[start:end] == seg.Text) {
		if start == end {
			return 0, 0, true
		}
		return start, end, true
	}
	if seg.Text != "" {
		if i := strings.Index(text, seg.Text); i >= 0 {
			return i, i + len(seg.Text), true
		}
	}
	return 0, 0, false
}

// citationOf maps a grounding chunk: a web page or a Maps place is a URL;
// retrieved context (Vertex AI search, file search) a URL when it has one,
// else a document, with its text as the cited text.
func citationOf(ch *wireGroundingChunk) (llm.Citation, bool) {
	switch {
	case ch.Web != nil:
		return llm.Citation{Kind: llm.CitationURL, URL: ch.Web.URI, Title: ch.Web.Title}, true
	case ch.Maps != nil:
		return llm.Citation{Kind: llm.CitationURL, URL: ch.Maps.URI, Title: ch.Maps.Title}, true
	case ch.RetrievedContext != nil:
		rc := ch.RetrievedContext
		if rc.URI != "" {
			return llm.Citation{Kind: llm.CitationURL, URL: rc.URI, Title: rc.Title, CitedText: rc.Text}, true
		}
		return llm.Citation{Kind: llm.CitationDocument, Title: rc.Title, CitedText: rc.Text}, true
	}
	return llm.Citation{}, false
}
