package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
)

// TestChainOrder: the first layer given is the outermost.
func TestChainOrder(t *testing.T) {
	t.Parallel()
	var seen []string
	layer := func(name string) serve.Layer {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen = append(seen, name)
				next.ServeHTTP(w, r)
			})
		}
	}
	h := serve.Chain(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { seen = append(seen, "handler") }),
		layer("a"), layer("b"), layer("c"))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if want := []string{"a", "b", "c", "handler"}; !slices.Equal(seen, want) {
		t.Errorf("served in the order %v, want %v", seen, want)
	}
}

// TestAuthenticateResolvesThePrincipalOnce: a protected path needs a
// token; its principal reaches the handler, each scope (once, given the
// principal) and the access log; a public path goes on without one.
func TestAuthenticateResolvesThePrincipalOnce(t *testing.T) {
	t.Parallel()
	type scopeKey struct{}
	for _, tc := range []struct {
		name, path, header string
		status             int
		principal          string // the handler's and the access log's
		scoped             int    // scope calls
	}{
		{name: "token", path: "/v1/models", header: "Bearer alice-secret", status: 200, principal: "alice", scoped: 1},
		{name: "other token", path: "/api/sessions", header: "bearer bob-secret", status: 200, principal: "bob", scoped: 1},
		{name: "no token", path: "/v1/models", status: 401},
		{name: "wrong token", path: "/a2a/helper", header: "Bearer nope", status: 401},
		{name: "public path", path: "/healthz", status: 200},
		{name: "public agent card", path: "/a2a/helper/.well-known/agent-card.json", status: 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scoped := 0
			auth, err := serve.Authenticate(serve.Auth{
				Tokens: map[string]string{"alice": "alice-secret", "bob": "bob-secret"},
				Scopes: []serve.Scope{func(ctx context.Context, p string) context.Context {
					scoped++
					return context.WithValue(ctx, scopeKey{}, "scope of "+p)
				}},
			})
			if err != nil {
				t.Fatal(err)
			}
			var logged bytes.Buffer
			got, gotScope := "", ""
			h := serve.Chain(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, _ = host.PrincipalFrom(r.Context())
				gotScope, _ = r.Context().Value(scopeKey{}).(string)
			}), serve.AccessLog(slog.New(slog.NewJSONHandler(&logged, nil))), auth)
			req := httptest.NewRequest("GET", "http://127.0.0.1"+tc.path, nil)
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d", w.Code, tc.status)
			}
			if tc.status == 401 && w.Header().Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
			if got != tc.principal || scoped != tc.scoped || (tc.scoped > 0 && gotScope != "scope of "+tc.principal) {
				t.Errorf("principal %q, %d scope calls (%q); want %q, %d", got, scoped, gotScope, tc.principal, tc.scoped)
			}
			var rec struct {
				Principal string
				Status    int
			}
			if err := json.Unmarshal(logged.Bytes(), &rec); err != nil || rec.Principal != tc.principal || rec.Status != tc.status {
				t.Errorf("access log %q (%v), want principal %q, status %d", logged.String(), err, tc.principal, tc.status)
			}
		})
	}
}

func TestAuthenticateRefusesBadTokens(t *testing.T) {
	t.Parallel()
	for name, tokens := range map[string]map[string]string{
		"empty secret":  {"alice": ""},
		"empty name":    {"": "s"},
		"reserved name": {serve.LocalPrincipal: "s"},
		"dotted name":   {"a.b": "s"},
		"long name":     {strings.Repeat("a", 65): "s"},
	} {
		if _, err := serve.Authenticate(serve.Auth{Tokens: tokens}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := serve.CORS([]string{"app.example.com"}); err == nil {
		t.Error("CORS took an origin without a scheme")
	}
}

// TestRecover: a panic before the response began is answered 500 and
// logged; after it began, the response is cut (the client sees an
// error); http.ErrAbortHandler is not logged.
func TestRecover(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		status  int // 0: the client's read fails
		logged  bool
	}{
		{"before the response", func(http.ResponseWriter, *http.Request) { panic("boom") }, 500, true},
		{"during the response", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			panic("boom")
		}, 0, true},
		{"abort", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logged syncBuffer
			logger := slog.New(slog.NewTextHandler(&logged, nil))
			srv := httptest.NewUnstartedServer(serve.Chain(tc.handler, serve.AccessLog(logger), serve.Recover(logger)))
			srv.Config.ErrorLog = nil
			srv.Start()
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL)
			status := 0
			if err == nil {
				_, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if rerr == nil {
					status = resp.StatusCode
				}
			}
			if status != tc.status {
				t.Errorf("status %d (err %v), want %d", status, err, tc.status)
			}
			if got := strings.Contains(logged.String(), "panicked"); got != tc.logged {
				t.Errorf("logged a panic: %v, want %v (%s)", got, tc.logged, logged.String())
			}
		})
	}
}

// TestComposedAsServed: Chain(h.Mux(), h.Layers()...) serves as h does.
func TestComposedAsServed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, serve.Options{Tokens: map[string]string{"alice": "alice-secret"}})
	composed := serve.Chain(e.h.Mux(), e.h.Layers()...)
	for _, tc := range []struct{ method, path, token, body string }{
		{"GET", "/v1/models", "alice-secret", ""},
		{"GET", "/v1/models", "", ""},
		{"GET", "/healthz", "", ""},
		{"POST", "/v1/responses", "alice-secret", `{"model":"echo","input":"hi","store":false}`},
		{"DELETE", "/v1/nothing", "alice-secret", ""},
	} {
		var got [2]int
		for i, h := range []http.Handler{e.h, composed} {
			req := httptest.NewRequest(tc.method, "http://127.0.0.1"+tc.path, strings.NewReader(tc.body))
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			got[i] = w.Code
		}
		if got[0] != got[1] {
			t.Errorf("%s %s: the handler answered %d, its composition %d", tc.method, tc.path, got[0], got[1])
		}
	}
}
