package openai

import (
	"encoding/json"

	"github.com/agcore/agcore/llm"
)

// What compatible servers add to Chat Completions, kept so that nothing a
// provider sends is lost:
//
//   - url_citation annotations on the message (OpenAI's search models,
//     OpenRouter's web plugin) become llm.Citations on the text;
//   - OpenRouter's reasoning_details (the structured reasoning of o-series,
//     Claude and Gemini models behind it, with their signatures) are kept
//     whole in an llm.Extension of kind [ReasoningDetailsKind] and sent back
//     on the assistant message, as OpenRouter asks for tool loops;
//   - Gemini's thought signature on a tool call
//     (extra_content.google.thought_signature) is kept on the
//     llm.ToolUse (Provider "gemini") and sent back on that call.

// ReasoningDetailsKind is the llm.Extension kind holding OpenRouter's
// reasoning_details array of an assistant message.
const ReasoningDetailsKind = "openrouter.reasoning_details"

// wireAnnotation is one of a message's annotations.
type wireAnnotation struct {
	Type        string `json:"type"`
	URLCitation *struct {
		URL        string `json:"url"`
		Title      string `json:"title"`
		Content    string `json:"content"`
		StartIndex int    `json:"start_index"`
		EndIndex   int    `json:"end_index"`
	} `json:"url_citation"`
}

// wireExtraContent is the extra_content of a tool call (Gemini's
// OpenAI-compatible endpoint).
type wireExtraContent struct {
	Google *struct {
		ThoughtSignature string `json:"thought_signature,omitempty"`
	} `json:"google,omitempty"`
}

// geminiSignature returns the thought signature of a tool call's
// extra_content, or "".
func (e *wireExtraContent) geminiSignature() string {
	if e == nil || e.Google == nil {
		return ""
	}
	return e.Google.ThoughtSignature
}

// citations maps url_citation annotations of text to llm.Citations. Their
// indexes count characters (code points) of the message's text; a Citation
// counts bytes of it.
func citationsOf(anns []wireAnnotation, text string) []llm.Citation {
	var out []llm.Citation
	for _, a := range anns {
		if a.Type != "url_citation" || a.URLCitation == nil {
			continue
		}
		u := a.URLCitation
		start, end := byteOffset(text, u.StartIndex), byteOffset(text, u.EndIndex)
		out = append(out, llm.Citation{Kind: llm.CitationURL, URL: u.URL, Title: u.Title, CitedText: u.Content, Start: start, End: end})
	}
	return out
}

// byteOffset returns the byte offset of the n-th code point of s (len(s)
// when s is shorter; 0 for n <= 0).
func byteOffset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// reasoningDetails gathers the reasoning_details items of a stream: items
// of one index and type arrive in pieces, whose text, summary and data are
// joined; other fields keep their last non-empty value.
type reasoningDetails struct {
	items []map[string]json.RawMessage
}

// add merges the items of one chunk.
func (r *reasoningDetails) add(items []json.RawMessage) {
	for _, raw := range items {
		var it map[string]json.RawMessage
		if json.Unmarshal(raw, &it) != nil || it == nil {
			continue
		}
		if prev := r.find(it); prev != nil {
			for k, v := range it {
				switch k {
				case "text", "summary", "data":
					prev[k] = joinStrings(prev[k], v)
				default:
					if string(v) != "null" && string(v) != `""` {
						prev[k] = v
					}
				}
			}
			continue
		}
		r.items = append(r.items, it)
	}
}

// find returns the gathered item with it's index and type, or nil. Items
// without an index are never merged.
func (r *reasoningDetails) find(it map[string]json.RawMessage) map[string]json.RawMessage {
	idx, ok := it["index"]
	if !ok {
		return nil
	}
	for _, p := range r.items {
		if string(p["index"]) == string(idx) && string(p["type"]) == string(it["type"]) {
			return p
		}
	}
	return nil
}

// block returns the gathered items as an Extension block, or nil.
func (r *reasoningDetails) block() llm.Block {
	if len(r.items) == 0 {
		return nil
	}
	data, err := json.Marshal(r.items)
	if err != nil {
		return nil
	}
	return llm.Extension{Kind: ReasoningDetailsKind, Data: data}
}

// joinStrings concatenates two JSON strings; a value that is not a string
// replaces the other.
func joinStrings(a, b json.RawMessage) json.RawMessage {
	var x, y string
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return b
	}
	out, _ := json.Marshal(x + y)
	return out
}
