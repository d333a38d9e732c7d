package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
)

// principalEcho answers with the request's principal, standing in for the
// A2A and web handlers.
var principalEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p, _ := host.PrincipalFrom(r.Context())
	io.WriteString(w, "principal="+p)
})

func TestAuth(t *testing.T) {
	withTokens := serve.Options{Tokens: map[string]string{"alice": "secret-a", "bob": "secret-b"}, A2A: principalEcho, Web: principalEcho}
	tests := []struct {
		name   string
		opts   serve.Options
		method string
		path   string
		auth   string
		status int
		body   string // a substring of the body
	}{
		{"no tokens: local", serve.Options{}, "GET", "/v1/models", "", 200, `"owned_by":"agcore"`},
		{"no tokens: web api is local", serve.Options{Web: principalEcho}, "GET", "/api/x", "", 200, "principal=local"},
		{"missing token", withTokens, "GET", "/v1/models", "", 401, "invalid_api_key"},
		{"wrong token", withTokens, "GET", "/v1/models", "Bearer secret-c", 401, "invalid_api_key"},
		{"a prefix of a token", withTokens, "GET", "/v1/models", "Bearer secret-", 401, "invalid_api_key"},
		{"not bearer", withTokens, "GET", "/v1/models", "Basic c2VjcmV0LWE=", 401, "invalid_api_key"},
		{"good token", withTokens, "GET", "/v1/models", "Bearer secret-a", 200, `"id":"echo"`},
		{"lower-case scheme", withTokens, "GET", "/v1/models", "bearer secret-b", 200, `"id":"echo"`},
		{"a2a needs a token", withTokens, "POST", "/a2a/x", "", 401, "invalid_api_key"},
		{"a2a gets the principal", withTokens, "POST", "/a2a/x", "Bearer secret-b", 200, "principal=bob"},
		{"agent card is public", withTokens, "GET", "/.well-known/agent-card.json", "", 200, "principal="},
		{"an agent's card is public", withTokens, "GET", "/a2a/echo/.well-known/agent-card.json", "", 200, "principal="},
		{"a deeper card path is not", withTokens, "GET", "/a2a/echo/x/.well-known/agent-card.json", "", 401, "invalid_api_key"},
		{"web api needs a token", withTokens, "GET", "/api/sessions", "", 401, "invalid_api_key"},
		{"web api gets the principal", withTokens, "GET", "/api/sessions", "Bearer secret-a", 200, "principal=alice"},
		{"web assets are public", withTokens, "GET", "/app.js", "", 200, "principal="},
		{"healthz is public", withTokens, "GET", "/healthz", "", 200, "ok"},
		{"readyz is public", withTokens, "GET", "/readyz", "", 200, "ready"},
		{"unknown v1 path", withTokens, "GET", "/v1/nope", "Bearer secret-a", 404, "unknown_url"},
		{"no tokens: a rebound name is refused", serve.Options{}, "GET", "/v1/models HOST evil.example:8080", "", 403, "host_not_allowed"},
		{"no tokens: localhost is served", serve.Options{}, "GET", "/v1/models HOST localhost:8080", "", 200, `"id":"echo"`},
		{"no tokens: localhost without a port", serve.Options{}, "GET", "/v1/models HOST LocalHost", "", 200, `"id":"echo"`},
		{"no tokens: a .localhost name", serve.Options{}, "GET", "/v1/models HOST app.localhost:8080", "", 200, `"id":"echo"`},
		{"no tokens: IPv6 loopback", serve.Options{}, "GET", "/v1/models HOST [::1]:8080", "", 200, `"id":"echo"`},
		// Names that only start like a loopback name are someone's domain.
		{"no tokens: localhost.evil.example is refused", serve.Options{}, "GET", "/v1/models HOST localhost.evil.example", "", 403, "host_not_allowed"},
		{"no tokens: localhost.evil.example with a port is refused", serve.Options{}, "GET", "/v1/models HOST localhost.evil.example:8080", "", 403, "host_not_allowed"},
		{"no tokens: localhostevil.example is refused", serve.Options{}, "GET", "/v1/models HOST localhostevil.example", "", 403, "host_not_allowed"},
		{"no tokens: 127.0.0.1.evil.example is refused", serve.Options{}, "GET", "/v1/models HOST 127.0.0.1.evil.example:8080", "", 403, "host_not_allowed"},
		{"no tokens: a name ending in localhost is refused", serve.Options{}, "GET", "/v1/models HOST evillocalhost:8080", "", 403, "host_not_allowed"},
		{"tokens: any name is served", withTokens, "GET", "/v1/models HOST agents.example.com", "Bearer secret-a", 200, `"id":"echo"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.opts)
			var hdr []string
			if tt.auth != "" {
				hdr = append(hdr, "Authorization: "+tt.auth)
			}
			path, hostHeader, _ := strings.Cut(tt.path, " HOST ")
			if hostHeader != "" {
				hdr = append(hdr, "Host: "+hostHeader)
			}
			resp := e.do(tt.method, path, nil, hdr...)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.body) {
				t.Fatalf("%d %s; want %d with %q", resp.StatusCode, body, tt.status, tt.body)
			}
			if tt.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	a, err := agent.New(&model{}, agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "echo", Agent: a})
	if err != nil {
		t.Fatal(err)
	}
	for name, opts := range map[string]serve.Options{
		"no agents":      {},
		"empty token":    {Agents: set, Tokens: map[string]string{"a": ""}},
		"origin by path": {Agents: set, AllowedOrigins: []string{"https://x.example/app"}},
	} {
		if _, err := serve.New(opts); err == nil {
			t.Errorf("%s: New accepted %+v", name, opts)
		}
	}
}

func TestCORS(t *testing.T) {
	const allowed = "https://app.example.com"
	tests := []struct {
		name, method, origin string
		preflight            bool
		status               int
		acao                 string
	}{
		{"allowed preflight", "OPTIONS", allowed, true, 204, allowed},
		{"allowed post", "POST", allowed, false, 200, allowed},
		{"other origin post is refused", "POST", "https://evil.example", false, 403, ""},
		{"other origin preflight is refused", "OPTIONS", "https://evil.example", true, 403, ""},
		{"other origin get gets no cors headers", "GET", "https://evil.example", false, 200, ""},
		{"null origin post is refused", "POST", "null", false, 403, ""},
		{"same origin post", "POST", "SAME", false, 200, ""},
		// An origin that only starts with the server's own is another site.
		{"an origin extending the server's own is refused", "POST", "SAME.evil.example", false, 403, ""},
		{"an origin extending the server's port is refused", "POST", "SAME0", false, 403, ""},
		{"an origin extending an allowed one is refused", "POST", allowed + ".evil.example", false, 403, ""},
		{"no origin (not a browser)", "POST", "", false, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, serve.Options{AllowedOrigins: []string{allowed}})
			origin := tt.origin
			if rest, ok := strings.CutPrefix(origin, "SAME"); ok {
				origin = e.srv.URL + rest
			}
			var hdr []string
			if origin != "" {
				hdr = append(hdr, "Origin: "+origin)
			}
			if tt.preflight {
				hdr = append(hdr, "Access-Control-Request-Method: POST", "Access-Control-Request-Headers: authorization, content-type, x-stainless-os")
			}
			var body any
			path := "/v1/models"
			if tt.method == "POST" {
				path, body = "/v1/chat/completions", map[string]any{"model": "echo", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
			}
			resp := e.do(tt.method, path, body, hdr...)
			resp.Body.Close()
			if resp.StatusCode != tt.status || resp.Header.Get("Access-Control-Allow-Origin") != tt.acao {
				t.Fatalf("status %d, allow-origin %q; want %d, %q", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"), tt.status, tt.acao)
			}
			if tt.preflight && tt.status == 204 && !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "x-stainless-os") {
				t.Errorf("allow-headers %q", resp.Header.Get("Access-Control-Allow-Headers"))
			}
		})
	}
}

func TestSizeLimit(t *testing.T) {
	e := newEnv(t, serve.Options{MaxRequestBytes: 1024})
	big := map[string]any{"model": "echo", "messages": []any{map[string]any{"role": "user", "content": strings.Repeat("x", 2048)}}}
	resp := e.do("POST", "/v1/chat/completions", big)
	if code, _ := errCode(t, resp); resp.StatusCode != 413 || code != "request_too_large" {
		t.Fatalf("declared length: %d %s", resp.StatusCode, code)
	}
	// Without a Content-Length (chunked), the limit is met while decoding.
	data, _ := json.Marshal(big)
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/responses", io.MultiReader(bytes.NewReader(data)))
	req.ContentLength = -1
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := errCode(t, resp); resp.StatusCode != 413 || code != "request_too_large" {
		t.Fatalf("chunked: %d %s", resp.StatusCode, code)
	}
	small := map[string]any{"model": "echo", "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	resp = e.do("POST", "/v1/chat/completions", small)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a small request: %d", resp.StatusCode)
	}
}

// failing is a model whose calls fail with err.
func failing(err error) *model {
	return &model{fn: func(context.Context, *llm.Request) iter.Seq2[llm.Event, error] {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}}
}

func TestErrors(t *testing.T) {
	chat := func(model string) map[string]any {
		return map[string]any{"model": model, "messages": []any{map[string]any{"role": "user", "content": "hi"}}}
	}
	tests := []struct {
		name   string
		model  llm.Model
		body   any
		status int
		code   string
		typ    string
		header string // "Key: value" expected
	}{
		{"unknown model", nil, chat("gpt-9"), 404, "model_not_found", "invalid_request_error", ""},
		{"bad json", nil, `{"model":`, 400, "", "invalid_request_error", ""},
		{"no messages", nil, map[string]any{"model": "echo"}, 400, "", "invalid_request_error", ""},
		{"bad role", nil, map[string]any{"model": "echo", "messages": []any{map[string]any{"role": "wizard", "content": "x"}}}, 400, "", "invalid_request_error", ""},
		{"n=2", nil, map[string]any{"model": "echo", "n": 2, "messages": []any{map[string]any{"role": "user", "content": "x"}}}, 400, "", "invalid_request_error", ""},
		{"rate limited", failing(&llm.Error{Kind: llm.KindRateLimited, StatusCode: 429, RetryAfter: 2 * time.Second}), chat("m"), 429, "rate_limit_exceeded", "rate_limit_error", "Retry-After: 2"},
		{"overloaded", failing(&llm.Error{Kind: llm.KindOverloaded, StatusCode: 529}), chat("m"), 503, "overloaded", "server_error", ""},
		{"server", failing(&llm.Error{Kind: llm.KindServer, StatusCode: 500, Message: "boom at http://10.0.0.1"}), chat("m"), 502, "upstream_error", "server_error", ""},
		{"provider refused our key", failing(&llm.Error{Kind: llm.KindAuth, StatusCode: 401, Message: "bad key sk-...abcd"}), chat("m"), 502, "upstream_auth", "server_error", ""},
		{"context length", failing(&llm.Error{Kind: llm.KindContextLength, StatusCode: 400}), chat("m"), 400, "context_length_exceeded", "invalid_request_error", ""},
		{"other failure", failing(errors.New("disk on fire at /srv/secret")), chat("m"), 500, "internal_error", "server_error", ""},
		{"guardrail tripwire", failing(&middleware.GuardrailError{Guardrail: "on-topic", Stage: middleware.StageInput, Tripped: true, Reason: "off topic"}), chat("m"), 400, "blocked", "invalid_request_error", ""},
		{"guardrail failed", failing(&middleware.GuardrailError{Guardrail: "on-topic", Stage: middleware.StageInput, Err: errors.New("classifier at /srv/secret down")}), chat("m"), 500, "internal_error", "server_error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs := []agentSpec{{name: "echo", model: &model{}}}
			if tt.model != nil {
				specs = append(specs, agentSpec{name: "m", model: tt.model})
			}
			e := newEnv(t, serve.Options{}, specs...)
			resp := e.do("POST", "/v1/chat/completions", tt.body)
			if tt.header != "" {
				k, v, _ := strings.Cut(tt.header, ": ")
				if resp.Header.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, resp.Header.Get(k), v)
				}
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body = io.NopCloser(bytes.NewReader(raw))
			code, typ := errCode(t, resp)
			if resp.StatusCode != tt.status || code != tt.code || typ != tt.typ {
				t.Fatalf("%d %s %s; want %d %s %s", resp.StatusCode, typ, code, tt.status, tt.typ, tt.code)
			}
			for _, leak := range []string{"10.0.0.1", "sk-", "/srv/secret"} {
				if strings.Contains(string(raw), leak) {
					t.Errorf("the error shows %q: %s", leak, raw)
				}
			}
			// The same failure streamed: an error object in the stream, or
			// an error response before it starts.
			if m, ok := tt.body.(map[string]any); ok && tt.model != nil {
				m["stream"] = true
				resp := e.do("POST", "/v1/chat/completions", m)
				if resp.StatusCode != tt.status {
					t.Errorf("streamed: status %d, want %d", resp.StatusCode, tt.status)
				}
				resp.Body.Close()
			}
		})
	}
}

func TestAccessLog(t *testing.T) {
	var buf syncBuffer
	e := newEnv(t, serve.Options{Tokens: map[string]string{"alice": "secret-a"}, Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	resp := e.do("POST", "/v1/chat/completions", map[string]any{"model": "echo", "messages": []any{map[string]any{"role": "user", "content": "private words"}}}, "Authorization: Bearer secret-a")
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	e.do("GET", "/v1/models", nil, "Authorization: Bearer wrong").Body.Close()
	e.srv.Close() // waits for the handlers, so both records are written
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log:\n%s", buf.String())
	}
	var rec map[string]any
	json.Unmarshal([]byte(lines[0]), &rec)
	if rec["method"] != "POST" || rec["path"] != "/v1/chat/completions" || rec["status"] != 200.0 || rec["principal"] != "alice" || rec["bytes"].(float64) == 0 || rec["duration"] == nil {
		t.Errorf("record %v", rec)
	}
	json.Unmarshal([]byte(lines[1]), &rec)
	if rec["status"] != 401.0 || rec["principal"] != "" {
		t.Errorf("record %v", rec)
	}
	for _, s := range []string{"secret-a", "wrong", "private words"} {
		if strings.Contains(buf.String(), s) {
			t.Errorf("the log holds %q", s)
		}
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
