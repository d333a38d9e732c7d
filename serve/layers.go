package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
)

// A Layer is one cross-cutting step of a server, wrapped around the
// handler it protects: the access log, panic recovery, the loopback
// check, CORS, authentication, the body limit. A Handler is its protocols
// mounted on a ServeMux (Handler.Mux) inside its layers (Handler.Layers);
// a program composing its own server takes the layers it wants, in the
// order it wants, with Chain.
type Layer = func(http.Handler) http.Handler

// Chain returns h inside layers, the first outermost: Chain(h, a, b)
// serves a request with a(b(h)).
func Chain(h http.Handler, layers ...Layer) http.Handler {
	for i := len(layers) - 1; i >= 0; i-- {
		h = layers[i](h)
	}
	return h
}

// AccessLog is the layer that logs one record per request to logger, at
// its end: method, path, status, bytes, duration and principal (the one
// Authenticate resolved inside it, "" for a public path); never headers or
// bodies. A nil logger logs nothing.
func AccessLog(logger *slog.Logger) Layer {
	return func(next http.Handler) http.Handler {
		if logger == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			lw := &logWriter{ResponseWriter: w, status: http.StatusOK}
			defer func() {
				logger.LogAttrs(r.Context(), slog.LevelInfo, "http request",
					slog.String("method", r.Method), slog.String("path", r.URL.Path),
					slog.Int("status", lw.status), slog.Int64("bytes", lw.bytes),
					slog.Duration("duration", time.Since(start)), slog.String("principal", lw.principal))
			}()
			next.ServeHTTP(lw, r)
		})
	}
}

// Recover is the layer that turns a panic of the handler inside it into
// a logged error (with its stack) and, when nothing of the response was
// sent yet, an HTTP 500 with an OpenAI error object; a response already
// under way is cut (http.ErrAbortHandler), as net/http does. The panic
// http.ErrAbortHandler passes through. A nil logger logs nothing.
func Recover(logger *slog.Logger) Layer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				logger.LogAttrs(r.Context(), slog.LevelError, "serve: a handler panicked",
					slog.String("method", r.Method), slog.String("path", r.URL.Path),
					slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
				if lw := findLogWriter(w); lw != nil && lw.wroteHeader {
					panic(http.ErrAbortHandler)
				}
				writeError(w, &apiError{Status: http.StatusInternalServerError, Type: typeServer, Code: "internal_error",
					Message: "the server failed to answer the request"})
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// LoopbackOnly is the layer of a server without tokens: it answers only
// requests addressed to localhost or a loopback address (their Host
// header), so that a page whose domain was rebound to 127.0.0.1 (DNS
// rebinding), which sends its own name, is refused (403).
func LoopbackOnly() Layer {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !loopbackHost(r.Host) {
				writeError(w, &apiError{Status: http.StatusForbidden, Type: typeInvalidRequest, Code: "host_not_allowed",
					Message: "a server without tokens answers only requests to localhost or a loopback address"})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// CORS is the layer that gives the browser origins allowed
// ("https://app.example.com") CORS access and answers their preflight
// requests (204), and refuses (403) a state-changing request whose Origin
// is neither one of them nor the server's own. A GET from another origin
// goes on without CORS headers: the browser keeps the answer from its
// page. It fails on an origin not written scheme://host[:port].
func CORS(allowed []string) (Layer, error) {
	origins := make(map[string]bool, len(allowed))
	for _, o := range allowed {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			return nil, fmt.Errorf("serve: allowed origin %q: want scheme://host[:port]", o)
		}
		origins[strings.ToLower(o)] = true
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !checkOrigin(origins, w, r) {
				return
			}
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				w.WriteHeader(http.StatusNoContent) // a preflight the origin check allowed
				return
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// Auth configures the Authenticate layer.
type Auth struct {
	// Tokens maps a principal's name to its bearer token: a request to a
	// protected path must present one as "Authorization: Bearer TOKEN",
	// and the name becomes its principal. Empty means no authentication:
	// every request's principal is LocalPrincipal (which is only safe
	// behind LoopbackOnly).
	Tokens map[string]string
	// Protected reports whether a path needs a token; nil means
	// Protected, the paths of agcore's protocols.
	Protected func(path string) bool
	// Scopes add to an authenticated request's context what its
	// principal's requests carry (QuotaScope: the principal's spending
	// limit), each given the principal Authenticate resolved, in order.
	Scopes []Scope
}

// A Scope returns ctx, a request of principal's, carrying what that
// principal's requests carry; see Auth.Scopes.
type Scope func(ctx context.Context, principal string) context.Context

// QuotaScope is the Scope that limits what each principal's turns spend
// (budget.WithQuota: every agent run of the request keeps it). q.Records
// must be set.
func QuotaScope(q Quota) Scope {
	return func(ctx context.Context, principal string) context.Context {
		return budget.WithQuota(ctx, &budget.StoreQuota{Records: q.Records, Principal: principal, Total: q.Total, PerDay: q.PerDay})
	}
}

// Authenticate returns the layer that resolves a request's principal,
// once: for a protected path, from its bearer token (401 without a valid
// one; every token is compared, in constant time), then puts it in the
// request's context (host.WithPrincipal, where the protocols and the
// mounted handlers find it), applies the scopes and tells the access log.
// A public path goes on with no principal. It fails on a token without a
// name or secret, or whose name is LocalPrincipal or not at most 64 of
// A-Z a-z 0-9 _ -.
func Authenticate(a Auth) (Layer, error) {
	tokens, err := hashTokens(a.Tokens)
	if err != nil {
		return nil, err
	}
	protected := a.Protected
	if protected == nil {
		protected = Protected
	}
	scopes := a.Scopes
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !protected(r.URL.Path) {
				next.ServeHTTP(w, r)
				return
			}
			p, ok := authenticate(tokens, r)
			if !ok {
				w.Header().Set("WWW-Authenticate", `Bearer realm="agcore"`)
				writeError(w, &apiError{Status: http.StatusUnauthorized, Type: typeInvalidRequest, Code: "invalid_api_key",
					Message: "missing or invalid bearer token (Authorization: Bearer TOKEN)"})
				return
			}
			if lw := findLogWriter(w); lw != nil {
				lw.principal = p
			}
			ctx := host.WithPrincipal(r.Context(), p)
			for _, s := range scopes {
				ctx = s(ctx, p)
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}, nil
}

// LimitBody is the layer that bounds request bodies to maxBytes (0 means
// DefaultMaxRequestBytes): a body declared larger is refused at once
// (413), one that turns out larger fails its reads.
func LimitBody(maxBytes int64) Layer {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxRequestBytes
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body != nil && r.Body != http.NoBody {
				if r.ContentLength > maxBytes {
					writeError(w, tooLarge(maxBytes))
					return
				}
				r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Protected reports whether a path of agcore's protocols needs a token:
// /v1/, /agui/, /a2a/ and the web page's /api/. Agent cards are public,
// the server's (/.well-known/agent-card.json) and each agent's
// (/a2a/NAME/.well-known/agent-card.json), as are /healthz, /readyz and
// the web page's assets.
func Protected(path string) bool {
	if strings.HasPrefix(path, "/a2a/") && strings.HasSuffix(path, "/.well-known/agent-card.json") && strings.Count(path, "/") == 4 {
		return false
	}
	return strings.HasPrefix(path, "/v1/") || path == "/v1" || strings.HasPrefix(path, "/agui/") ||
		strings.HasPrefix(path, "/a2a/") || path == "/a2a" ||
		strings.HasPrefix(path, "/api/") || path == "/api"
}

type token struct {
	name string
	sum  [32]byte
}

// hashTokens checks the tokens and keeps their hashes.
func hashTokens(named map[string]string) ([]token, error) {
	var out []token
	for name, secret := range named {
		switch {
		case name == "" || secret == "":
			return nil, fmt.Errorf("serve: token %q: a token needs a name and a non-empty secret", name)
		case name == LocalPrincipal:
			return nil, fmt.Errorf("serve: token name %q is reserved for servers without tokens", name)
		case session.ValidateID(name) != nil || strings.Contains(name, ".") || len(name) > 64:
			// The name owns its sessions and prefixes the ids of its named
			// conversations (NAME.conversation, host.SessionName).
			return nil, fmt.Errorf("serve: token name %q: use at most 64 of A-Z a-z 0-9 _ -", name)
		}
		out = append(out, token{name: name, sum: sha256.Sum256([]byte(secret))})
	}
	return out, nil
}

// authenticate returns the principal of r's bearer token. Every token is
// compared, in constant time, whichever matches.
func authenticate(tokens []token, r *http.Request) (string, bool) {
	if len(tokens) == 0 {
		return LocalPrincipal, true
	}
	auth := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(auth) <= len(prefix) || !strings.EqualFold(auth[:len(prefix)], prefix) {
		return "", false
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(auth[len(prefix):])))
	found := ""
	for _, t := range tokens {
		if subtle.ConstantTimeCompare(sum[:], t.sum[:]) == 1 {
			found = t.name
		}
	}
	return found, found != ""
}

// checkOrigin applies CORS: an allowed origin gets its headers, a
// state-changing request from any other origin but the server's own is
// refused. It reports whether to go on.
func checkOrigin(origins map[string]bool, w http.ResponseWriter, r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	w.Header().Add("Vary", "Origin")
	if origins[strings.ToLower(origin)] {
		hd := w.Header()
		hd.Set("Access-Control-Allow-Origin", origin)
		if r.Method == http.MethodOptions {
			hd.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
			allow := "Authorization, Content-Type"
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				allow = req
			}
			hd.Set("Access-Control-Allow-Headers", allow)
			hd.Set("Access-Control-Max-Age", "600")
		}
		return true
	}
	if sameOrigin(origin, r) {
		return true
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return true // no CORS headers: the browser keeps the answer from the page
	}
	writeError(w, &apiError{Status: http.StatusForbidden, Type: typeInvalidRequest, Code: "origin_not_allowed",
		Message: "requests from this origin are not allowed"})
	return false
}

// loopbackHost reports whether a Host header names this machine: localhost
// or a loopback address, with or without a port.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sameOrigin reports whether origin is the host the request was sent to.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// logWriter records a response's status, size and principal for the
// access log.
type logWriter struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
	principal   string // set by Authenticate
}

// findLogWriter returns the access log's writer under w (through the
// writers that wrap it and Unwrap), or nil.
func findLogWriter(w http.ResponseWriter) *logWriter {
	for {
		switch x := w.(type) {
		case *logWriter:
			return x
		case interface{ Unwrap() http.ResponseWriter }:
			w = x.Unwrap()
		default:
			return nil
		}
	}
}

func (w *logWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.wroteHeader = true
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Flush sends what was written so far (server-sent events).
func (w *logWriter) Flush() {
	w.wroteHeader = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
