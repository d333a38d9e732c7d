package mcp

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultShutdownTimeout is how long Close waits for a command to exit on
// its own once its input is closed. Many servers never do (timers keep
// them alive), so it is short: SIGTERM, their usual way out, follows.
const DefaultShutdownTimeout = time.Second

// DefaultTimeout is how long a request to a server may go unanswered when
// Server.Timeout is 0.
const DefaultTimeout = 2 * time.Minute

// Server says how to reach one MCP server. Exactly one of Command, URL and
// Transport must be set.
type Server struct {
	// Name is the server's short name in its tools' names
	// (mcp__NAME__TOOL). Empty derives one from Command or URL; see the
	// package documentation for the rule.
	Name string

	// Command, with Args, starts a local server that speaks MCP over its
	// standard input and output.
	Command string
	Args    []string
	// Env is added to the environment the command inherits ("KEY=value").
	Env []string
	// Dir is the command's working directory; empty means the current one.
	Dir string
	// Stderr receives the command's standard error. Either way its last
	// lines are kept for the error of a server that fails to start.
	Stderr io.Writer
	// ShutdownTimeout is how long Close waits for the command to exit after
	// closing its input before sending it SIGTERM (and as long again before
	// SIGKILL); 0 means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration

	// URL reaches a server over the streamable HTTP transport.
	URL string
	// HTTPClient makes the HTTP requests (set its Transport to add headers
	// such as an authorization); nil means http.DefaultClient.
	HTTPClient *http.Client

	// Transport reaches a server any other way, such as an in-memory
	// server in tests.
	Transport sdk.Transport

	// NeedsApproval makes every tool of the server ask for approval before
	// each call (see tool.Approvable).
	NeedsApproval bool

	// Timeout is how long any request to the server (a tool call, a listing)
	// may go unanswered; 0 means DefaultTimeout. A progress notification
	// for a call restarts its clock, so a long call that reports progress is
	// not cut. A call that runs out is answered with a *[SilentError] (the
	// tool loop shows the model an error result and the turn goes on) and
	// reported to Notify.
	Timeout time.Duration

	// Headers are added to every HTTP request to a URL server (such as
	// "Authorization": "Bearer ..."). Their values are secrets: errors
	// never show them.
	Headers map[string]string

	// OAuth, when set, authorizes the HTTP requests to a URL server: its
	// token is sent with each, and a 401 or 403 asks it to authorize (see
	// the SDK's auth.OAuthHandler and this module's mcp/oauth package).
	OAuth auth.OAuthHandler

	// ProtocolVersion is the MCP version asked for in the handshake; empty
	// means DefaultProtocolVersion, "latest" the newest the SDK speaks.
	ProtocolVersion string

	// Elicit answers the server's requests for input from the user
	// (elicitation/create). Nil declines every request: nobody can answer.
	Elicit Elicitor

	// Notify receives what the server says besides its answers (progress,
	// log messages, a changed tool list) and the calls it left unanswered.
	// It is called from the session's goroutines, one notice at a time
	// per server; nil ignores them.
	Notify func(Notice)
}

// check reports a Server that does not say how to reach it exactly once.
func (s *Server) check() error {
	n := 0
	for _, set := range []bool{s.Command != "", s.URL != "", s.Transport != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return errors.New("no Command, URL or Transport given")
	case n > 1:
		return errors.New("more than one of Command, URL and Transport given")
	}
	if s.URL != "" {
		u, err := url.Parse(s.URL)
		if err != nil {
			return fmt.Errorf("invalid URL: %v", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("URL %q is not http or https", target(s))
		}
	}
	return nil
}

// target describes where the server is, for messages: the command line, or
// the URL without credentials or query (which may hold secrets).
func target(s *Server) string {
	switch {
	case s.Command != "":
		return strings.Join(append([]string{s.Command}, s.Args...), " ")
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil {
			return "an invalid URL"
		}
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		return u.String()
	}
	return "a custom transport"
}

// ParseCommand splits a command line such as the CLI's --mcp 'CMD ARGS'
// into a Server, quoting as a POSIX shell does: single quotes keep
// everything, double quotes keep everything but \" \\ \$ and \`, and a
// backslash outside quotes keeps the next character. Leading KEY=value
// words go to Env. Nothing is expanded.
func ParseCommand(line string) (Server, error) {
	words, err := splitWords(line)
	if err != nil {
		return Server{}, err
	}
	var s Server
	for len(words) > 0 && envWord.MatchString(words[0]) {
		s.Env = append(s.Env, words[0])
		words = words[1:]
	}
	if len(words) == 0 {
		return Server{}, fmt.Errorf("mcp: no command in %q", line)
	}
	s.Command, s.Args = words[0], words[1:]
	return s, nil
}

var envWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

func splitWords(line string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
		quote rune
	)
	runes := []rune(line)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(runes) && strings.ContainsRune("\"\\$`", runes[i+1]):
				i++
				cur.WriteRune(runes[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\':
			if i+1 == len(runes) {
				return nil, fmt.Errorf("mcp: command line %q ends with a backslash", line)
			}
			i++
			cur.WriteRune(runes[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("mcp: unclosed %c quote in command line %q", quote, line)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}

// maxServerName bounds a server's short name, leaving most of the 64
// characters of a tool name to the tool.
const maxServerName = 24

// shortName is the server's name in its tools' names: Name, or one
// derived from the command or URL.
func shortName(s *Server) string {
	if s.Name != "" {
		return sanitizeServer(s.Name)
	}
	switch {
	case s.Command != "":
		return sanitizeServer(strings.ToLower(commandName(s.Command, s.Args)))
	case s.URL != "":
		return sanitizeServer(strings.ToLower(hostName(s.URL)))
	}
	return "mcp"
}

// launchers run another program named by an argument, which names the
// server better than the launcher does.
var launchers = map[string]bool{
	"npx": true, "npm": true, "pnpm": true, "pnpx": true, "yarn": true, "bunx": true, "bun": true,
	"node": true, "deno": true, "uvx": true, "uv": true, "pipx": true, "python": true, "python3": true,
	"docker": true, "podman": true, "go": true, "java": true, "sh": true, "bash": true, "env": true,
}

// subcommands of launchers, skipped when looking for the program.
var subcommands = map[string]bool{"run": true, "exec": true, "dlx": true, "x": true, "tool": true}

// genericNames are script names that say nothing; their directory (past
// buildDirs) names the server instead.
var genericNames = map[string]bool{"index": true, "main": true, "server": true, "cli": true, "__main__": true, "app": true}

var buildDirs = map[string]bool{"dist": true, "build": true, "lib": true, "src": true, "bin": true, "out": true}

// commandName picks the most telling word of a command line.
func commandName(command string, args []string) string {
	name := command
	if launchers[strings.TrimSuffix(path.Base(filepath.ToSlash(command)), ".exe")] {
		for _, a := range args {
			if subcommands[a] || strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
				continue
			}
			name = a
			break
		}
	}
	name = filepath.ToSlash(name)
	if strings.HasPrefix(name, "@") { // an npm package: @scope/name@version
		if i := strings.LastIndex(name, "@"); i > 0 {
			name = name[:i]
		}
	} else if i := strings.LastIndex(name, "@"); i > 0 && !strings.Contains(name[i:], "/") {
		name = name[:i] // name@version
	}
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") { // image:tag
		name = name[:i]
	}
	base := path.Base(name)
	base = strings.TrimSuffix(base, path.Ext(base))
	if genericNames[base] {
		for dir := path.Dir(name); dir != "." && dir != "/"; dir = path.Dir(dir) {
			if d := path.Base(dir); !buildDirs[d] {
				base = d
				break
			}
		}
	}
	for _, p := range []string{"mcp-server-", "mcp_server_", "server-", "server_", "mcp-", "mcp_"} {
		if s, ok := strings.CutPrefix(base, p); ok && s != "" {
			base = s
			break
		}
	}
	for _, suffix := range []string{"-mcp-server", "_mcp_server", "-server", "_server", "-mcp", "_mcp"} {
		if s, ok := strings.CutSuffix(base, suffix); ok && s != "" {
			base = s
			break
		}
	}
	return base
}

// hostName picks the telling label of a URL's host.
func hostName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "http"
	}
	host := u.Hostname()
	if net.ParseIP(host) != nil {
		return "http"
	}
	labels := strings.Split(host, ".")
	for i, l := range labels {
		if i < len(labels)-1 && (l == "www" || l == "mcp" || l == "api") {
			continue
		}
		return l
	}
	return host
}

// sanitizeServer applies the server-name rule of the package documentation.
func sanitizeServer(name string) string {
	s := sanitize(name)
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	s = strings.Trim(s, "_-")
	if len(s) > maxServerName {
		s = strings.TrimRight(s[:maxServerName], "_-")
	}
	if s == "" {
		return "mcp"
	}
	return s
}

// sanitize replaces every character outside [a-zA-Z0-9_-] with "_".
func sanitize(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		if r < 0x80 && (r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
