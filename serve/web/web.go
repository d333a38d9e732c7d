package web

import (
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/internal/ratelimit"
)

//go:embed static
var staticFiles embed.FS

// CSRFHeader is the header every state-changing API request must carry
// (with the value "1"). A cross-site HTML form cannot set it, and a
// cross-site script can set it only after a CORS preflight, which this
// handler never grants.
const CSRFHeader = "X-Agcore-CSRF"

// ContentSecurityPolicy is the policy sent with every response: nothing
// but this server's own scripts, styles and API; no inline script, no
// framing.
const ContentSecurityPolicy = "default-src 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'; form-action 'self'"

// Default limits used when the corresponding Options field is zero.
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultHeartbeat    = 15 * time.Second
	DefaultListLimit    = 50
)

// Options adjust the handler New returns. The zero value is ready to use.
type Options struct {
	// MaxBodyBytes limits the body of an API request; 0 means
	// DefaultMaxBodyBytes. A larger body is refused with 413.
	MaxBodyBytes int64
	// Heartbeat is how often an idle chat stream sends an SSE comment, so
	// proxies keep it open while a turn waits for an approval; 0 means
	// DefaultHeartbeat, a negative value sends none.
	Heartbeat time.Duration
	// ListLimit is the most sessions one GET /api/sessions returns; 0
	// means DefaultListLimit.
	ListLimit int
	// Origins are further origins ("https://agents.example.com") allowed
	// to make state-changing requests, besides the request's own: for a
	// server behind a proxy that rewrites the Host header.
	Origins []string
	// Remote, when not nil, runs the chat turns of agents whose store has
	// records (session.RecordsOf) in other processes (agcore serve
	// --temporal: a durable runner's workers), which outlive the one that
	// accepted them; a Remote that implements RemoteApprovals lists and
	// decides the calls they wait on. Nil: every turn runs in this
	// process.
	Remote Remote
	// Logger receives the errors the handler cannot report to the client
	// (a failed stream write); nil means slog.Default().
	Logger *slog.Logger
}

// handler serves the page and its API.
type handler struct {
	set    *host.Set
	broker *approval.Broker
	opts   Options
	log    *slog.Logger
	mux    *http.ServeMux
	routes []string      // the patterns of mux
	runs   runs          // the turns a page may reattach to
	checks ratelimit.Due // when this process last asked about each remote turn (remoteended.go)
}

// Routes returns the route patterns the handler serves, in the form of
// net/http's ServeMux ("GET /api/sessions"); package serve lists them
// with its own.
func (h *handler) Routes() []string { return slices.Clone(h.routes) }

// handle registers fn for pattern and records the pattern.
func (h *handler) handle(pattern string, fn http.HandlerFunc) {
	h.mux.HandleFunc(pattern, fn)
	h.routes = append(h.routes, pattern)
}

// New returns the handler serving the web page at "/" and its JSON API
// under "/api/" for the agents of set. Calls to tools that need approval
// are decided through broker, which should be the Approver of every agent
// in set; a nil broker leaves the approval routes empty. The handler reads
// the caller's principal with host.PrincipalFrom; it does no
// authentication itself (package serve mounts it behind its auth layer).
func New(set *host.Set, broker *approval.Broker, opts Options) (http.Handler, error) {
	if set == nil {
		return nil, errors.New("web: no agent set")
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Heartbeat == 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.ListLimit <= 0 {
		opts.ListLimit = DefaultListLimit
	}
	opts.Origins = slices.Clone(opts.Origins)
	for i, o := range opts.Origins {
		opts.Origins[i] = strings.TrimSuffix(strings.ToLower(o), "/")
	}
	h := &handler{set: set, broker: broker, opts: opts, log: opts.Logger, mux: http.NewServeMux(),
		checks: ratelimit.Due{Every: remoteCheckAfter}}
	if h.log == nil {
		h.log = slog.Default()
	}
	root, err := fs.Sub(staticFiles, "static")
	if err != nil {
		return nil, err
	}
	files := http.FileServerFS(root)
	h.handle("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path != "/" && strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		files.ServeHTTP(w, r)
	})
	h.handle("GET /api/agents", h.agents)
	h.handle("GET /api/sessions", h.sessions)
	h.handle("GET /api/sessions/{id}", h.getSession)
	h.handle("DELETE /api/sessions/{id}", h.deleteSession)
	h.handle("POST /api/sessions/{id}/fork", h.forkSession)
	h.handle("POST /api/chat", h.chat)
	h.handle("GET /api/runs", h.listRuns)
	h.handle("GET /api/sessions/{id}/run", h.followRun)
	h.handle("POST /api/sessions/{id}/cancel", h.cancelRun)
	h.handle("GET /api/approvals", h.approvals)
	h.handle("POST /api/approvals/{id...}", h.decide)
	h.handle("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API route: "+r.Method+" "+r.URL.Path)
	})
	return h, nil
}

// ServeHTTP sets the security headers, checks state-changing API requests
// and dispatches.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	if strings.HasPrefix(r.URL.Path, "/api/") {
		hd.Set("Cache-Control", "no-store")
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if status, msg := h.checkCSRF(r); status != 0 {
				writeError(w, status, msg)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
		}
	} else {
		hd.Set("Cache-Control", "no-cache")
	}
	h.mux.ServeHTTP(w, r)
}

// checkCSRF returns the status and message refusing a state-changing
// request, or 0 when it may proceed.
func (h *handler) checkCSRF(r *http.Request) (int, string) {
	if r.Header.Get(CSRFHeader) != "1" {
		return http.StatusForbidden, "missing " + CSRFHeader + " header"
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" {
		return http.StatusForbidden, "cross-site request refused"
	}
	if origin := r.Header.Get("Origin"); origin != "" && !h.sameOrigin(r, origin) {
		return http.StatusForbidden, "cross-origin request refused"
	}
	if r.Method == http.MethodPost || r.ContentLength > 0 {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			return http.StatusUnsupportedMediaType, "the body must be application/json"
		}
	}
	return 0, ""
}

// sameOrigin reports whether origin is the request's own origin or one of
// Options.Origins.
func (h *handler) sameOrigin(r *http.Request, origin string) bool {
	origin = strings.ToLower(origin)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if origin == scheme+"://"+strings.ToLower(r.Host) {
		return true
	}
	for _, o := range h.opts.Origins {
		if origin == o {
			return true
		}
	}
	return false
}

// errorBody is the JSON of every API error.
type errorBody struct {
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	var b errorBody
	b.Error.Message = msg
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v) // a failed write means the client is gone
}

// readJSON decodes the request body into v, answering the client itself
// when it cannot (and then returning false).
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, "the body is too large")
		} else {
			writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		}
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "invalid JSON body: more than one value")
		return false
	}
	return true
}
