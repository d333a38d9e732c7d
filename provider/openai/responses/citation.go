package responses

import (
	"encoding/json"
	"slices"
	"unicode/utf8"

	"github.com/agcore/agcore/llm"
)

// wireAnnotation is an output_text annotation: url_citation (url, title,
// start_index, end_index), file_citation (file_id, filename, index),
// container_file_citation (container_id, file_id, filename, start_index,
// end_index) or file_path (file_id, index).
type wireAnnotation struct {
	Type       string `json:"type"`
	URL        string `json:"url"`
	Title      string `json:"title"`
	FileID     string `json:"file_id"`
	Filename   string `json:"filename"`
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
	Index      int    `json:"index"`
}

// citations maps a text part's annotations to citations of text. The
// API's indexes count characters (Unicode code points) of the text; a
// citation's Start and End are byte offsets, so they are converted, and
// clamped to the text. A file_citation or file_path names one position (the
// place its marker goes), which becomes an empty span there (Start == End).
// Annotations of other types, and ones that do not decode, are left out.
func citations(text string, anns []json.RawMessage) []llm.Citation {
	if len(anns) == 0 {
		return nil
	}
	out := make([]llm.Citation, 0, len(anns))
	// offsets are the character indexes to convert, with where the result
	// goes.
	type offset struct {
		chars int
		dst   *int
	}
	var offs []offset
	idx := make([]int, 0, len(anns))
	for _, raw := range anns {
		var a wireAnnotation
		if json.Unmarshal(raw, &a) != nil {
			continue
		}
		var c llm.Citation
		start, end := a.StartIndex, a.EndIndex
		switch a.Type {
		case "url_citation":
			c = llm.Citation{Kind: llm.CitationURL, URL: a.URL, Title: a.Title}
		case "container_file_citation":
			c = llm.Citation{Kind: llm.CitationFile, FileID: a.FileID, Title: a.Filename}
		case "file_citation", "file_path":
			c = llm.Citation{Kind: llm.CitationFile, FileID: a.FileID, Title: a.Filename}
			start, end = a.Index, a.Index
		default:
			continue
		}
		if end < start {
			end = start
		}
		out = append(out, c)
		idx = append(idx, start, end)
	}
	for i := range out {
		offs = append(offs, offset{idx[2*i], &out[i].Start}, offset{idx[2*i+1], &out[i].End})
	}
	// One pass over the text, converting the indexes in increasing order.
	slices.SortStableFunc(offs, func(a, b offset) int { return a.chars - b.chars })
	chars, pos := 0, 0
	for _, o := range offs {
		for chars < o.chars && pos < len(text) {
			_, n := utf8.DecodeRuneInString(text[pos:])
			pos += n
			chars++
		}
		if o.chars <= 0 {
			*o.dst = 0
		} else {
			*o.dst = pos
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
