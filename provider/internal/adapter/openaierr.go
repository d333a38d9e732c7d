package adapter

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

// The errors of the OpenAI dialects (Chat Completions and its compatible
// servers, the Responses API), decoded once for both adapters.

// WireError is an error object as OpenAI and compatible servers send it, in
// an HTTP error body or inside a 200 response: {"message", "type",
// "param", "code"} ({"code", "message"} in a failed Responses answer).
// Code is a string, null, or a number (OpenRouter); Groq adds status_code.
type WireError struct {
	Message    string          `json:"message"`
	Type       string          `json:"type"`
	Code       json.RawMessage `json:"code"`
	StatusCode int             `json:"status_code"`
}

// errorDoc holds the shapes an error document takes: {"error": {...}}
// (OpenAI, DeepSeek, Groq, OpenRouter, an older Responses stream's error
// event), {"error": "text"} (Ollama), and a flat {"message", "type",
// "code"} (vLLM's {"object": "error", ...}, a Responses stream's
// {"type": "error", ...} event).
type errorDoc struct {
	Error json.RawMessage `json:"error"`
	WireError
}

// ParseError reads an error document; ok is false when data holds no
// error at all.
func ParseError(data []byte) (e WireError, ok bool) {
	var doc errorDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return e, false
	}
	if raw := bytes.TrimSpace(doc.Error); !IsNull(raw) {
		return ErrorValue(raw), true
	}
	if doc.Message != "" || !IsNull(doc.Code) {
		if doc.Type == "error" {
			doc.Type = "" // the event's own type, not the error's
		}
		return doc.WireError, true
	}
	return e, false
}

// ErrorValue reads the value of an "error" key: an object, or just a
// message string (anything else becomes the message as it is).
func ErrorValue(raw []byte) (e WireError) {
	switch raw[0] {
	case '{':
		if json.Unmarshal(raw, &e) == nil {
			return e
		}
	case '"':
		if json.Unmarshal(raw, &e.Message) == nil {
			return e
		}
	}
	return WireError{Message: httpx.Snippet(raw)}
}

// IsNull reports whether a raw value is absent or null.
func IsNull(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// CodeText is the error's code as text ("context_length_exceeded", "400"),
// or its type when it has no code.
func (e WireError) CodeText() string {
	raw := bytes.TrimSpace(e.Code)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	} else if !IsNull(raw) {
		return string(raw)
	}
	return e.Type
}

// statusHint is an HTTP-like status an in-band error names: Groq's
// status_code, or a numeric code (OpenRouter's {"code": 400}).
func (e WireError) statusHint() int {
	if e.StatusCode >= 400 && e.StatusCode <= 599 {
		return e.StatusCode
	}
	if n, err := strconv.Atoi(string(bytes.TrimSpace(e.Code))); err == nil && n >= 400 && n <= 599 {
		return n
	}
	return 0
}

// DecodeHTTPError is the transport's error decoder of the OpenAI dialects
// (httpx.Client's DecodeError): the kind, the server's message and code,
// and the request id of a non-2xx response. The transport adds the
// provider, status and Retry-After, and redacts the key.
func DecodeHTTPError(resp *http.Response, body []byte) *llm.Error {
	e := &llm.Error{Kind: httpx.KindForStatus(resp.StatusCode), RequestID: requestID(resp.Header)}
	if we, ok := ParseError(body); ok {
		e.Code, e.Message = we.CodeText(), we.Message
	} else {
		e.Message = httpx.Snippet(body)
	}
	refineKind(e)
	return e
}

// InBandError turns an error sent inside a 200 response (a stream's error
// chunk or event, a failed response, an error document in place of an
// answer) into a typed error, redacted by c. Its kind comes from the
// status the error names, else from its code; with neither it is a server
// error (retryable), which is what OpenAI's mid-stream failures are.
func InBandError(c *httpx.Client, we WireError, status int) *llm.Error {
	e := &llm.Error{Kind: llm.KindServer, Provider: c.Provider, StatusCode: status, Code: we.CodeText(), Message: we.Message}
	if hint := we.statusHint(); hint != 0 {
		e.Kind = httpx.KindForStatus(hint)
	} else {
		switch code := e.Code; {
		case code == "rate_limit_exceeded" || code == "rate_limit_error":
			e.Kind = llm.KindRateLimited
		case code == "overloaded" || code == "overloaded_error" || code == "server_overloaded" ||
			code == "server_is_overloaded" || code == "slow_down":
			e.Kind = llm.KindOverloaded
		case strings.HasPrefix(code, "invalid_") || strings.HasPrefix(code, "unsupported_"):
			e.Kind = llm.KindInvalidRequest
		case code == "authentication_error" || code == "permission_error":
			e.Kind = llm.KindAuth
		}
	}
	refineKind(e)
	if e.Message == "" {
		e.Message = "the server reported an error inside the response"
	}
	c.Redact(e)
	return e
}

// refineKind corrects a kind by the error's code and message: an exhausted
// quota or a wrong key is an auth-class error (waiting will not help, so
// the retry middleware leaves it alone, though OpenAI sends the quota with
// 429), a prompt over the window a context-length error.
func refineKind(e *llm.Error) {
	switch e.Code {
	case "insufficient_quota", "invalid_api_key":
		e.Kind = llm.KindAuth
	}
	if isContextLength(e.Code, e.Message) {
		e.Kind = llm.KindContextLength
	}
}

// isContextLength recognises "the prompt is larger than the context window"
// by OpenAI's code or by the wording OpenAI, DeepSeek, vLLM and other
// servers use in the message.
func isContextLength(code, msg string) bool {
	if code == "context_length_exceeded" {
		return true
	}
	msg = strings.ToLower(msg)
	return strings.Contains(msg, "maximum context length") ||
		strings.Contains(msg, "context length exceeded") ||
		strings.Contains(msg, "context_length_exceeded") ||
		strings.Contains(msg, "context window")
}

func requestID(h http.Header) string {
	for _, k := range []string{"X-Request-Id", "Request-Id", "X-Ds-Trace-Id"} {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}
