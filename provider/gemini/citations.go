package gemini

import (
	"encoding/json"
	"strings"

	"github.com/agcore/agcore/llm"
)

// citations yields the grounding of the answer as citations of its text
// blocks (grounding arrives with the last chunk). Each groundingSupport
// gives one citation per source it names, spanning its segment. Gemini
// counts a segment in bytes (UTF-8) of the answer's whole text, the
// concatenation of its text blocks, however thought signatures, calls or
// code split it into blocks: the segment is checked against its text
// (found by its text when the offsets do not match) and cited in each
// block it overlaps, moved to that block's own offsets. Sources no support
// names are cited for the whole last text block. A block stopped before
// the grounding arrived gets its citations after its BlockStop; the open
// one (the last, in the streams Gemini sends) before it.
func (t *turn) citations(yield func(llm.Event, error) bool) (bool, error) {
	var g wireGrounding
	if json.Unmarshal(t.grounding, &g) != nil || len(t.texts) == 0 || len(g.GroundingChunks) == 0 {
		return true, nil
	}
	// ends[k] is the offset in the answer's text where text block k ends.
	ends := make([]int, len(t.texts))
	var whole strings.Builder
	for k, i := range t.texts {
		whole.WriteString(t.asm.BlockText(i))
		ends[k] = whole.Len()
	}
	text := whole.String()
	named := make([]bool, len(g.GroundingChunks))
	for _, s := range g.GroundingSupports {
		for _, ci := range s.GroundingChunkIndices {
			if ci >= 0 && ci < len(named) {
				named[ci] = true
			}
		}
	}
	cite := func(ci, k, start, end int) (bool, error) {
		c, ok := citationOf(&g.GroundingChunks[ci])
		if !ok {
			return true, nil
		}
		c.Start, c.End = start, end
		return t.emit(llm.Event{Type: llm.EventCitation, Index: t.texts[k], Citation: &c}, yield)
	}
	for _, s := range g.GroundingSupports {
		start, end, ok := span(text, &s.Segment)
		if !ok {
			continue
		}
		for _, ci := range s.GroundingChunkIndices {
			if ci < 0 || ci >= len(named) {
				continue
			}
			if start == end {
				// An empty segment cites the whole block it points into.
				k := blockAt(ends, start)
				if more, err := cite(ci, k, 0, 0); !more || err != nil {
					return more, err
				}
				continue
			}
			for k, bend := range ends {
				bstart := 0
				if k > 0 {
					bstart = ends[k-1]
				}
				lo, hi := max(start, bstart), min(end, bend)
				if lo >= hi {
					continue
				}
				if more, err := cite(ci, k, lo-bstart, hi-bstart); !more || err != nil {
					return more, err
				}
			}
		}
	}
	for ci := range named {
		if !named[ci] {
			if more, err := cite(ci, len(ends)-1, 0, 0); !more || err != nil {
				return more, err
			}
		}
	}
	return true, nil
}

// span returns a segment's span in the answer's text.
func span(text string, seg *wireSegment) (start, end int, ok bool) {
	start, end = seg.StartIndex, seg.EndIndex
	if start >= 0 && start <= end && end <= len(text) && (seg.Text == "" || text[start:end] == seg.Text) {
		return start, end, true
	}
	if seg.Text != "" {
		if i := strings.Index(text, seg.Text); i >= 0 {
			return i, i + len(seg.Text), true
		}
	}
	return 0, 0, false
}

// blockAt returns the text block holding offset off of the answer's text
// (the last one for the offset at its end).
func blockAt(ends []int, off int) int {
	for k, e := range ends {
		if off < e {
			return k
		}
	}
	return len(ends) - 1
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
