package openai

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

// wireError is an error object as OpenAI-compatible servers send it, in a
// response body or inside a stream: {"message", "type", "param", "code"},
// where some servers make code a number (OpenRouter) and Groq adds
// status_code.
type wireError struct {
	Message    string          `json:"message"`
	Type       string          `json:"type"`
	Code       json.RawMessage `json:"code"`
	StatusCode int             `json:"status_code"`
}

// errorBody holds the shapes an error document takes: {"error": {...}}
// (OpenAI, DeepSeek, Groq, OpenRouter), {"error": "text"} (Ollama), and a
// flat {"object": "error", "message", "type", "code"} (vLLM).
type errorBody struct {
	Error json.RawMessage `json:"error"`
	wireError
}

// parseError reads an error document. ok is false when data holds no error
// at all.
func parseError(data []byte) (e wireError, ok bool) {
	var body errorBody
	if err := json.Unmarshal(data, &body); err != nil {
		return e, false
	}
	if raw := bytes.TrimSpace(body.Error); len(raw) > 0 && string(raw) != "null" {
		return parseErrorValue(raw), true
	}
	if body.Message != "" {
		return body.wireError, true
	}
	return e, false
}

// parseErrorValue reads the value of an "error" key: an object, or just a
// message string (anything else becomes the message as is).
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

// code is the error's code as text ("context_length_exceeded", "400"), or
// its type when it has no code.
func (e wireError) code() string {
	raw := bytes.TrimSpace(e.Code)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	} else if len(raw) > 0 && raw[0] != 'n' {
		return string(raw)
	}
	return e.Type
}

// statusHint is an HTTP-like status an in-band error names: Groq's
// status_code, or a numeric code (OpenRouter's {"code": 400}).
func (e wireError) statusHint() int {
	if e.StatusCode >= 400 && e.StatusCode <= 599 {
		return e.StatusCode
	}
	if n, err := strconv.Atoi(string(bytes.TrimSpace(e.Code))); err == nil && n >= 400 && n <= 599 {
		return n
	}
	return 0
}

// decodeHTTPError is the transport's error decoder (httpx.Client's
// DecodeError): the kind, the provider's message and code, and the request
// id of a non-2xx response. The transport adds the provider, status and
// Retry-After, and redacts the key.
func decodeHTTPError(resp *http.Response, body []byte) *llm.Error {
	e := &llm.Error{
		Kind:      httpx.KindForStatus(resp.StatusCode),
		RequestID: requestID(resp.Header),
	}
	if we, ok := parseError(body); ok {
		e.Code, e.Message = we.code(), we.Message
	} else {
		e.Message = httpx.Snippet(body)
	}
	if isContextLength(e.Code, e.Message) {
		e.Kind = llm.KindContextLength
	}
	if e.Code == "insufficient_quota" {
		// A 429 for an exhausted quota or billing limit: waiting will not
		// help, so it is an auth-class error the retry middleware leaves
		// alone, not a rate limit.
		e.Kind = llm.KindAuth
	}
	return e
}

// inBandError turns an error sent inside a 200 response (a stream's
// {"error": ...} chunk or "event: error", or an error document in place of
// a completion) into a typed error. Its kind comes from the status the error
// names, else from its code; with neither it is a server error (retryable),
// which is what OpenAI's mid-stream errors are.
func (m *Model) inBandError(we wireError, status int) *llm.Error {
	e := &llm.Error{Kind: llm.KindServer, Provider: m.cfg.svc.Provider, StatusCode: status, Code: we.code(), Message: we.Message}
	if hint := we.statusHint(); hint != 0 {
		e.Kind = httpx.KindForStatus(hint)
	} else {
		switch e.Code {
		case "rate_limit_exceeded", "rate_limit_error":
			e.Kind = llm.KindRateLimited
		case "overloaded", "overloaded_error", "server_overloaded":
			e.Kind = llm.KindOverloaded
		case "invalid_request_error":
			e.Kind = llm.KindInvalidRequest
		}
	}
	if isContextLength(e.Code, e.Message) {
		e.Kind = llm.KindContextLength
	}
	if e.Message == "" {
		e.Message = "the server reported an error inside the response"
	}
	m.client.Redact(e)
	return e
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
