package structured

import (
	"errors"
	"fmt"
	"strings"
)

// The kinds of [Error]; test them with errors.Is(err, structured.ErrSchema).
var (
	// ErrParse: the answer is not JSON (or holds no JSON object).
	ErrParse = errors.New("structured: the answer is not JSON")
	// ErrSchema: the answer is JSON that does not validate against the
	// schema.
	ErrSchema = errors.New("structured: the answer does not match the schema")
	// ErrRefusal: the model refused (OpenAI's refusal) or the provider
	// withheld the answer (Gemini's and OpenAI's content filters).
	ErrRefusal = errors.New("structured: the model refused to answer")
	// ErrTruncated: the answer was cut by the output token limit.
	ErrTruncated = errors.New("structured: the answer was cut short by the token limit")
	// ErrNoAnswer: the turn ended without an answer (the forced tool was
	// never called and the text holds no JSON, or the step limit ended
	// the turn).
	ErrNoAnswer = errors.New("structured: the turn ended without an answer")
)

// Error says why a typed run did not produce a value: what failed (Kind,
// one of ErrParse, ErrSchema, ErrRefusal, ErrTruncated, ErrNoAnswer),
// where in the answer, and the answer as the model wrote it. It is
// returned after the repair turns allowed (Options.Repairs) were spent.
type Error struct {
	Kind error
	// Path is where in the answer a schema error is, as a JSON pointer
	// ("/author/last_name"; "" for the answer itself); for a parse error,
	// the byte offset ("@17") when the decoder gave one.
	Path string
	// Reason is the decoder's or the validator's message, or the refusal's
	// text.
	Reason string
	// Raw is the answer's text (the forced tool's arguments in tool mode).
	Raw string
	// Attempts counts the answers the model gave (the first one and each
	// repair).
	Attempts int
}

// Error describes the failure in one line.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if e.Path != "" {
		fmt.Fprintf(&b, " at %s", e.Path)
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d answers)", e.Attempts)
	}
	return b.String()
}

// Is matches the error's Kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// schemaPath turns the validator's message ("validating root: validating
// /properties/author: validating /$defs/Author: required: ...") into the
// answer's path ("/author") and the innermost reason.
func schemaPath(msg string) (path, reason string) {
	var segs []string
	for {
		rest, ok := strings.CutPrefix(msg, "validating ")
		if !ok {
			break
		}
		loc, after, found := strings.Cut(rest, ": ")
		if !found {
			break
		}
		segs = append(segs, loc)
		msg = after
	}
	var names []string
	prev := ""
	for _, seg := range segs {
		if seg == "root" {
			prev = ""
			continue
		}
		part := seg
		if prev != "" && strings.HasPrefix(seg, prev) {
			part = seg[len(prev):]
		} else if i := strings.LastIndex(seg, "$defs/"); i >= 0 || strings.Contains(seg, "definitions/") {
			// A $ref jumped into a definition: its own path starts there.
			if i < 0 {
				i = strings.LastIndex(seg, "definitions/")
			}
			rest := seg[i:]
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				rest = rest[j+1:]
			}
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				part = rest[j:]
			} else {
				part = ""
			}
		}
		prev = seg
		elems := strings.Split(strings.Trim(part, "/"), "/")
		for i := 0; i < len(elems); i++ {
			switch elems[i] {
			case "properties":
				if i+1 < len(elems) {
					names = append(names, elems[i+1])
					i++
				}
			case "items", "additionalProperties":
				names = append(names, "*")
			case "prefixItems":
				if i+1 < len(elems) {
					names = append(names, elems[i+1])
					i++
				}
			}
		}
	}
	if len(names) > 0 {
		path = "/" + strings.Join(names, "/")
	}
	return path, msg
}
