package llm

import (
	"bytes"
	"encoding/json"
)

// Block is one piece of a message's content. The concrete types are [Text],
// [Image], [Audio], [File], [ToolUse], [ToolResult], [Thinking],
// [RedactedThinking] and [Extension]; the set is closed, so a type switch over
// them can be exhaustive (use [Extension] for anything else).
type Block interface {
	// BlockType returns the block's storage tag ("text", "image", ...).
	BlockType() string
	isBlock()
}

// Block type tags, as they appear in the storage JSON.
const (
	TypeText             = "text"
	TypeImage            = "image"
	TypeAudio            = "audio"
	TypeFile             = "file"
	TypeToolUse          = "tool_use"
	TypeToolResult       = "tool_result"
	TypeThinking         = "thinking"
	TypeRedactedThinking = "redacted_thinking"
	TypeExtension        = "extension"
)

// Text is plain text.
type Text struct {
	Text string `json:"text"`
	// Citations are the sources the provider gave for parts of Text (web
	// search results, documents of the request, files), in the order it
	// gave them; nil for most text.
	Citations []Citation `json:"citations,omitempty"`
}

// Citation kinds.
const (
	CitationURL      = "url"      // a web page: URL, Title
	CitationDocument = "document" // a document given in the request: Document, Title
	CitationFile     = "file"     // a provider-side file: FileID, Title
)

// Citation is a source a provider gave for a span of a text block: Anthropic
// citations, OpenAI url_citation and file_citation annotations, Gemini
// grounding. Adapters fill it; storage keeps it; it is output only (no
// adapter sends it back to a model).
type Citation struct {
	// Kind is CitationURL, CitationDocument or CitationFile.
	Kind string `json:"kind"`
	// URL is a web source's address; Title its title, or a document's or
	// file's name.
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	// CitedText is the source's text the answer rests on, when the
	// provider quotes it.
	CitedText string `json:"cited_text,omitempty"`
	// Start and End delimit, in bytes of the block's Text, the span the
	// source supports; both 0 when the provider names no span (the
	// whole block).
	Start int `json:"start,omitempty"`
	End   int `json:"end,omitempty"`
	// Document is the cited document's index among the request's
	// documents (CitationDocument); FileID the provider's id of a file
	// (CitationFile).
	Document int    `json:"document,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	// Unit, From and To locate the cited part inside the source: Unit is
	// "char" (From and To are character offsets, To exclusive), "page"
	// (page numbers, To inclusive) or "block" (content block indexes, To
	// exclusive); empty when the provider did not say.
	Unit string `json:"unit,omitempty"`
	From int    `json:"from,omitempty"`
	To   int    `json:"to,omitempty"`
}

// Image is an image given inline (Data with MediaType) or by URL.
type Image struct {
	Data      []byte `json:"data,omitempty"`       // raw bytes; base64 in JSON
	URL       string `json:"url,omitempty"`        // http(s) or data: URL
	MediaType string `json:"media_type,omitempty"` // e.g. "image/png"
	Detail    string `json:"detail,omitempty"`     // "auto", "low", "high" (OpenAI)
}

// Audio is audio given inline or by URL.
type Audio struct {
	Data      []byte `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
	MediaType string `json:"media_type,omitempty"` // e.g. "audio/wav"
}

// File is a document (PDF, text, ...) given inline, by URL, or by a
// provider-side file id.
type File struct {
	Data      []byte `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
	FileID    string `json:"file_id,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Name      string `json:"name,omitempty"`
}

// ToolUse is the model's request to call a tool. Input is a JSON object; an
// empty Input means "{}".
//
// A model can send arguments that are not JSON at all (small local models
// cut them short: `{"path":`). The [Assembler] then keeps the call, with
// the text the model sent as a JSON string in Input, so the history stays
// valid JSON and the call still pairs with its result; [ToolUse.Malformed]
// returns that text, the tool invoker answers such a call with an error
// result that quotes it (the model can try again), and the adapters send
// it back as the model wrote it.
type ToolUse struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Signature is an opaque token a provider attached to the call and
	// requires back unchanged with it (Gemini's thought signature on a
	// function call); Provider names the API that made it (see
	// [Thinking.Provider]). Adapters send it only to that API.
	Signature string `json:"signature,omitempty"`
	Provider  string `json:"provider,omitempty"`
}

// ToolResult is a tool's answer nested inside another message, for providers
// that nest it (Anthropic puts tool_result blocks in user messages). At the
// message level agcore uses a [Message] with [RoleTool] instead; adapters
// convert between the two.
type ToolResult struct {
	ToolUseID string  `json:"tool_use_id"`
	Content   []Block `json:"content"`
	IsError   bool    `json:"is_error"`
}

// Thinking is the model's visible reasoning. Signature, when a provider gives
// one (Anthropic), must be sent back unchanged with the text.
type Thinking struct {
	Text      string `json:"text"`
	Signature string `json:"signature,omitempty"`
	// Provider names the API whose Signature (and ID) this is:
	// "anthropic" or "" (Anthropic's, the first to sign thinking),
	// "gemini", "openai-responses". An adapter sends Signature and ID back
	// only to the API that made them, and leaves another API's signed
	// thinking out of its requests.
	Provider string `json:"provider,omitempty"`
	// ID is the provider's id of the reasoning item, where it needs it
	// back (the Responses API's reasoning items).
	ID string `json:"id,omitempty"`
}

// RedactedThinking is reasoning the provider returned encrypted; Data is
// opaque and is sent back unchanged.
type RedactedThinking struct {
	Data string `json:"data"`
}

// Extension is the escape hatch for content agcore has no block for. Kind
// names it; Data holds it as raw JSON. An unknown block type found while
// decoding becomes an Extension whose Kind is the unknown type and whose Data
// is the whole original object.
type Extension struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data,omitempty"`
}

func (Text) BlockType() string             { return TypeText }
func (Image) BlockType() string            { return TypeImage }
func (Audio) BlockType() string            { return TypeAudio }
func (File) BlockType() string             { return TypeFile }
func (ToolUse) BlockType() string          { return TypeToolUse }
func (ToolResult) BlockType() string       { return TypeToolResult }
func (Thinking) BlockType() string         { return TypeThinking }
func (RedactedThinking) BlockType() string { return TypeRedactedThinking }
func (Extension) BlockType() string        { return TypeExtension }

func (Text) isBlock()             {}
func (Image) isBlock()            {}
func (Audio) isBlock()            {}
func (File) isBlock()             {}
func (ToolUse) isBlock()          {}
func (ToolResult) isBlock()       {}
func (Thinking) isBlock()         {}
func (RedactedThinking) isBlock() {}
func (Extension) isBlock()        {}

// Malformed returns the text of arguments that arrived as something other
// than a JSON object (see [ToolUse]), and whether they did: a JSON string
// Input is the text of invalid JSON the model sent; any other non-object
// Input (a number, an array) is returned as it is.
func (t ToolUse) Malformed() (text string, ok bool) {
	in := bytes.TrimSpace(t.Input)
	if len(in) == 0 || in[0] == '{' {
		return "", false
	}
	if in[0] == '"' {
		var s string
		if json.Unmarshal(in, &s) == nil {
			return s, true
		}
	}
	return string(in), true
}

// MalformedInput returns the ToolUse for a call whose arguments text is not
// valid JSON: Input holds the text as a JSON string (see [ToolUse]).
func MalformedInput(id, name, text string) ToolUse {
	q, _ := json.Marshal(text) // a string always encodes
	return ToolUse{ID: id, Name: name, Input: q}
}

// InputOrEmpty returns Input, or "{}" when Input is empty.
func (t ToolUse) InputOrEmpty() json.RawMessage {
	if len(t.Input) == 0 {
		return json.RawMessage("{}")
	}
	return t.Input
}
