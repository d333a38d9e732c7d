package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	redaction "github.com/agcore/agcore/internal/redact"
	"github.com/agcore/agcore/observe"
	"github.com/agcore/agcore/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientInfo is how agcore introduces itself to servers.
var clientInfo = &sdk.Implementation{Name: "agcore", Version: "0.1.0"}

// DefaultProtocolVersion is the MCP version agcore asks servers for when
// Server.ProtocolVersion is empty: 2025-11-25, the version of the servers
// in use. The newest (2026-07-28) starts a session with a stateless
// server/discover request, which servers of the 2025 versions are meant
// to refuse, and some instead fail the handshake that follows; a server of
// the newest version still speaks this one.
const DefaultProtocolVersion = "2025-11-25"

// waitDelay bounds how long, once a command has exited, its standard error
// is still read (a grandchild may hold it open).
const waitDelay = time.Second

// Client is a connection to one MCP server and the tools it offers. It is
// safe for concurrent use; its tools may be invoked concurrently.
type Client struct {
	name    string
	target  string
	session *sdk.ClientSession
	cmd     *exec.Cmd // nil unless the server is a command
	stderr  *tail
	secrets []string // parts of the URL and the headers that errors must not show

	timeout  time.Duration // Server.Timeout or DefaultTimeout
	approval bool          // Server.NeedsApproval
	onNotice func(Notice)  // Server.Notify
	noticeMu sync.Mutex    // one notice at a time
	calls    callTable

	// connected is closed once session is set or connecting failed, so
	// that a list_changed arriving during the start waits for it.
	connected     chan struct{}
	connectedOnce sync.Once

	toolsMu sync.RWMutex
	// relistWait is closed when the relists that list_changed
	// notifications started are over (nil when none is); Tools waits for
	// it, so that the next run sees the new list.
	relistMu   sync.Mutex
	relistN    int
	relistWait chan struct{}
	tools      []tool.Tool

	closeOnce sync.Once
	closeErr  error
}

// ConnectError is the error of a server that could not be started,
// initialized, or asked for its tools.
type ConnectError struct {
	Server string // the server's short name
	Target string // its command line or URL (without credentials or query)
	Stage  string // "start", "initialize" or "list tools"
	Stderr string // the end of the command's standard error, if any
	Err    error
}

// Error names the server, where it is, what failed and why.
func (e *ConnectError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "MCP server %q (%s) ", e.Server, e.Target)
	switch e.Stage {
	case "start":
		b.WriteString("failed to start")
	case "initialize":
		b.WriteString("failed to initialize")
	default:
		fmt.Fprintf(&b, "failed to %s", e.Stage)
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	if e.Stderr != "" {
		fmt.Fprintf(&b, "; its standard error ends with:\n%s", e.Stderr)
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *ConnectError) Unwrap() error { return e.Err }

// Connect starts (for a command) and initializes the server, and lists its
// tools. ctx bounds only this start: give it a deadline, since a server
// that never answers is otherwise waited for; once connected, the session
// lives until Close. Any failure is a *[ConnectError] naming the server,
// and leaves no process behind.
func Connect(ctx context.Context, s Server) (*Client, error) {
	return connect(ctx, s, shortName(&s))
}

func connect(ctx context.Context, s Server, name string) (*Client, error) {
	c := &Client{name: name, target: target(&s), secrets: append(urlSecrets(s.URL), headerSecrets(s.Headers)...),
		timeout: s.Timeout, approval: s.NeedsApproval, onNotice: s.Notify, connected: make(chan struct{})}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	fail := func(stage string, err error) (*Client, error) {
		c.connectedOnce.Do(func() { close(c.connected) })
		ce := &ConnectError{Server: c.name, Target: c.target, Stage: stage, Err: redact(err, c.secrets)}
		if c.cmd != nil {
			if c.cmd.Process != nil {
				killGroup(c.cmd.Process.Pid)
			}
			ce.Stderr = c.stderr.String()
		}
		return nil, ce
	}
	if err := s.check(); err != nil {
		return fail("start", err)
	}
	var transport sdk.Transport
	switch {
	case s.Transport != nil:
		transport = s.Transport
	case s.URL != "":
		// The standalone SSE stream stays on: it carries what the server
		// sends outside a response (its requests, such as elicitation,
		// and tools/list_changed); without it a server's request goes
		// unanswered and the call that caused it hangs.
		transport = &sdk.StreamableClientTransport{
			Endpoint:     s.URL,
			HTTPClient:   withHeaders(traced(s.HTTPClient), s.Headers),
			OAuthHandler: s.OAuth,
		}
	default:
		c.cmd = exec.Command(s.Command, s.Args...)
		c.cmd.Env = append(os.Environ(), s.Env...)
		c.cmd.Dir = s.Dir
		c.stderr = &tail{max: 4 << 10}
		c.cmd.Stderr = c.stderr
		if s.Stderr != nil {
			c.cmd.Stderr = &teeWriter{c.stderr, s.Stderr}
		}
		c.cmd.WaitDelay = waitDelay
		ownGroup(c.cmd)
		shutdown := s.ShutdownTimeout
		if shutdown <= 0 {
			shutdown = DefaultShutdownTimeout
		}
		transport = &sdk.CommandTransport{Command: c.cmd, TerminateDuration: shutdown}
	}

	cl := sdk.NewClient(clientInfo, c.clientOptions(&s))
	version := s.ProtocolVersion
	switch version {
	case "":
		version = DefaultProtocolVersion
	case "latest":
		version = "" // the SDK's newest
	}
	cs, err := cl.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		if c.cmd != nil && c.cmd.Process == nil {
			return fail("start", err)
		}
		return fail("initialize", err)
	}
	c.session = cs
	c.connectedOnce.Do(func() { close(c.connected) })
	if err := c.listTools(ctx); err != nil {
		_ = c.Close()
		return fail("list tools", err)
	}
	return c, nil
}

// listTools asks the server for its tools (all pages) and wraps them,
// within the server's timeout.
func (c *Client) listTools(ctx context.Context) error {
	if res := c.session.InitializeResult(); res != nil && res.Capabilities != nil && res.Capabilities.Tools == nil {
		return nil // the server offers no tools
	}
	lctx, cancel := context.WithTimeoutCause(ctx, c.timeout, &SilentError{Server: c.name, Method: "tools/list", After: c.timeout})
	defer cancel()
	var remote []*sdk.Tool
	for t, err := range c.session.Tools(lctx, nil) {
		if err != nil {
			if cause := context.Cause(lctx); ctx.Err() == nil && cause != nil {
				c.notify(Notice{Kind: NoticeSilent, Message: cause.Error()})
				return cause
			}
			return err
		}
		remote = append(remote, t)
	}
	tools := toolsOf(c, remote, c.approval)
	c.toolsMu.Lock()
	c.tools = tools
	c.toolsMu.Unlock()
	return nil
}

// current returns the server's current tool of that name, or nil.
func (c *Client) current(name string) *remoteTool {
	c.toolsMu.RLock()
	defer c.toolsMu.RUnlock()
	for _, t := range c.tools {
		if rt, ok := t.(*remoteTool); ok && rt.name == name {
			return rt
		}
	}
	return nil
}

// offers reports whether the server's current list has the tool (before
// any list, every tool counts as offered).
func (c *Client) offers(name string) bool {
	c.toolsMu.RLock()
	listed := c.tools != nil
	c.toolsMu.RUnlock()
	return !listed || c.current(name) != nil
}

// Name returns the server's short name, the SERVER in mcp__SERVER__TOOL.
func (c *Client) Name() string { return c.name }

// Tools returns the server's tools, in the server's order: as listed when
// it connected, or when it last said its list changed.
func (c *Client) Tools() []tool.Tool {
	c.relistMu.Lock()
	wait := c.relistWait
	c.relistMu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-time.After(c.timeout):
		}
	}
	c.toolsMu.RLock()
	defer c.toolsMu.RUnlock()
	return append([]tool.Tool(nil), c.tools...)
}

// Session returns the SDK session, for what this package does not cover
// (prompts, resources). Closing it is Close's job.
func (c *Client) Session() *sdk.ClientSession { return c.session }

// Close ends the session. For a command it closes the command's input,
// waits for it to exit (terminating it after the Server's
// ShutdownTimeout), and then kills whatever processes it started and left
// behind. Close is idempotent; calls of the client's tools fail after it.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		if c.session != nil {
			c.closeErr = c.session.Close()
		}
		if c.cmd != nil && c.cmd.Process != nil {
			killGroup(c.cmd.Process.Pid)
			// How the server ended (its exit status, or that it was gone
			// before a signal reached it) is no error of Close's.
			var exit *exec.ExitError
			if errors.As(c.closeErr, &exit) || errors.Is(c.closeErr, os.ErrProcessDone) {
				c.closeErr = nil
			}
		}
	})
	return c.closeErr
}

// traced returns a copy of hc (http.DefaultClient when nil) whose requests
// carry the trace context of their context's observe.Observer (W3C
// traceparent), so that a traced MCP server joins the caller's trace.
func traced(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	c.Transport = &traceTransport{next: hc.Transport}
	return &c
}

// traceTransport adds the trace context headers of each request's context.
type traceTransport struct{ next http.RoundTripper }

func (t *traceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	if o := observe.From(req.Context()); o != nil {
		// A RoundTripper must not modify the caller's request.
		req = req.Clone(req.Context())
		o.Inject(req.Context(), req.Header.Set)
	}
	return next.RoundTrip(req)
}

// withHeaders returns a copy of hc whose requests carry headers (nil
// headers return hc).
func withHeaders(hc *http.Client, headers map[string]string) *http.Client {
	if len(headers) == 0 {
		return hc
	}
	c := *hc
	c.Transport = &headerTransport{next: hc.Transport, headers: headers}
	return &c
}

// headerTransport sets fixed headers on each request.
type headerTransport struct {
	next    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	return next.RoundTrip(req)
}

// headerSecrets lists the header values errors must not show: each whole,
// and each word of it (the token of "Bearer TOKEN").
func headerSecrets(headers map[string]string) []string {
	var out []string
	for _, v := range headers {
		if len(v) >= 3 {
			out = append(out, v)
		}
		for _, w := range strings.Fields(v) {
			if len(w) >= 8 {
				out = append(out, w)
			}
		}
	}
	return out
}

// urlSecrets lists the parts of a URL that may be credentials: its user
// information and its query, whole and value by value.
func urlSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return nil
	}
	var out []string
	add := func(s string) {
		if len(s) >= 3 {
			out = append(out, s, url.QueryEscape(s), url.PathEscape(s))
		}
	}
	if u.User != nil {
		add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	add(u.RawQuery)
	for _, vs := range u.Query() {
		for _, v := range vs {
			add(v)
		}
	}
	return out
}

// redacted is an error whose message hides secrets.
type redacted struct {
	err     error
	secrets []string
}

func (e *redacted) Error() string {
	return redaction.Text(e.err.Error(), e.secrets)
}

func (e *redacted) Unwrap() error { return e.err }

// redact hides secrets in err's message.
func redact(err error, secrets []string) error {
	if err == nil || len(secrets) == 0 {
		return err
	}
	return &redacted{err: err, secrets: secrets}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "\uFFFD"))
}

// teeWriter writes to the tail and to the caller's writer, whose errors do
// not stop the command.
type teeWriter struct {
	t *tail
	w io.Writer
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.t.Write(p)
	_, _ = w.w.Write(p)
	return len(p), nil
}

// scrub hides the client's secrets (its URL's and headers') in a server's
// text before it goes into a span.
func (c *Client) scrub(s string) string {
	return redaction.Text(s, c.secrets)
}
