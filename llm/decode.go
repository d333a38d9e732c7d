package llm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
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
		d := decoder{data: data, pos: 1}
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
	data  []byte
	pos   int
	depth int
	buf   []byte // unescaped string contents; reused
}

// skipSpace moves past JSON white space and returns the next byte, not
// consuming it, or 0 at the end.
func (d *decoder) skipSpace() byte {
	for ; d.pos < len(d.data); d.pos++ {
		switch c := d.data[d.pos]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// next consumes and returns the next byte after white space (0 at the end).
func (d *decoder) next() byte {
	c := d.skipSpace()
	if d.pos < len(d.data) {
		d.pos++
	}
	return c
}

// atEnd reports whether only white space is left.
func (d *decoder) atEnd() bool {
	d.skipSpace()
	return d.pos == len(d.data)
}

// literal consumes the rest of a true, false or null whose first byte has
// been read.
func (d *decoder) literal(rest string) bool {
	if !bytes.HasPrefix(d.data[d.pos:], []byte(rest)) {
		return false
	}
	d.pos += len(rest)
	return true
}

// enter and leave count nesting.
func (d *decoder) enter() bool { d.depth++; return d.depth <= maxDepth }
func (d *decoder) leave()      { d.depth-- }

// message reads a Message.
func (d *decoder) message() (Message, bool) {
	var m Message
	if d.next() != '{' || d.skipSpace() == '}' || !d.enter() {
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
		switch d.next() {
		case ',':
		case '}':
			d.leave()
			return m, m.Role != ""
		default:
			return m, false
		}
	}
}

// role reads a message's "type": one of the four roles, as written.
func (d *decoder) role() (Role, bool) {
	if d.next() != '"' {
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
	switch d.next() {
	case 'n':
		return nil, d.literal("ull")
	case '[':
	default:
		return nil, false
	}
	if d.skipSpace() == ']' {
		d.pos++
		return nil, true
	}
	if !d.enter() {
		return nil, false
	}
	var out []Block
	for {
		if d.next() != '{' {
			return nil, false
		}
		b, ok := d.block()
		if !ok {
			return nil, false
		}
		out = append(out, b)
		switch d.next() {
		case ',':
		case ']':
			d.leave()
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
	{TypeText, fText},
	{TypeToolUse, fID | fName | fInput},
	{TypeThinking, fText | fSignature},
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
	text, url, mediaType, detail, fileID, name, id, toolUseID, signature, kind string

	data       []byte          // image, audio, file
	dataString string          // redacted_thinking
	raw        json.RawMessage // tool_use input, extension data
	content    []Block
	isError    bool
}

// block reads a block whose '{' has been consumed. Its first key must be
// "type".
func (d *decoder) block() (Block, bool) {
	start := d.pos - 1
	if !d.enter() {
		return nil, false
	}
	if key, ok := d.key(); !ok || string(key) != "type" || d.next() != '"' {
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
		switch d.next() {
		case ',':
		case '}':
			d.leave()
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
		case fInput:
			f.raw, ok = d.raw()
		case fContent:
			f.content, ok = d.blocks()
		case fIsError:
			f.isError, ok = d.bool()
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
		return Text{Text: f.text}
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
		return ToolUse{ID: f.id, Name: f.name, Input: in}
	case TypeToolResult:
		return ToolResult{ToolUseID: f.toolUseID, Content: f.content, IsError: f.isError}
	case TypeThinking:
		return Thinking{Text: f.text, Signature: f.signature}
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
		switch d.next() {
		case ',':
		case '}':
			d.leave()
			return Extension{Kind: tag, Data: bytes.Clone(d.data[start:d.pos])}, true
		default:
			return nil, false
		}
		key, ok := d.key()
		if !ok || bytes.EqualFold(key, []byte("type")) || !d.skipValue() {
			return nil, false
		}
	}
}

// key reads an object key and its colon. Keys are plain ASCII without
// escapes; any other key is left to encoding/json, which matches keys
// case-insensitively, with Unicode folding.
func (d *decoder) key() ([]byte, bool) {
	if d.next() != '"' {
		return nil, false
	}
	start := d.pos
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			if d.next() != ':' {
				return nil, false
			}
			return d.data[start:i], true
		case c < 0x20 || c == '\\' || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// string reads a string value; null leaves it empty, as encoding/json does
// (a key is read only once).
func (d *decoder) string() (string, bool) {
	switch d.next() {
	case '"':
		s, ok := d.str()
		return string(s), ok
	case 'n':
		return "", d.literal("ull")
	}
	return "", false
}

// bool reads a boolean value; null is false.
func (d *decoder) bool() (bool, bool) {
	switch d.next() {
	case 't':
		return true, d.literal("rue")
	case 'f':
		return false, d.literal("alse")
	case 'n':
		return false, d.literal("ull")
	}
	return false, false
}

// base64 reads a []byte value: a base64 string, decoded as encoding/json
// decodes it, or null (nil).
func (d *decoder) base64() ([]byte, bool) {
	switch d.next() {
	case '"':
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
		n, err := base64.StdEncoding.Decode(b, s)
		return b[:n], err == nil
	case 'n':
		return nil, d.literal("ull")
	}
	return nil, false // an array of numbers is valid too, but encoding/json's
}

// raw reads any value and returns a copy of its JSON text, as
// json.RawMessage keeps it (null included).
func (d *decoder) raw() (json.RawMessage, bool) {
	d.skipSpace()
	start := d.pos
	if !d.skipValue() {
		return nil, false
	}
	return bytes.Clone(d.data[start:d.pos]), true
}

// str reads the rest of a string whose opening quote has been consumed and
// returns its contents, unescaped. The result is valid only until the next
// call. Invalid UTF-8 and unpaired surrogates, which encoding/json
// replaces, are left to it.
func (d *decoder) str() ([]byte, bool) {
	start := d.pos
	ascii := true
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			s := d.data[start:i]
			return s, ascii || utf8.Valid(s)
		case c == '\\':
			return d.unescape(start, i)
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false
}

// unescape finishes a string that has an escape at i, copying it into
// d.buf.
func (d *decoder) unescape(start, i int) ([]byte, bool) {
	if n := len(d.data) - start; cap(d.buf) < n { // room for any string left
		d.buf = make([]byte, 0, n)
	}
	buf := append(d.buf[:0], d.data[start:i]...)
	for i < len(d.data) {
		run := i
		for i < len(d.data) && d.data[i] >= 0x20 && d.data[i] != '"' && d.data[i] != '\\' {
			i++
		}
		buf = append(buf, d.data[run:i]...)
		if i == len(d.data) {
			break
		}
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			d.buf = buf
			return buf, utf8.Valid(buf)
		case c < 0x20:
			return nil, false
		}
		if i+1 >= len(d.data) {
			return nil, false
		}
		switch e := d.data[i+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := hex4(d.data[i+2:])
			if !ok {
				return nil, false
			}
			if utf16.IsSurrogate(r) {
				// Only a high surrogate followed by a low one is a rune.
				if len(d.data) < i+12 || d.data[i+6] != '\\' || d.data[i+7] != 'u' {
					return nil, false
				}
				lo, ok := hex4(d.data[i+8:])
				if r = utf16.DecodeRune(r, lo); !ok || r == utf8.RuneError {
					return nil, false
				}
				i += 6
			}
			buf = utf8.AppendRune(buf, r)
			i += 4
		default:
			return nil, false
		}
		i += 2
	}
	return nil, false
}

// hex4 decodes the four hex digits that start b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// skipValue moves past one JSON value, checking its syntax as strictly as
// encoding/json does.
func (d *decoder) skipValue() bool {
	switch c := d.next(); c {
	case '"':
		return d.skipString()
	case '{':
		if !d.enter() {
			return false
		}
		if d.skipSpace() == '}' {
			d.pos++
			d.leave()
			return true
		}
		for {
			if d.next() != '"' || !d.skipString() || d.next() != ':' || !d.skipValue() {
				return false
			}
			switch d.next() {
			case ',':
			case '}':
				d.leave()
				return true
			default:
				return false
			}
		}
	case '[':
		if !d.enter() {
			return false
		}
		if d.skipSpace() == ']' {
			d.pos++
			d.leave()
			return true
		}
		for {
			if !d.skipValue() {
				return false
			}
			switch d.next() {
			case ',':
			case ']':
				d.leave()
				return true
			default:
				return false
			}
		}
	case 't':
		return d.literal("rue")
	case 'f':
		return d.literal("alse")
	case 'n':
		return d.literal("ull")
	default:
		return d.skipNumber(c)
	}
}

// skipString moves past the rest of a string whose opening quote has been
// consumed, checking its escapes. Like encoding/json, it does not check
// UTF-8 here: a raw value keeps its bytes.
func (d *decoder) skipString() bool {
	for i := d.pos; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			d.pos = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if i+1 >= len(d.data) {
				return false
			}
			switch d.data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if _, ok := hex4(d.data[i+2:]); !ok {
					return false
				}
				i += 5
			default:
				return false
			}
		}
	}
	return false
}

// skipNumber moves past the rest of a number whose first byte c has been
// consumed: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *decoder) skipNumber(c byte) bool {
	if c == '-' {
		if d.pos >= len(d.data) {
			return false
		}
		c = d.data[d.pos]
		d.pos++
	}
	switch {
	case c == '0':
	case '1' <= c && c <= '9':
		d.digits()
	default:
		return false
	}
	if d.pos < len(d.data) && d.data[d.pos] == '.' {
		d.pos++
		if d.digits() == 0 {
			return false
		}
	}
	if d.pos < len(d.data) && (d.data[d.pos] == 'e' || d.data[d.pos] == 'E') {
		d.pos++
		if d.pos < len(d.data) && (d.data[d.pos] == '+' || d.data[d.pos] == '-') {
			d.pos++
		}
		if d.digits() == 0 {
			return false
		}
	}
	return true
}

// digits moves past decimal digits and returns how many.
func (d *decoder) digits() int {
	start := d.pos
	for d.pos < len(d.data) && '0' <= d.data[d.pos] && d.data[d.pos] <= '9' {
		d.pos++
	}
	return d.pos - start
}
