package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/agcore/agcore/internal/jsonscan"
)

// UnmarshalJSON decodes the storage form written by MarshalJSON.
//
// It reads the message in one pass, without reflection: about ten times
// faster than decoding each level through encoding/json, which matters when
// a session store loads a long history.
// That pass only takes input in the shape MarshalJSON writes: each key
// spelled exactly and given once, every block's "type" first, strings of
// valid UTF-8. Anything else (a syntax error, a key in other case, an
// unknown role, a base64 error, ...) is decoded by encoding/json instead,
// whose result or error is the answer, so the inputs accepted and the
// values decoded are exactly encoding/json's.
func (m *Message) UnmarshalJSON(data []byte) error {
	d := decoder{data: data}
	if msg, ok := d.message(); ok && d.atEnd() {
		*m = msg
		return nil
	}
	return m.unmarshalStd(data)
}

// UnmarshalBlock decodes one tagged block. An unknown "type" yields an
// Extension holding the whole object. It takes the same fast path as
// [Message.UnmarshalJSON].
func UnmarshalBlock(data []byte) (Block, error) {
	// The fast path is only for an object without surrounding space: the
	// Extension of an unknown kind holds data whole, space included.
	if len(data) > 1 && data[0] == '{' && data[len(data)-1] == '}' {
		d := decoder{data: data}
		d.start(1)
		if b, ok := d.block(); ok && d.atEnd() {
			return b, nil
		}
	}
	return unmarshalBlockStd(data)
}

// maxDepth is the deepest nesting the fast path reads; deeper input, rare
// and costly, goes to encoding/json, whose own limit is far higher.
const maxDepth = 512

// decoder reads storage JSON in one pass. Each method reports false when
// the input is not in the shape it handles; the caller then gives up, and
// the input goes to encoding/json.
type decoder struct {
	data []byte // the input; message and block read it through Scanner
	jsonscan.Scanner
	buf []byte // unescaped string contents; reused
}

// start points the scanner at data[pos:].
func (d *decoder) start(pos int) {
	d.Scanner = jsonscan.Scanner{Data: d.data, Pos: pos, MaxDepth: maxDepth}
}

// atEnd reports whether only white space is left.
func (d *decoder) atEnd() bool { return d.AtEnd() }

// message reads a Message.
func (d *decoder) message() (Message, bool) {
	var m Message
	d.start(0)
	if d.Next() != '{' || d.SkipSpace() == '}' || !d.Enter() {
		return m, false // an object without "type" is an error: encoding/json's to report
	}
	var seen uint8
	for {
		key, ok := d.key()
		if !ok {
			return m, false
		}
		var bit uint8
		switch string(key) {
		case "type":
			bit = 1
			m.Role, ok = d.role()
		case "tool_call_id":
			bit = 2
			m.ToolCallID, ok = d.string()
		case "content":
			bit = 4
			m.Content, ok = d.blocks()
		case "is_error":
			bit = 8
			m.IsError, ok = d.bool()
		}
		if !ok || bit == 0 || seen&bit != 0 {
			return m, false
		}
		seen |= bit
		switch d.Next() {
		case ',':
		case '}':
			d.Leave()
			return m, m.Role != ""
		default:
			return m, false
		}
	}
}

// role reads a message's "type": one of the four roles, as written.
func (d *decoder) role() (Role, bool) {
	if d.Next() != '"' {
		return "", false
	}
	s, ok := d.str()
	if !ok {
		return "", false
	}
	for _, r := range [...]Role{RoleUser, RoleAssistant, RoleTool, RoleSystem} {
		if string(s) == string(r) { // no allocation: the constant is returned
			return r, true
		}
	}
	return "", false
}

// blocks reads a list of blocks; null and [] are nil.
func (d *decoder) blocks() ([]Block, bool) {
	switch d.Next() {
	case 'n':
		return nil, d.Literal("ull")
	case '[':
	default:
		return nil, false
	}
	if d.SkipSpace() == ']' {
		d.Pos++
		return nil, true
	}
	if !d.Enter() {
		return nil, false
	}
	var out []Block
	for {
		if d.Next() != '{' {
			return nil, false
		}
		b, ok := d.block()
		if !ok {
			return nil, false
		}
		out = append(out, b)
		switch d.Next() {
		case ',':
		case ']':
			d.Leave()
			return out, true
		default:
			return nil, false
		}
	}
}

// Bits for the fields (keys) of the block kinds.
const (
	fText = 1 << iota
	fData // bytes in image, audio and file; a string in redacted_thinking; raw JSON in extension
	fURL
	fMediaType
	fDetail
	fFileID
	fName
	fID
	fInput
	fToolUseID
	fContent
	fIsError
	fSignature
	fKind
	fCitations
	fProvider
)

// fieldOf returns the bit of a block field's key, or 0.
func fieldOf(key []byte) uint16 {
	switch string(key) {
	case "text":
		return fText
	case "data":
		return fData
	case "url":
		return fURL
	case "media_type":
		return fMediaType
	case "detail":
		return fDetail
	case "file_id":
		return fFileID
	case "name":
		return fName
	case "id":
		return fID
	case "input":
		return fInput
	case "tool_use_id":
		return fToolUseID
	case "content":
		return fContent
	case "is_error":
		return fIsError
	case "signature":
		return fSignature
	case "kind":
		return fKind
	case "citations":
		return fCitations
	case "provider":
		return fProvider
	}
	return 0
}

// kinds lists the block kinds with the fields of each; a change to a
// block's struct must be made here too (TestFastPathCoversEveryField
// checks).
var kinds = [...]struct {
	tag    string
	fields uint16
}{
	{TypeText, fText | fCitations},
	{TypeToolUse, fID | fName | fInput | fSignature | fProvider},
	{TypeThinking, fText | fSignature | fProvider | fID},
	{TypeImage, fData | fURL | fMediaType | fDetail},
	{TypeAudio, fData | fURL | fMediaType},
	{TypeFile, fData | fURL | fFileID | fMediaType | fName},
	{TypeToolResult, fToolUseID | fContent | fIsError},
	{TypeRedactedThinking, fData},
	{TypeExtension, fKind | fData},
}

// blockFields holds the fields of every block kind; a block uses those of
// its kind.
type blockFields struct {
	text, url, mediaType, detail, fileID, name, id, toolUseID, signature, kind, provider string

	data       []byte          // image, audio, file
	dataString string          // redacted_thinking
	raw        json.RawMessage // tool_use input, extension data
	content    []Block
	isError    bool
	citations  []Citation // rare: decoded by encoding/json
}

// block reads a block whose '{' has been consumed. Its first key must be
// "type".
func (d *decoder) block() (Block, bool) {
	start := d.Pos - 1
	if !d.Enter() {
		return nil, false
	}
	if key, ok := d.key(); !ok || string(key) != "type" || d.Next() != '"' {
		return nil, false
	}
	tag, ok := d.str() // in d.buf when escaped: used before the next str
	if !ok || len(tag) == 0 {
		return nil, false
	}
	kind := -1
	for i := range kinds {
		if string(tag) == kinds[i].tag {
			kind = i
			break
		}
	}
	if kind < 0 {
		return d.unknownBlock(start, string(tag))
	}
	fields := kinds[kind].fields
	var f blockFields
	var seen uint16
	for {
		switch d.Next() {
		case ',':
		case '}':
			d.Leave()
			return f.block(kinds[kind].tag), true
		default:
			return nil, false
		}
		key, ok := d.key()
		if !ok {
			return nil, false
		}
		bit := fieldOf(key)
		if bit == 0 || fields&bit == 0 || seen&bit != 0 {
			return nil, false
		}
		seen |= bit
		switch bit {
		case fText:
			f.text, ok = d.string()
		case fURL:
			f.url, ok = d.string()
		case fMediaType:
			f.mediaType, ok = d.string()
		case fDetail:
			f.detail, ok = d.string()
		case fFileID:
			f.fileID, ok = d.string()
		case fName:
			f.name, ok = d.string()
		case fID:
			f.id, ok = d.string()
		case fToolUseID:
			f.toolUseID, ok = d.string()
		case fSignature:
			f.signature, ok = d.string()
		case fKind:
			f.kind, ok = d.string()
		case fProvider:
			f.provider, ok = d.string()
		case fInput:
			f.raw, ok = d.raw()
		case fContent:
			f.content, ok = d.blocks()
		case fIsError:
			f.isError, ok = d.bool()
		case fCitations:
			var raw json.RawMessage
			if raw, ok = d.raw(); ok && string(raw) != "null" {
				ok = json.Unmarshal(raw, &f.citations) == nil
			}
		case fData:
			switch kinds[kind].tag {
			case TypeExtension:
				f.raw, ok = d.raw()
			case TypeRedactedThinking:
				f.dataString, ok = d.string()
			default:
				f.data, ok = d.base64()
			}
		}
		if !ok {
			return nil, false
		}
	}
}

// block returns the block of kind tag.
func (f *blockFields) block(tag string) Block {
	switch tag {
	case TypeText:
		return Text{Text: f.text, Citations: f.citations}
	case TypeImage:
		return Image{Data: f.data, URL: f.url, MediaType: f.mediaType, Detail: f.detail}
	case TypeAudio:
		return Audio{Data: f.data, URL: f.url, MediaType: f.mediaType}
	case TypeFile:
		return File{Data: f.data, URL: f.url, FileID: f.fileID, MediaType: f.mediaType, Name: f.name}
	case TypeToolUse:
		in := f.raw
		if len(in) == 0 || string(in) == "null" {
			in = json.RawMessage("{}")
		}
		return ToolUse{ID: f.id, Name: f.name, Input: in, Signature: f.signature, Provider: f.provider}
	case TypeToolResult:
		return ToolResult{ToolUseID: f.toolUseID, Content: f.content, IsError: f.isError}
	case TypeThinking:
		return Thinking{Text: f.text, Signature: f.signature, Provider: f.provider, ID: f.id}
	case TypeRedactedThinking:
		return RedactedThinking{Data: f.dataString}
	default: // TypeExtension
		return Extension{Kind: f.kind, Data: f.raw}
	}
}

// unknownBlock reads the rest of a block of a kind agcore does not know,
// which becomes an Extension holding the whole object. Another key that
// encoding/json could take for "type" (in other case, or escaped) is left
// to it.
func (d *decoder) unknownBlock(start int, tag string) (Block, bool) {
	for {
		switch d.Next() {
		case ',':
		case '}':
			d.Leave()
			return Extension{Kind: tag, Data: bytes.Clone(d.data[start:d.Pos])}, true
		default:
			return nil, false
		}
		key, ok := d.key()
		if !ok || bytes.EqualFold(key, []byte("type")) || !d.SkipValue() {
			return nil, false
		}
	}
}

// key reads an object key and its colon. Keys are plain ASCII without
// escapes; any other key is left to encoding/json, which matches keys
// case-insensitively, with Unicode folding.
func (d *decoder) key() ([]byte, bool) {
	if d.Next() != '"' {
		return nil, false
	}
	key, f, ok := d.RawString()
	if !ok || f != 0 || d.Next() != ':' {
		return nil, false
	}
	return key, true
}

// string reads a string value; null leaves it empty, as encoding/json does
// (a key is read only once).
func (d *decoder) string() (string, bool) {
	switch d.Next() {
	case '"':
		s, ok := d.str()
		return string(s), ok
	case 'n':
		return "", d.Literal("ull")
	}
	return "", false
}

// bool reads a boolean value; null is false.
func (d *decoder) bool() (bool, bool) {
	switch d.Next() {
	case 't':
		return true, d.Literal("rue")
	case 'f':
		return false, d.Literal("alse")
	case 'n':
		return false, d.Literal("ull")
	}
	return false, false
}

// base64 reads a []byte value: a base64 string, decoded as encoding/json
// decodes it, or null (nil).
func (d *decoder) base64() ([]byte, bool) {
	switch d.Next() {
	case '"':
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
		n, err := base64.StdEncoding.Decode(b, s)
		return b[:n], err == nil
	case 'n':
		return nil, d.Literal("ull")
	}
	return nil, false // an array of numbers is valid too, but encoding/json's
}

// raw reads any value and returns a copy of its JSON text, as
// json.RawMessage keeps it (null included).
func (d *decoder) raw() (json.RawMessage, bool) {
	d.SkipSpace()
	start := d.Pos
	if !d.SkipValue() {
		return nil, false
	}
	return bytes.Clone(d.data[start:d.Pos]), true
}

// str reads the rest of a string whose opening quote has been consumed and
// returns its contents, unescaped. The result is valid only until the next
// call. Invalid UTF-8 and unpaired surrogates, which encoding/json
// replaces, are left to it.
func (d *decoder) str() ([]byte, bool) {
	s, buf, ok := d.Text(d.buf)
	d.buf = buf
	return s, ok
}
