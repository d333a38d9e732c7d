package structured

import (
	"strings"
	"unicode/utf8"
)

// Scanner states inside a container.
const (
	stObjKeyOrEnd   = iota // after '{'
	stObjKey               // after ','
	stObjColon             // after a key
	stObjValue             // after ':'
	stObjCommaOrEnd        // after a member
	stArrValueOrEnd        // after '['
	stArrValue             // after ','
	stArrCommaOrEnd        // after an element
)

// completeJSON returns a whole JSON document made from the beginning of a
// JSON text that is still arriving: the longest prefix that can be closed,
// closed (an open string ends where it was cut, open arrays and objects
// are closed, a member whose key or value has not arrived yet is left
// out). Text before the first '{' or '[' is skipped (a Markdown fence, a
// preamble). complete reports whether the document was already whole. It
// returns nil when nothing usable has arrived, and never panics: whatever
// it returns is valid JSON.
func completeJSON(b []byte) (out []byte, complete bool) {
	start := -1
	for i, c := range b {
		if c == '{' || c == '[' {
			start = i
			break
		}
	}
	if start < 0 {
		return nil, false
	}
	var (
		st       []uint8 // one state per open container
		safeEnd  = -1    // b[start:safeEnd] + suffix is whole
		safeOpen []uint8 // the containers open at safeEnd
		safeStr  bool    // the suffix begins with '"' (a string cut short)
	)
	mark := func(end int, inString bool) {
		safeEnd, safeStr = end, inString
		safeOpen = append(safeOpen[:0], st...)
	}
	// valueDone moves the enclosing container past a value ending at end;
	// it reports whether that value was the root.
	valueDone := func(end int) bool {
		if len(st) == 0 {
			return true
		}
		switch st[len(st)-1] {
		case stObjValue:
			st[len(st)-1] = stObjCommaOrEnd
		default:
			st[len(st)-1] = stArrCommaOrEnd
		}
		mark(end, false)
		return false
	}
	expectsValue := func() bool {
		if len(st) == 0 {
			return true
		}
		s := st[len(st)-1]
		return s == stObjValue || s == stArrValueOrEnd || s == stArrValue
	}
	i := start
	for i < len(b) {
		c := b[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '{' || c == '[':
			if !expectsValue() {
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			if c == '{' {
				st = append(st, stObjKeyOrEnd)
			} else {
				st = append(st, stArrValueOrEnd)
			}
			i++
			mark(i, false)
		case c == '}' || c == ']':
			if len(st) == 0 {
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			top := st[len(st)-1]
			okObj := c == '}' && (top == stObjKeyOrEnd || top == stObjCommaOrEnd || top == stObjKey)
			okArr := c == ']' && (top == stArrValueOrEnd || top == stArrCommaOrEnd || top == stArrValue)
			if !okObj && !okArr {
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			if top == stObjKey || top == stArrValue {
				// A trailing comma: tolerated, but the text is not
				// JSON as it stands; close at the last safe point.
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			st = st[:len(st)-1]
			i++
			if valueDone(i) {
				return b[start:i], true
			}
		case c == ',':
			if len(st) == 0 {
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			switch st[len(st)-1] {
			case stObjCommaOrEnd:
				st[len(st)-1] = stObjKey
			case stArrCommaOrEnd:
				st[len(st)-1] = stArrValue
			default:
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			i++
		case c == ':':
			if len(st) == 0 || st[len(st)-1] != stObjColon {
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			st[len(st)-1] = stObjValue
			i++
		case c == '"':
			isKey := len(st) > 0 && (st[len(st)-1] == stObjKeyOrEnd || st[len(st)-1] == stObjKey)
			if !isKey && !expectsValue() {
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			end, good, closed := scanString(b, i)
			if !closed {
				if !isKey && good > i {
					mark(good, true)
				} else if !isKey {
					mark(i+1, true)
				}
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			i = end
			if isKey {
				st[len(st)-1] = stObjColon
			} else if valueDone(i) {
				return b[start:i], true
			}
		case c == '-' || (c >= '0' && c <= '9'):
			if !expectsValue() {
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			j := i
			for j < len(b) && isNumberByte(b[j]) {
				j++
			}
			if !validNumber(b[i:j]) {
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			i = j
			if valueDone(i) {
				return b[start:i], true
			}
		case c == 't' || c == 'f' || c == 'n':
			if !expectsValue() {
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			lit := "null"
			if c == 't' {
				lit = "true"
			} else if c == 'f' {
				lit = "false"
			}
			if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
				return finish(b, start, safeEnd, safeOpen, safeStr)
			}
			i += len(lit)
			if valueDone(i) {
				return b[start:i], true
			}
		default:
			return finish(b, start, safeEnd, safeOpen, safeStr)
		}
	}
	return finish(b, start, safeEnd, safeOpen, safeStr)
}

// finish closes b[start:end] with the containers open there.
func finish(b []byte, start, end int, open []uint8, inString bool) ([]byte, bool) {
	if end < 0 {
		return nil, false
	}
	out := make([]byte, 0, end-start+len(open)+1)
	out = append(out, b[start:end]...)
	if inString {
		out = append(out, '"')
	}
	for k := len(open) - 1; k >= 0; k-- {
		if open[k] <= stObjCommaOrEnd {
			out = append(out, '}')
		} else {
			out = append(out, ']')
		}
	}
	return out, false
}

// scanString scans the string starting at b[i] (a '"'). It returns the
// index after its closing quote and closed true; or, cut short, good: the
// end of its longest prefix that is whole characters and escapes (the
// string may be closed there).
func scanString(b []byte, i int) (end, good int, closed bool) {
	j := i + 1
	good = j
	for j < len(b) {
		c := b[j]
		switch {
		case c == '"':
			return j + 1, j, true
		case c == '\\':
			if j+1 >= len(b) {
				return 0, good, false
			}
			n := 2
			switch b[j+1] {
			case 'u':
				n = 6
				if j+n > len(b) {
					return 0, good, false
				}
				for _, h := range b[j+2 : j+6] {
					if !isHex(h) {
						return 0, good, false
					}
				}
				// A high surrogate without its pair would decode as
				// U+FFFD: keep it only once the pair has arrived.
				if (b[j+2]|0x20) == 'd' && strings.IndexByte("89abAB", b[j+3]) >= 0 && pairPending(b[j+6:]) {
					return 0, good, false
				}
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			default:
				return 0, good, false
			}
			j += n
			good = j
		case c < 0x20:
			return 0, good, false
		case c < utf8.RuneSelf:
			j++
			good = j
		default:
			if !utf8.FullRune(b[j:]) {
				return 0, good, false // a character cut short, or more to come
			}
			// An invalid byte passes: encoding/json reads it as U+FFFD.
			_, size := utf8.DecodeRune(b[j:])
			j += size
			good = j
		}
	}
	return 0, good, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

func isNumberByte(c byte) bool {
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// validNumber reports whether s is a JSON number.
func validNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	if i >= len(s) {
		return false
	}
	if s[i] == '0' {
		i++
	} else if s[i] >= '1' && s[i] <= '9' {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	} else {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	return i == len(s)
}

// pairPending reports whether rest, what follows a high surrogate's
// escape, is the beginning of a second \u escape cut short.
func pairPending(rest []byte) bool {
	if len(rest) >= 6 {
		return false
	}
	for i, c := range rest {
		switch {
		case i == 0 && c != '\\', i == 1 && c != 'u', i >= 2 && !isHex(c):
			return false
		}
	}
	return true
}
