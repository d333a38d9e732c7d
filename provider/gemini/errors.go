package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agcore/agcore/internal/httpx"
	"github.com/agcore/agcore/llm"
)

// invalid returns a KindInvalidRequest error for a request this adapter
// cannot express; nothing was sent.
func invalid(format string, args ...any) *llm.Error {
	return &llm.Error{Kind: llm.KindInvalidRequest, Provider: providerName, Message: fmt.Sprintf(format, args...)}
}

// decodeHTTPError is the transport's error decoder (httpx.Client's
// DecodeError) for a non-2xx response: Google's error body
// {"error":{"code","message","status","details"}} (Vertex AI wraps it in
// an array) gives the kind, the code and the message, and a RetryInfo
// detail the wait. The transport adds the status, prefers a Retry-After
// header, and redacts the key.
func decodeHTTPError(resp *http.Response, body []byte) *llm.Error {
	st := decodeStatus(body)
	if st == nil {
		return &llm.Error{Kind: httpx.KindForStatus(resp.StatusCode), Message: httpx.Snippet(body)}
	}
	return statusError(st, httpx.KindForStatus(resp.StatusCode))
}

// decodeStatus reads an error body, {"error":{...}} or [{"error":{...}}];
// nil when body is neither.
func decodeStatus(body []byte) *wireStatus {
	var one struct {
		Error *wireStatus `json:"error"`
	}
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		var many []json.RawMessage
		if json.Unmarshal(b, &many) != nil || len(many) == 0 {
			return nil
		}
		body = many[0]
	}
	if json.Unmarshal(body, &one) != nil {
		return nil
	}
	return one.Error
}

// statusError types a google.rpc.Status. Code is the ErrorInfo reason when
// there is one (API_KEY_INVALID says more than INVALID_ARGUMENT), else the
// status name.
func statusError(st *wireStatus, fallback llm.ErrorKind) *llm.Error {
	e := &llm.Error{Code: st.Status, Message: st.Message}
	for _, d := range st.Details {
		switch {
		case strings.HasSuffix(d.Type, "google.rpc.ErrorInfo") && d.Reason != "":
			e.Code = d.Reason
		case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
			e.RetryAfter = parseDelay(d.RetryDelay)
		}
	}
	e.Kind = kindFor(st.Status, e.Code, st.Message, fallback)
	if e.Message == "" && e.Code != "" {
		e.Message = e.Code
	}
	return e
}

// kindFor maps a status name (and the ErrorInfo reason and message) to an
// error kind; fallback is the HTTP status's.
func kindFor(status, reason, msg string, fallback llm.ErrorKind) llm.ErrorKind {
	kind := fallback
	switch status {
	case "RESOURCE_EXHAUSTED":
		kind = llm.KindRateLimited
	case "UNAUTHENTICATED", "PERMISSION_DENIED":
		kind = llm.KindAuth
	case "UNAVAILABLE":
		kind = llm.KindOverloaded
	case "INTERNAL", "UNKNOWN", "DATA_LOSS", "DEADLINE_EXCEEDED", "CANCELLED":
		kind = llm.KindServer
	case "INVALID_ARGUMENT", "FAILED_PRECONDITION", "NOT_FOUND", "OUT_OF_RANGE", "ALREADY_EXISTS", "UNIMPLEMENTED", "ABORTED":
		kind = llm.KindInvalidRequest
	}
	lower := strings.ToLower(msg)
	switch {
	case strings.Contains(reason, "API_KEY") || strings.Contains(lower, "api key not valid") || strings.Contains(lower, "api key expired"):
		kind = llm.KindAuth
	case kind == llm.KindInvalidRequest && isContextLength(lower):
		kind = llm.KindContextLength
	}
	if kind == llm.KindUnknown {
		kind = llm.KindServer
	}
	return kind
}

// isContextLength recognises Gemini's "The input token count (1300000)
// exceeds the maximum number of tokens allowed (1048576)." (lower case).
func isContextLength(msg string) bool {
	return strings.Contains(msg, "input token count") ||
		strings.Contains(msg, "exceeds the maximum number of tokens") ||
		strings.Contains(msg, "context window")
}

// parseDelay reads a RetryInfo retryDelay, a protobuf Duration in JSON
// ("37s", "0.5s"); 0 when it is absent, malformed or not positive.
func parseDelay(s string) time.Duration {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0
	}
	return d
}

// promptBlocked is the error for a prompt Gemini refused to answer
// (promptFeedback.blockReason, and no candidate): KindInvalidRequest,
// since the same prompt would be refused again, with the block reason as
// Code.
func promptBlocked(reason, msg string) *llm.Error {
	text := "the prompt was blocked (" + reason + ")"
	if msg != "" {
		text += ": " + msg
	}
	return &llm.Error{Kind: llm.KindInvalidRequest, Provider: providerName, Code: reason, Message: text}
}
