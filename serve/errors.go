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
	"github.com/agcore/agcore/serve/host"
)

// Error types of the OpenAI error object.
const (
	typeInvalidRequest = "invalid_request_error"
	typeServer         = "server_error"
	typeRateLimit      = "rate_limit_error"
	typeQuota          = "insufficient_quota"
)

// apiError is an error as the endpoints answer it: an HTTP status and
// OpenAI's error object {"error": {"message", "type", "param", "code"}}.
type apiError struct {
	Status  int
	Type    string
	Code    string
	Param   string
	Message string
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration
}

// Error returns the status, code and message (for logs).
func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// errorBody is the JSON of an apiError.
type errorBody struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) body() errorBody {
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
func writeError(w http.ResponseWriter, e *apiError) {
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

func invalid(param, format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Param: param, Message: fmt.Sprintf(format, args...)}
}

func tooLarge(limit int64) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Type: typeInvalidRequest, Code: "request_too_large",
		Message: fmt.Sprintf("the request body is larger than %d bytes", limit)}
}

// agent returns the agent a request's model names: 400 when none is
// named, 404 model_not_found when no agent has the name.
func (h *Handler) agent(model string) (host.Agent, *apiError) {
	a, ok := h.opts.Agents.Get(model)
	switch {
	case ok:
		return a, nil
	case model == "":
		return host.Agent{}, invalid("model", "model is required: the name of an agent (GET /v1/models lists them)")
	}
	return host.Agent{}, modelNotFound(model)
}

func modelNotFound(name string) *apiError {
	return &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Param: "model", Code: "model_not_found",
		Message: fmt.Sprintf("the model %q does not exist (GET /v1/models lists the agents)", name)}
}

func draining() *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "shutting_down",
		Message: "the server is shutting down; retry on another instance"}
}

// decodeError is the answer to a body that does not decode.
func decodeError(err error) *apiError {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	return invalid("", "the request body is not valid JSON for this endpoint: %v", err)
}

// turnError maps the error of a failed turn. Server-side failures get a
// generic message (the details go to the log): no error a client sees
// holds a base URL, a path or a provider's words about the server's key.
func turnError(ctx context.Context, err error) *apiError {
	if errors.Is(context.Cause(ctx), ErrDraining) {
		return draining()
	}
	if ctx.Err() == context.DeadlineExceeded {
		return &apiError{Status: http.StatusGatewayTimeout, Type: typeServer, Code: "timeout", Message: "the turn took longer than the server allows"}
	}
	if errors.Is(err, context.Canceled) && llm.KindOf(err) != llm.KindCancelled {
		return &apiError{Status: 499, Type: typeInvalidRequest, Code: "cancelled", Message: "the request was cancelled"}
	}
	if errors.Is(err, llm.ErrBudgetExceeded) {
		return &apiError{Status: http.StatusTooManyRequests, Type: typeQuota, Code: "budget_exceeded", Message: err.Error()}
	}
	var be *middleware.BlockedError
	if errors.As(err, &be) {
		return &apiError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "blocked", Message: be.Error()}
	}
	// A guardrail's tripwire is the request's fault, like a hook's block;
	// a guardrail that failed is the server's (the generic error below).
	var ge *middleware.GuardrailError
	if errors.As(err, &ge) && ge.Tripped {
		return &apiError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "blocked", Message: ge.Error()}
	}
	var le *llm.Error
	if !errors.As(err, &le) {
		return &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "internal_error", Message: "the turn failed on the server"}
	}
	switch le.Kind {
	case llm.KindRateLimited:
		return &apiError{Status: http.StatusTooManyRequests, Type: typeRateLimit, Code: "rate_limit_exceeded",
			Message: "the model provider is rate limiting this server; retry later", RetryAfter: le.RetryAfter}
	case llm.KindOverloaded:
		return &apiError{Status: http.StatusServiceUnavailable, Type: typeServer, Code: "overloaded",
			Message: "the model provider is overloaded; retry later", RetryAfter: le.RetryAfter}
	case llm.KindContextLength:
		return &apiError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "context_length_exceeded",
			Message: "the conversation does not fit the model's context window"}
	case llm.KindInvalidRequest:
		return &apiError{Status: http.StatusBadRequest, Type: typeInvalidRequest, Code: "invalid_request",
			Message: "the model provider rejected the request: " + le.Message}
	case llm.KindCancelled:
		return &apiError{Status: 499, Type: typeInvalidRequest, Code: "cancelled", Message: "the request was cancelled"}
	case llm.KindAuth:
		return &apiError{Status: http.StatusBadGateway, Type: typeServer, Code: "upstream_auth",
			Message: "the model provider refused the server's credentials"}
	}
	return &apiError{Status: http.StatusBadGateway, Type: typeServer, Code: "upstream_error",
		Message: "the model provider failed (" + le.Kind.String() + ")"}
}
