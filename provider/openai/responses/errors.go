package responses

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

// wireError is an error object: {"message", "type", "param", "code"} in an
// HTTP error body and a stream's error event, {"code", "message"} in a
// failed response. Code is a string, null, or (some servers) a number.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// errorDoc holds the shapes an error document takes: {"error": {...}} (an
// HTTP error body, and the error event of older streams) and a flat error
// event {"type": "error", "code", "message", "param"}.
type errorDoc struct {
	Error json.RawMessage `json:"error"`
	wireError
}

// parseError reads an error document; ok is false when data holds no
// error at all.
func parseError(data []byte) (e wireError, ok bool) {
	var doc errorDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return e, false
	}
	if raw := bytes.TrimSpace(doc.Error); !isNull(raw) {
		return parseErrorValue(raw), true
	}
	if doc.Message != "" || !isNull(doc.Code) {
		if doc.Type == "error" {
			doc.Type = "" // the event's own type, not the error's
		}
		return doc.wireError, true
	}
	return e, false
}

// parseErrorValue reads the value of an "error" key: an object, or just a
// message string (anything else becomes the message as it is).
func parseErrorValue(raw []byte) (e wireError) {
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
	return wireError{Message: httpx.Snippet(raw)}
}

// code is the error's code as text, or its type when it has no code.
func (e wireError) code() string {
	raw := bytes.TrimSpace(e.Code)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	} else if !isNull(raw) {
		return string(raw)
	}
	return e.Type
}

// decodeHTTPError is the transport's error decoder: the kind, the
// provider's message and code, and the request id of a non-2xx response.
// The transport adds the provider, status and Retry-After, and redacts the
// key.
func decodeHTTPError(resp *http.Response, body []byte) *llm.Error {
	e := &llm.Error{Kind: httpx.KindForStatus(resp.StatusCode), RequestID: resp.Header.Get("X-Request-Id")}
	if we, ok := parseError(body); ok {
		e.Code, e.Message = we.code(), we.Message
	} else {
		e.Message = httpx.Snippet(body)
	}
	refineKind(e)
	return e
}

// refineKind corrects a kind by the error's code and message: an exhausted
// quota is an auth-class error (waiting will not help, so the retry
// middleware leaves it alone, though OpenAI sends it with 429), a prompt
// over the window a context-length error.
func refineKind(e *llm.Error) {
	switch e.Code {
	case "insufficient_quota", "invalid_api_key":
		e.Kind = llm.KindAuth
	}
	if isContextLength(e.Code, e.Message) {
		e.Kind = llm.KindContextLength
	}
}

// inBandError turns an error sent inside a 200 response (a stream's error
// event, a failed response, an error document in place of a response) into
// a typed error. Its kind comes from its code; an unknown code is a server
// error (retryable), which is what OpenAI's mid-stream failures are.
func (m *Model) inBandError(we wireError, status int) *llm.Error {
	e := &llm.Error{Kind: llm.KindServer, Provider: errProvider, StatusCode: status, Code: we.code(), Message: we.Message}
	switch c := e.Code; {
	case c == "rate_limit_exceeded" || c == "rate_limit_error":
		e.Kind = llm.KindRateLimited
	case c == "overloaded" || c == "overloaded_error" || c == "server_is_overloaded" || c == "slow_down":
		e.Kind = llm.KindOverloaded
	case c == "invalid_request_error" || c == "invalid_prompt" || strings.HasPrefix(c, "invalid_") || strings.HasPrefix(c, "unsupported_"):
		e.Kind = llm.KindInvalidRequest
	case c == "authentication_error" || c == "permission_error":
		e.Kind = llm.KindAuth
	}
	refineKind(e)
	if e.Message == "" {
		e.Message = "the server reported an error inside the response"
	}
	m.client.Redact(e)
	return e
}

// isContextLength recognises "the prompt is larger than the context window"
// by OpenAI's code or by the wording of its message.
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
