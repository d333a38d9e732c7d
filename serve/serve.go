package serve

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/internal/ratelimit"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
)

// DefaultMaxRequestBytes is the largest request body accepted when
// Options.MaxRequestBytes is 0.
const DefaultMaxRequestBytes = 4 << 20

// DefaultFlushInterval is Options.FlushInterval's default: well under
// what a reader notices, long enough to send a model's burst of deltas in
// one write.
const DefaultFlushInterval = 2 * time.Millisecond

// DefaultDrainGrace is Options.DrainGrace's default.
const DefaultDrainGrace = 2 * time.Second

// LocalPrincipal is the principal of every request to a handler configured
// without tokens (which the CLI only binds to loopback); its sessions have
// the single-user owner "" (host.Owner).
const LocalPrincipal = host.LocalPrincipal

// ErrDraining is the cause of the turns Drain cancelled at its deadline,
// and of refusals of new turns once draining began.
var ErrDraining = errors.New("serve: the server is shutting down")

// Options configure a Handler.
type Options struct {
	// Agents are the agents offered as models; required.
	Agents *host.Set
	// Broker parks the calls of tools that need approval; it should be
	// every agent's Config.Approver. Nil means no /v1/approvals endpoints.
	Broker *approval.Broker
	// Tokens maps a principal's name to its bearer token. Requests under
	// the protected prefixes (/v1/, /a2a/, /api/) must present one as
	// "Authorization: Bearer TOKEN"; the name becomes the request's
	// principal (host.PrincipalFrom). Empty means no authentication: every
	// request's principal is LocalPrincipal, which is only safe on a
	// loopback address.
	Tokens map[string]string
	// AllowedOrigins are the browser origins ("https://app.example.com")
	// given CORS access. A state-changing request whose Origin is neither
	// one of them nor the server's own is refused (403).
	AllowedOrigins []string
	// MaxRequestBytes bounds request bodies (413 over it); 0 means
	// DefaultMaxRequestBytes.
	MaxRequestBytes int64
	// TurnTimeout, when positive, bounds each turn.
	TurnTimeout time.Duration
	// FlushInterval is the longest a streamed event waits to be sent:
	// events written sooner after the last flush are sent together, so a
	// burst of deltas costs one write. 0 means DefaultFlushInterval; a
	// negative value flushes every event at once.
	FlushInterval time.Duration
	// Logger receives one record per request (method, path, status, bytes,
	// duration, principal; never headers or bodies) and the errors of
	// failed turns. Nil logs nothing.
	Logger *slog.Logger
	// A2A serves the A2A endpoints, mounted at /a2a/ and at
	// /.well-known/agent-card.json (public). Nil serves neither.
	A2A http.Handler
	// Web serves the web page at / (its static assets public, its /api/
	// behind the authentication). Nil serves nothing there.
	Web http.Handler
	// DrainGrace is how long a turn that Drain cancelled has to send the
	// end of its response (the API's failure event, then the end of the
	// body): its connection's writes fail after that, so a client that
	// stopped reading cannot hold the server. It is also how long Shutdown
	// lets the responses in progress end before it closes their
	// connections. 0 means DefaultDrainGrace.
	DrainGrace time.Duration
	// Now stamps created times; nil means time.Now.
	Now func() time.Time
	// Quota, when not nil, limits what each principal's turns spend, on
	// every entry point (the /v1 endpoints, A2A, the web page).
	Quota *Quota
	// Records, when not nil, keeps a replayable record (package replay)
	// of every turn the server runs, on every entry point (the /v1
	// endpoints, A2A, the web page): one record per session of a
	// principal, appended turn after turn (the key "PRINCIPAL/SESSION";
	// replay.Dir names its file), and one per request for a turn without
	// a session (a chat completion: "PRINCIPAL/ID"). The turns of one
	// session are recorded one after the other, those of different
	// sessions side by side. Every agent must record through the run's
	// context: replay.ContextMiddleware in its Config.Middleware and
	// replay.ContextToolMiddleware in its Config.ToolMiddleware. A record
	// that cannot be opened is logged and its turn runs unrecorded.
	Records *replay.Dir
	// Runner starts the Responses turns created with "background": true;
	// nil means InProcess (a goroutine of this process).
	Runner Runner
	// MaxBackground bounds the background turns one principal may have
	// running at once, across the processes sharing the store (429
	// too_many_background_responses past it); 0 means
	// DefaultMaxBackground.
	MaxBackground int
	// EventLogMaxBytes bounds the events stored of one background turn
	// (package runlog; past it only the final event is stored); 0 means
	// DefaultEventLogMaxBytes.
	EventLogMaxBytes int64
	// EventLogRetention is how long a background turn's events, and a
	// failed or cancelled background response, are kept; 0 means
	// DefaultEventLogRetention.
	EventLogRetention time.Duration
	// RecordHeader returns the header of a new record of the named
	// agent's turns (its model, instructions, tools: what a replay needs
	// to rebuild it); nil means a header naming the agent only.
	RecordHeader func(agent string) replay.Header
}

// Quota is a server's per-principal spending limit: tokens and cost, in
// total and per UTC day. It is kept in a session store's records
// (budget.StoreQuota), so it holds across the replicas sharing the store
// and across restarts. A model call that could cross it is not sent (see
// package budget).
type Quota struct {
	Total, PerDay budget.Limits
	// Records keeps what each principal spent; nil means the records of
	// the default agent's store (New fails when it has none).
	Records session.Records
}

// Handler is agcore's HTTP server: OpenAI-compatible endpoints under /v1/,
// health checks, and the A2A and web handlers it is given, behind one
// authentication, CORS and size-limit layer. Build it with New; it is safe
// for concurrent use.
type Handler struct {
	opts       Options
	layers     []Layer      // Layers
	stack      http.Handler // Mux inside the layers: what ServeHTTP serves
	log        *slog.Logger
	now        func() time.Time
	started    int64 // the models' created time
	flushEvery time.Duration
	grace      time.Duration // Options.DrainGrace or its default

	mu       sync.Mutex
	draining bool
	turns    sync.WaitGroup
	cancels  map[*turnCancel]struct{}

	locks  sessionLocks    // Responses turns, one at a time per session
	recent recentResponses // for GET /v1/responses/{id}
	checks ratelimit.Due   // when remote turns were last asked about (remoteended.go)

	bgMu   sync.Mutex
	logs   map[session.Records]*runlog.Log // the event logs, one per store
	bgRuns map[string]*bgRun               // this process's background turns, by response id
}

type turnCancel struct {
	cancel context.CancelCauseFunc
	rc     *http.ResponseController
}

// New checks opts and returns the handler.
func New(opts Options) (*Handler, error) {
	if opts.Agents == nil {
		return nil, errors.New("serve: Options.Agents is nil")
	}
	h := &Handler{
		opts:    opts,
		log:     opts.Logger,
		now:     opts.Now,
		cancels: make(map[*turnCancel]struct{}),
		checks:  ratelimit.Due{Every: RemoteCheckAfter},
	}
	switch h.flushEvery = opts.FlushInterval; {
	case h.flushEvery == 0:
		h.flushEvery = DefaultFlushInterval
	case h.flushEvery < 0:
		h.flushEvery = 0
	}
	if h.grace = opts.DrainGrace; h.grace <= 0 {
		h.grace = DefaultDrainGrace
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	if q := opts.Quota; q != nil && q.Records == nil {
		recs, ok := session.RecordsOf(opts.Agents.Default().Store)
		if !ok || opts.Agents.Default().Store == nil {
			return nil, errors.New("serve: Options.Quota needs a store with records to keep what principals spent")
		}
		quota := *q
		quota.Records = recs
		h.opts.Quota = &quota
	}
	if err := h.buildLayers(); err != nil {
		return nil, err
	}
	h.started = h.now().Unix()
	h.stack = Chain(h.Mux(), h.layers...)
	return h, nil
}

// Routes returns the route patterns the handler serves (net/http's
// ServeMux patterns, "GET /v1/models"), in order, followed by those of the
// A2A and web handlers it mounts when they list theirs with a Routes
// method of this signature (a2aserve's and web's do). It documents the
// server, and lets a test check that every route is covered.
func (h *Handler) Routes() []string {
	out := h.routePatterns()
	for _, sub := range []http.Handler{h.opts.A2A, h.opts.Web} {
		if r, ok := sub.(interface{ Routes() []string }); ok {
			out = append(out, r.Routes()...)
		}
	}
	return out
}

// ServeHTTP serves a request: Mux inside Layers (the access log, panic
// recovery, the loopback check without tokens, CORS and the origin check,
// authentication of the protected paths, the body limit), then the
// route.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.stack.ServeHTTP(w, r)
}

func (h *Handler) ready(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	draining := h.draining
	h.mu.Unlock()
	if draining {
		writeText(w, http.StatusServiceUnavailable, "draining\n")
		return
	}
	writeText(w, http.StatusOK, "ready\n")
}

// Drain starts the shutdown: /readyz answers 503 and new turns are
// refused (503), while turns in progress go on until they end or ctx
// does. Then they are cancelled (with the cause ErrDraining), which
// stores nothing of them; each sends its failure event and the end of its
// response, and its connection's writes fail Options.DrainGrace later (a
// client that stopped reading gets no more). Drain returns nil when every
// turn ended before ctx did, else ctx's error once the cancelled turns
// have returned or the grace has passed, whichever is first. Call it
// before http.Server.Shutdown, whose wait for active connections would
// otherwise include every open stream; Handler.Shutdown does both.
func (h *Handler) Drain(ctx context.Context) error {
	h.mu.Lock()
	h.draining = true
	h.mu.Unlock()
	done := make(chan struct{})
	go func() { h.turns.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	cut := time.Now().Add(h.grace)
	h.mu.Lock()
	for c := range h.cancels {
		c.cancel(ErrDraining)
		// A handler blocked writing to a client that does not read never
		// sees the cancellation: its write fails at the deadline.
		if c.rc != nil { // a background turn has no connection
			_ = c.rc.SetWriteDeadline(cut)
		}
	}
	h.mu.Unlock()
	t := time.NewTimer(time.Until(cut))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		h.log.Warn("serve: turns still running after they were cancelled; their connections will be closed")
	}
	return ctx.Err()
}

// Shutdown stops srv, the server that serves h, in bounded time whatever
// its clients do: Drain(ctx), then srv.Shutdown, which closes the
// listeners and idle connections and waits up to Options.DrainGrace for
// the responses in progress to end (the streams of cancelled turns send
// their last events), then srv.Close for what is left. With a ctx that has
// a deadline, it returns at most twice the grace after it. It returns
// Drain's error: nil when no turn had to be cancelled.
func (h *Handler) Shutdown(ctx context.Context, srv *http.Server) error {
	err := h.Drain(ctx)
	// Not ctx: once it ended, srv.Shutdown would return at once, and Close
	// would cut the responses still sending their end.
	sctx, cancel := context.WithTimeout(context.Background(), h.grace)
	defer cancel()
	if srv.Shutdown(sctx) != nil {
		_ = srv.Close()
	}
	return err
}

// beginTurn registers a turn and returns its context (r's, bounded by the
// turn timeout and cancelled by Drain's deadline) and its end; ok is false
// when the server is draining. w is the turn's response, whose writes
// Drain bounds.
func (h *Handler) beginTurn(w http.ResponseWriter, r *http.Request) (ctx context.Context, end func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining {
		return nil, nil, false
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	var stop context.CancelFunc = func() {}
	if h.opts.TurnTimeout > 0 {
		ctx, stop = context.WithTimeout(ctx, h.opts.TurnTimeout)
	}
	c := &turnCancel{cancel: cancel, rc: http.NewResponseController(w)}
	return ctx, h.register(c, func() { stop(); cancel(nil) }), true
}

// beginStoppable is beginTurn for a handler that watches host.Stop: at
// Drain's deadline, the stop channel is closed and the request's context
// is left alone, so that the handler can still answer.
func (h *Handler) beginStoppable(w http.ResponseWriter, r *http.Request) (ctx context.Context, end func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.draining {
		return nil, nil, false
	}
	ch := make(chan struct{})
	var once sync.Once
	c := &turnCancel{cancel: func(error) { once.Do(func() { close(ch) }) }, rc: http.NewResponseController(w)}
	return host.WithStop(r.Context(), ch), h.register(c, func() {}), true
}

// register records c as a turn's until end, which it returns, is called;
// h.mu is held.
func (h *Handler) register(c *turnCancel, release func()) (end func()) {
	h.cancels[c] = struct{}{}
	h.turns.Add(1)
	return func() {
		release()
		h.mu.Lock()
		delete(h.cancels, c)
		h.mu.Unlock()
		h.turns.Done()
	}
}

func writeText(w http.ResponseWriter, status int, s string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(s))
}
