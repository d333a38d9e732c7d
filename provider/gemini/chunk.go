package gemini

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agcore/agcore/llm"
)

// chunk is what the turn takes from one GenerateContentResponse (a whole
// answer, or one chunk of a stream): the first candidate's parts, its
// finish reason and grounding, and the response's usage and names. The
// fast path (fastpath.go) and decodeChunk (encoding/json) both fill it;
// its byte slices may point into the decoded data.
type chunk struct {
	parts      []part
	candidate  bool   // a candidate with index 0 was present
	finish     string // finishReason
	grounding  json.RawMessage
	usage      wireUsage
	hasUsage   bool
	model, id  []byte // modelVersion, responseId
	block      *wirePromptFeedback
	err        *wireStatus
	candidates int // how many candidates there were
}

type partKind uint8

const (
	partText    partKind = iota // text (possibly empty)
	partThought                 // text with thought: true
	partCall                    // functionCall
	partOther                   // anything else, kept whole as an extension
)

type part struct {
	kind partKind
	text []byte // partText, partThought
	sig  string // thoughtSignature
	call wireFunctionCall
	ext  llm.Extension
}

func (c *chunk) reset() {
	*c = chunk{parts: c.parts[:0]}
}

// decodeChunk decodes data with encoding/json into c. The error is the
// json error.
func decodeChunk(data []byte, c *chunk) error {
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	c.reset()
	c.err = w.Error
	if w.PromptFeedback != nil && w.PromptFeedback.BlockReason != "" {
		c.block = w.PromptFeedback
	}
	if w.UsageMetadata != nil {
		c.usage, c.hasUsage = *w.UsageMetadata, true
	}
	c.model, c.id = []byte(w.ModelVersion), []byte(w.ResponseID)
	c.candidates = len(w.Candidates)
	for i := range w.Candidates {
		cand := &w.Candidates[i]
		if cand.Index != 0 {
			continue
		}
		c.candidate = true
		c.finish = cand.FinishReason
		if !isEmptyObject(cand.GroundingMetadata) {
			c.grounding = cand.GroundingMetadata
		}
		if cand.Content != nil {
			for _, raw := range cand.Content.Parts {
				p, err := decodePart(raw)
				if err != nil {
					return err
				}
				c.parts = append(c.parts, p)
			}
		}
		break
	}
	return nil
}

// decodePart maps one part. A part that is neither text nor a function
// call is kept whole as an extension whose Kind names its data field
// ("gemini.executable_code", "gemini.code_execution_result",
// "gemini.inline_data", ...): its thoughtSignature stays inside it.
func decodePart(raw json.RawMessage) (part, error) {
	var w wirePartIn
	if err := json.Unmarshal(raw, &w); err != nil {
		return part{}, err
	}
	switch {
	case w.FunctionCall != nil:
		return part{kind: partCall, call: *w.FunctionCall, sig: w.ThoughtSignature}, nil
	case w.Text != nil:
		kind := partText
		if w.Thought {
			kind = partThought
		}
		return part{kind: kind, text: []byte(*w.Text), sig: w.ThoughtSignature}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return part{}, err
	}
	name := ""
	for k := range fields {
		switch k {
		case "thought", "thoughtSignature", "partMetadata":
			continue
		}
		if name == "" || k < name { // the same name whatever the map order
			name = k
		}
	}
	if name == "" {
		// Only a signature (or nothing): an empty text part.
		return part{kind: partText, sig: w.ThoughtSignature}, nil
	}
	return part{kind: partOther, ext: llm.Extension{Kind: extensionKind(name), Data: compact(raw)}}, nil
}

// extensionKind is "gemini." and the field name in snake case:
// executableCode is "gemini.executable_code".
func extensionKind(field string) string {
	var b strings.Builder
	b.WriteString("gemini.")
	for i, r := range field {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// compact returns raw without insignificant white space (it is valid
// JSON), in a new slice.
func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return json.RawMessage(bytes.Clone(raw))
	}
	return json.RawMessage(b.Bytes())
}

// isEmptyObject reports whether raw is {} (with any white space) or null
// or nothing: the groundingMetadata Gemini streams before the real one.
func isEmptyObject(raw []byte) bool {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || string(b) == "null" {
		return true
	}
	return len(b) >= 2 && b[0] == '{' && b[len(b)-1] == '}' && len(bytes.TrimSpace(b[1:len(b)-1])) == 0
}
