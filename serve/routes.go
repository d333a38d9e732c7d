package serve

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/agcore/agcore/serve/host"
)

// Route is one route of a protocol: a net/http ServeMux pattern
// ("POST /v1/responses") and the handler that serves it.
type Route struct {
	Pattern string
	Handler http.Handler
}

// Protocol is one API a Handler speaks, as the routes that serve it.
// Each is served as it is in agcore serve, behind whatever layers the
// mux it is mounted on is given (see Layer); its handlers find the
// request's principal where Authenticate puts it.
type Protocol []Route

// Mount registers p's routes on mux. It panics, as ServeMux.Handle does,
// when a pattern conflicts with one mux already has.
func (p Protocol) Mount(mux *http.ServeMux) {
	for _, r := range p {
		mux.Handle(r.Pattern, r.Handler)
	}
}

// Health is GET /healthz (liveness: "ok") and GET /readyz (readiness:
// 503 once Drain began).
func (h *Handler) Health() Protocol {
	return Protocol{
		{"GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeText(w, http.StatusOK, "ok\n") })},
		{"GET /readyz", http.HandlerFunc(h.ready)},
	}
}

// Models is OpenAI's models endpoint: GET /v1/models and
// GET /v1/models/{model}, the agents offered.
func (h *Handler) Models() Protocol {
	return Protocol{
		{"GET /v1/models", http.HandlerFunc(h.models)},
		{"GET /v1/models/{model}", http.HandlerFunc(h.model)},
	}
}

// ChatCompletions is OpenAI's Chat Completions endpoint:
// POST /v1/chat/completions, a stateless turn.
func (h *Handler) ChatCompletions() Protocol {
	return Protocol{{"POST /v1/chat/completions", http.HandlerFunc(h.chat)}}
}

// Responses is OpenAI's Responses API: POST /v1/responses (stored turns,
// continued with previous_response_id or conversation; background
// responses), GET /v1/responses/{id} and POST /v1/responses/{id}/cancel.
func (h *Handler) Responses() Protocol {
	return Protocol{
		{"POST /v1/responses", asPrincipal(h.responses)},
		{"GET /v1/responses/{id}", asPrincipal(h.getResponse)},
		{"POST /v1/responses/{id}/cancel", http.HandlerFunc(h.cancelResponse)},
	}
}

// AGUI is the AG-UI protocol: POST /agui/{agent} (a run's events), and
// GET and POST /agui/{agent}/runs/{run} (a run again, its approvals) and
// POST /agui/{agent}/runs/{run}/cancel (agui_cancel.go).
func (h *Handler) AGUI() Protocol {
	return Protocol{
		{"POST /agui/{agent}", http.HandlerFunc(h.agui)},
		{"GET /agui/{agent}/runs/{run}", http.HandlerFunc(h.aguiRun)},
		{"POST /agui/{agent}/runs/{run}", http.HandlerFunc(h.aguiRun)},
		{"POST /agui/{agent}/runs/{run}/cancel", http.HandlerFunc(h.aguiCancel)},
	}
}

// Approvals is agcore's approvals extension: GET /v1/approvals (the
// calls waiting for the principal's decision) and
// POST /v1/approvals/{id} (a decision).
func (h *Handler) Approvals() Protocol {
	return Protocol{
		{"GET /v1/approvals", asPrincipal(h.listApprovals)},
		{"POST /v1/approvals/{id...}", asPrincipal(h.decideApproval)},
	}
}

// A2A is the Agent2Agent handler of Options.A2A at /a2a/ and the public
// /.well-known/agent-card.json; its POSTs are turns Drain waits for and
// stops (host.Stop). Nil without one.
func (h *Handler) A2A() Protocol {
	if h.opts.A2A == nil {
		return nil
	}
	turns := h.drained(h.opts.A2A, func(r *http.Request) bool { return r.Method == http.MethodPost }, h.beginStoppable)
	return Protocol{{"/a2a/", turns}, {"/.well-known/agent-card.json", h.opts.A2A}}
}

// Web is the web page of Options.Web at /; its POST /api/chat is a turn
// Drain waits for and cancels. Nil without one.
func (h *Handler) Web() Protocol {
	if h.opts.Web == nil {
		return nil
	}
	chat := func(r *http.Request) bool { return r.Method == http.MethodPost && r.URL.Path == "/api/chat" }
	return Protocol{{"/", h.drained(h.opts.Web, chat, h.beginTurn)}}
}

// unknownV1 answers the /v1/ paths no protocol serves.
func unknownV1() Protocol {
	return Protocol{{"/v1/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "unknown_url",
			Message: fmt.Sprintf("no endpoint %s %s", r.Method, r.URL.Path)})
	})}}
}

// protocols returns every protocol the handler serves, in the order of
// its routes.
func (h *Handler) protocols() []Protocol {
	return []Protocol{h.Health(), h.Models(), h.ChatCompletions(), h.Responses(), h.AGUI(), h.Approvals(), unknownV1(), h.A2A(), h.Web()}
}

// Mux returns a new ServeMux with every protocol of the handler mounted
// at its paths: what ServeHTTP serves inside Layers. A program adds its
// own routes to it (or mounts the protocols it wants on a mux of its
// own) and wraps it with Chain(mux, h.Layers()...).
func (h *Handler) Mux() *http.ServeMux {
	mux := http.NewServeMux()
	for _, p := range h.protocols() {
		p.Mount(mux)
	}
	return mux
}

// Layers returns the handler's layers, outermost first, as ServeHTTP
// applies them: AccessLog (Options.Logger), Recover, LoopbackOnly
// (without Options.Tokens), CORS (Options.AllowedOrigins), Authenticate
// (Options.Tokens, with the principal's quota and record keeping as its
// scopes), LimitBody (Options.MaxRequestBytes).
func (h *Handler) Layers() []Layer {
	return slices.Clone(h.layers)
}

// buildLayers makes the handler's layers from its options.
func (h *Handler) buildLayers() error {
	cors, err := CORS(h.opts.AllowedOrigins)
	if err != nil {
		return err
	}
	var scopes []Scope
	if q := h.opts.Quota; q != nil {
		scopes = append(scopes, QuotaScope(*q))
	}
	if h.opts.Records != nil {
		scopes = append(scopes, func(ctx context.Context, principal string) context.Context {
			return host.WithTurnHook(ctx, func(ctx context.Context, t host.Turn) (context.Context, func()) {
				return h.record(ctx, principal, t)
			})
		})
	}
	auth, err := Authenticate(Auth{Tokens: h.opts.Tokens, Scopes: scopes})
	if err != nil {
		return err
	}
	h.layers = []Layer{AccessLog(h.log), Recover(h.log)}
	if len(h.opts.Tokens) == 0 {
		h.layers = append(h.layers, LoopbackOnly())
	}
	h.layers = append(h.layers, cors, auth, LimitBody(h.opts.MaxRequestBytes))
	return nil
}

// asPrincipal serves a request with fn, given the request's principal,
// read once from where Authenticate put it.
func asPrincipal(fn func(w http.ResponseWriter, r *http.Request, principal string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := host.PrincipalFrom(r.Context())
		fn(w, r, p)
	})
}

// drained serves the requests of next that turn reports as turns as turns
// of the handler: registered with begin, so that Drain waits for them
// and stops them, and refused (503) once it began.
func (h *Handler) drained(next http.Handler, turn func(*http.Request) bool,
	begin func(http.ResponseWriter, *http.Request) (context.Context, func(), bool)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !turn(r) {
			next.ServeHTTP(w, r)
			return
		}
		ctx, end, ok := begin(w, r)
		if !ok {
			writeError(w, draining())
			return
		}
		defer end()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// routePatterns returns the patterns of the handler's own routes, in
// order (those of the A2A and web handlers are listed by Routes from
// the handlers themselves).
func (h *Handler) routePatterns() []string {
	var out []string
	for _, p := range h.protocols() {
		for _, r := range p {
			out = append(out, r.Pattern)
		}
	}
	return out
}
