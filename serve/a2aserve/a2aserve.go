package a2aserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
)

// ProtocolVersion is the A2A protocol version the agent cards declare: the
// version a2a-go v0.3.3 implements.
const ProtocolVersion = "0.3.0"

// WellKnownCardPath is where a server publishes its (default) agent card;
// each agent's card is at "/a2a/{agent}" followed by this path.
const WellKnownCardPath = a2asrv.WellKnownAgentCardPath

// DefaultMaxBodyBytes is the largest JSON-RPC request body the handler
// reads when Options.MaxBodyBytes is zero (file parts travel inline, in
// base64).
const DefaultMaxBodyBytes = 16 << 20

// DefaultMaxTasks is the most tasks the in-memory task store keeps when
// Options.MaxTasks is zero.
const DefaultMaxTasks = 10000

// Options configure the A2A handler. The zero value works: cards carry URLs
// derived from each request's Host, no security scheme, and slog.Default()
// logs.
type Options struct {
	// BaseURL is the server's public URL ("https://agents.example.com"),
	// written into the agent cards; the JSON-RPC endpoint of agent NAME is
	// BaseURL + "/a2a/NAME". Empty derives it from each card request:
	// "http" or "https" (when the request came over TLS) and its Host.
	// Set it when the server is behind a proxy.
	BaseURL string
	// BearerAuth declares, in every card, that calls need an
	// "Authorization: Bearer <token>" header (the security scheme
	// "bearer"). The handler itself checks nothing: the server's
	// authentication layer does, in front of it.
	BearerAuth bool
	// Version is the agents' version written into the cards; empty means
	// "1.0.0".
	Version string
	// MaxTasks bounds the in-memory task store: beyond it, the oldest
	// finished tasks are forgotten (tasks/get answers "task not found").
	// Tasks still running or waiting for input are never dropped. Zero
	// means DefaultMaxTasks.
	MaxTasks int
	// MaxBodyBytes bounds each JSON-RPC request body; a larger one fails
	// to parse. Zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// CancelWait is how long tasks/cancel waits for the cancelled turn to
	// end before answering; zero means 10 seconds.
	CancelWait time.Duration
	// Logger receives the handler's and the SDK's records; nil means
	// slog.Default().
	Logger *slog.Logger
	// PushAllowHosts are the webhook hosts ("127.0.0.1", "hooks.internal")
	// that push notifications may reach although they are, or resolve
	// to, private, loopback or link-local addresses, which are refused
	// otherwise (server-side request forgery).
	PushAllowHosts []string
	// Remote, when not nil, runs every task's turn in other processes
	// (agcore serve --temporal's workers) for the agents whose tasks are
	// kept in their store's records: the task is stored, its turn handed
	// over (Remote.StartTask), and every process follows it from the
	// store to its end, whichever process accepted it and whether it is
	// still alive. Agents whose store has no records run their turns in
	// this process.
	Remote Remote
}

// New returns the A2A handler for the agents of set. Calls of tools needing
// approval are decided through broker, which should be the Approver of every
// agent in set; nil means a broker of the handler's own (then no agent's
// approvals can reach it, and they are denied by the agents' nil Approver).
//
// The handler expects the paths unchanged (mount it for "/a2a/" and
// "/.well-known/agent-card.json", without stripping prefixes):
//
//	GET  /.well-known/agent-card.json            the default (first) agent's card
//	GET  /a2a/{agent}/.well-known/agent-card.json that agent's card
//	POST /a2a/{agent}                            JSON-RPC: message/send, message/stream,
//	                                             tasks/get, tasks/cancel, tasks/resubscribe
//
// The principal of each request (host.PrincipalFrom) owns the tasks it
// starts; see the package documentation.
func New(set *host.Set, broker *approval.Broker, opts Options) (http.Handler, error) {
	if set == nil {
		return nil, errors.New("a2aserve: no agent set")
	}
	if opts.BaseURL != "" {
		u, err := url.Parse(opts.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, errors.New("a2aserve: BaseURL must be an absolute http or https URL")
		}
		opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Version == "" {
		opts.Version = "1.0.0"
	}
	if opts.MaxTasks <= 0 {
		opts.MaxTasks = DefaultMaxTasks
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.CancelWait <= 0 {
		opts.CancelWait = 10 * time.Second
	}
	if broker == nil {
		broker = &approval.Broker{}
	}
	h := &handler{set: set, opts: opts, rpc: make(map[string]http.Handler), mux: http.NewServeMux()}
	policy := newPushPolicy(opts.PushAllowHosts)
	sender := newPushSender(policy, opts.Logger)
	for _, a := range set.All() {
		var store tasks = newTaskStore(opts.MaxTasks)
		pushes := &pushConfigs{policy: policy, agent: a.Name}
		agentSender := agentPush{pushSender: sender}
		if recs, ok := session.RecordsOf(a.Store); ok {
			// A change of a task's state reads its push configs from the
			// store again: one set through another process is used.
			rt := &recordTasks{recs: recs, agent: a.Name, changed: pushes.forget}
			store = rt
			pushes.recs, agentSender.recs = recs, recs
			if opts.Remote != nil {
				agentSender.remote = rt.knownRemote
			}
			if w, ok := opts.Remote.(RemoteWatcher); ok {
				rt.ended = newEndedCheck(w, a.Name, pushes, sender)
			}
		}
		exec := &executor{agent: a, broker: broker, tasks: store, log: opts.Logger.With("agent", a.Name), cancelWait: opts.CancelWait, runs: make(map[a2a.TaskID]*run),
			pushes: pushes, sender: agentSender, remote: opts.Remote, pushHosts: opts.PushAllowHosts}
		rh := a2asrv.NewHandler(exec,
			a2asrv.WithTaskStore(store),
			a2asrv.WithCallInterceptor(ownerCheck{store}),
			a2asrv.WithPushNotifications(pushes, agentSender),
			a2asrv.WithLogger(opts.Logger.With("agent", a.Name)),
		)
		h.rpc[a.Name] = a2asrv.NewJSONRPCHandler(retrying{RequestHandler: rh, exec: exec, store: store})
	}
	h.mux.HandleFunc("GET "+WellKnownCardPath, func(w http.ResponseWriter, r *http.Request) {
		h.serveCard(w, r, set.Default())
	})
	h.mux.HandleFunc("GET /a2a/{agent}"+WellKnownCardPath, func(w http.ResponseWriter, r *http.Request) {
		a, ok := set.Get(r.PathValue("agent"))
		if !ok {
			http.Error(w, "no such agent", http.StatusNotFound)
			return
		}
		h.serveCard(w, r, a)
	})
	h.mux.HandleFunc("POST /a2a/{agent}", func(w http.ResponseWriter, r *http.Request) {
		rpc, ok := h.rpc[r.PathValue("agent")]
		if !ok {
			http.Error(w, "no such agent", http.StatusNotFound)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
		if _, ok := w.(http.Flusher); !ok {
			// The SDK streams only to an http.Flusher; a middleware's
			// writer may flush only through Unwrap.
			w = flusher{w, http.NewResponseController(w)}
		}
		if id, ok := deleteCall(r); ok {
			// a2a-go v0.3.3 answers a successful
			// tasks/pushNotificationConfig/delete with no body at all; a
			// JSON-RPC call gets a response (result null).
			rw := &silentWriter{ResponseWriter: w}
			rpc.ServeHTTP(rw, r)
			if !rw.wrote {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":null}` + "\n"))
			}
			return
		}
		rpc.ServeHTTP(w, r)
	})
	return h, nil
}

// deleteCall reports whether r is a tasks/pushNotificationConfig/delete
// call, and its JSON-RPC id; r's body is read and put back.
func deleteCall(r *http.Request) (json.RawMessage, bool) {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil, false
	}
	var call struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &call) != nil || call.Method != "tasks/pushNotificationConfig/delete" || len(call.ID) == 0 {
		return nil, false
	}
	return call.ID, true
}

// silentWriter records whether anything was written.
type silentWriter struct {
	http.ResponseWriter
	wrote bool
}

func (w *silentWriter) WriteHeader(code int) { w.wrote = true; w.ResponseWriter.WriteHeader(code) }

func (w *silentWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

func (w *silentWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type handler struct {
	set  *host.Set
	opts Options
	rpc  map[string]http.Handler // by agent name, made once
	mux  *http.ServeMux
}

// Methods are the JSON-RPC methods of a2a-go v0.3.3's handler, which
// POST /a2a/{agent} dispatches: those the package offers (message/send,
// message/stream, tasks/get, tasks/cancel, tasks/resubscribe, the push
// notification configs) and the one it refuses (the extended card).
var Methods = []string{
	"message/send", "message/stream", "tasks/get", "tasks/cancel", "tasks/resubscribe",
	"tasks/pushNotificationConfig/get", "tasks/pushNotificationConfig/set",
	"tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete",
	"agent/getAuthenticatedExtendedCard",
}

// Routes returns the handler's routes in the form of net/http's ServeMux
// patterns, the JSON-RPC endpoint once per method ("POST /a2a/{agent}
// tasks/get"); package serve lists them with its own.
func (h *handler) Routes() []string {
	out := []string{"GET " + WellKnownCardPath, "GET /a2a/{agent}" + WellKnownCardPath}
	for _, m := range Methods {
		out = append(out, "POST /a2a/{agent} "+m)
	}
	return out
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// flusher makes a ResponseWriter whose Flush is reached through Unwrap
// an http.Flusher.
type flusher struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (f flusher) Flush() { _ = f.rc.Flush() }

func (f flusher) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// serveCard writes a's card, built for this request (its URL may depend on
// the request's Host).
func (h *handler) serveCard(w http.ResponseWriter, r *http.Request, a host.Agent) {
	a2asrv.NewStaticAgentCardHandler(h.card(r, a)).ServeHTTP(w, r)
}

// card returns the agent card of a.
func (h *handler) card(r *http.Request, a host.Agent) *a2a.AgentCard {
	base := h.opts.BaseURL
	if base == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	desc := a.Description
	if desc == "" {
		desc = "The agcore agent " + a.Name + "."
	}
	tags := []string{"agcore"}
	if a.Model != "" {
		tags = append(tags, a.Model)
	}
	card := &a2a.AgentCard{
		Name:               a.Name,
		Description:        desc,
		URL:                base + "/a2a/" + url.PathEscape(a.Name),
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    ProtocolVersion,
		Version:            h.opts.Version,
		Capabilities:       a2a.AgentCapabilities{Streaming: true, PushNotifications: true},
		DefaultInputModes:  []string{"text/plain", "application/json"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{
			ID:          a.Name,
			Name:        a.Name,
			Description: desc,
			Tags:        tags,
		}},
	}
	for _, t := range a.Agent.Tools() {
		card.Skills[0].Tags = append(card.Skills[0].Tags, "tool:"+t.Name())
	}
	if h.opts.BearerAuth {
		card.SecuritySchemes = a2a.NamedSecuritySchemes{
			"bearer": a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", Description: "a token the server was started with"},
		}
		card.Security = []a2a.SecurityRequirements{{"bearer": a2a.SecuritySchemeScopes{}}}
	}
	return card
}
