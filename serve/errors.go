package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
)

// Error types of the OpenAI error object.
const (
	typeInvalidRequest = "invalid_request_error"
	typeServer         = "server_error"
	typeRateLimit      = "rate_limit_error"
)

// APIError is an error as the endpoints answer it: an HTTP status and
// OpenAI's error object {"error": {"message", "type", "param", "code"}}.
type APIError struct {
	Status  int
	Type    string
	Code    string
	Param   string
	Message string
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// errorBody is the JSON of an APIError.
type errorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *APIError) body() errorBody {
	b := errorBody{Message: e.Message, Type: e.Type}
	if e.Param != "" {
		b.Param = &e.Param
	}
	if e.Code != "" {
		b.Code = &e.Code
	}
	return b
}

// writeError answers with e.
func writeError(w http.ResponseWriter, e *APIError) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((e.RetryAfter+time.Second-1)/time.Second)))
	}
	writeJSON(w, e.Status, struct {
		Error errorBody `json:"error"`
	}{e.body()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		data = []byte(`{"error":{"message":"internal error encoding the response","type":"server_error","param":null,"code":null}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

func invalid(param, format string, args ...any) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Message: fmt.Sprintf(format, args...)}
}

func tooLarge(limit int64) *APIError {
	return &APIError{Status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Code: "request_too_large",
		Message: fmt.Sprintf("the request body is larger than %d bytes", limit)}
}

func modelNotFound(name string) *APIError {
	return &APIError{Status: http.StatusNotFound, Type: typeInvalidRequest, Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("the model %q does not exist (GET /v1/models lists the agents)", name)}
}

func draining() *APIError {
	return &APIError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "shutting_down",
		Message: "the server is shutting down; retry on another instance"}
}

// decodeError is the answer to a body that does not decode.
func decodeError(err error) *APIError {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	return invalid("", "the request body is not valid JSON for this endpoint: %v", err)
}

// turnError maps the error of a failed turn. Server-side failures get a
// generic message (the details go to the log): no error a client sees
// holds a base URL, a path or a provider's words about the server's key.
func turnError(ctx context.Context, err error) *APIError {
	if errors.Is(context.Cause(ctx), ErrDraining) {
		return draining()
	}
	if ctx.Err() == context.DeadlineExceeded {
		return &APIError{Status: http.StatusGatewayTimeout, Type: typeServer, Code: "timeout", Message: "the turn took longer than the server allows"}
	}
	if errors.Is(err, context.Canceled) && llm.KindOf(err) != llm.KindCancelled {
		return &APIError{Status: 499, Type: typeInvalidRequest, Code: "cancelled", Message: "the request was cancelled"}
	}
	var be *middleware.BlockedError
	if errors.As(err, &be) {
		return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "blocked", Message: be.Error()}
	}
	var le *llm.Error
	if !errors.As(err, &le) {
		return &APIError{Status: http.StatusInternalServerError, Type: typeServer, Code: "internal_error", Message: "the turn failed on the server"}
	}
	switch le.Kind {
	case llm.KindRateLimited:
		return &APIError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "rate_limit_exceeded",
			Message: "the model provider is rate limiting this server; retry later", RetryAfter: le.RetryAfter}
	case llm.KindOverloaded:
		return &APIError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "overloaded",
			Message: "the model provider is overloaded; retry later", RetryAfter: le.RetryAfter}
	case llm.KindContextLength:
		return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "context_length_exceeded",
			Message: "the conversation does not fit the model's context window"}
	case llm.KindInvalidRequest:
		return &APIError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "invalid_request",
			Message: "the model provider rejected the request: " + le.Message}
	case llm.KindCancelled:
		return &APIError{Status: 499, Type: typeInvalidRequest, Code: "cancelled", Message: "the request was cancelled"}
	case llm.KindAuth:
		return &APIError{Status: http.StatusBadGateway, Type: typeServer, Code: "upstream_auth",
			Message: "the model provider refused the server's credentials"}
	}
	return &APIError{Status: http.StatusBadGateway, Type: typeServer, Code: "upstream_error",
		Message: "the model provider failed (" + le.Kind.String() + ")"}
}
