package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/mcp/oauth"
)

// loginTimeout bounds a login: the user has this long to finish in the
// browser.
const loginTimeout = 5 * time.Minute

func (a *app) newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP servers: log in to remote ones, list them, serve agcore's agents over MCP",
		Long: `agcore mcp manages the MCP servers run and chat use (the config file's "mcp"
entries, --mcp, --mcp-url) and serves agcore's own agents to other MCP
clients.

A remote server behind OAuth 2.1 (as the MCP authorization specification
defines it) needs a login once: agcore mcp login URL prints the URL to open
(and opens a browser when there is one), and keeps the tokens under
$AGCORE_HOME/mcp-oauth, one file per server and principal, mode 0600.
Later runs send them, refresh them when they expire, and, when the server
refuses them for good, stop with one line saying to log in again.`,
		Example: `  agcore mcp list
  agcore mcp logout --all`,
	}
	cmd.AddCommand(a.newMCPLoginCmd(), a.newMCPLogoutCmd(), a.newMCPListCmd(), a.newMCPServeCmd())
	return cmd
}

// oauthStore is where the MCP logins are kept.
func oauthStore(s *config.Settings) *oauth.Store {
	return &oauth.Store{Dir: filepath.Join(s.Home, "mcp-oauth")}
}

func (a *app) newMCPLoginCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "login URL",
		Short: "Log in to a remote MCP server (OAuth 2.1 in the browser) and keep its tokens",
		Long: `Login connects to the MCP server at URL; when it asks for authorization,
agcore discovers its authorization server (from the 401's WWW-Authenticate
and the well-known metadata documents), registers itself (dynamic client
registration) unless the config file's entry for URL names a client
("oauth": {"client_id": ..., "client_secret_env": ...} or
"client_metadata_url"), and prints the URL to open. After you consent in the
browser, the authorization server redirects to a listener of agcore's on
127.0.0.1, the code is exchanged (PKCE S256, with the server as the resource
indicator) and the tokens are kept for later runs. It then lists the server's
tools.

--principal keeps the login for a principal of agcore serve instead of the
command line's user.`,
		Example: `  agcore mcp login https://mcp.example.com/mcp`,
		Args:    cobra.ExactArgs(1),
		RunE:    a.mcpLogin,
	}
	fs := cmd.Flags()
	addStoreFlags(fs)
	fs.String("principal", "", "whose login this is: a principal of agcore serve (default: the command line's user)")
	fs.String("client-id", "", "a client registered with the authorization server (default: the config file's, else dynamic registration)")
	fs.String("client-secret-env", "", "the environment variable holding --client-id's secret")
	fs.String("client-metadata-url", "", "an https URL of agcore's client ID metadata document, used as the client ID")
	fs.String("redirect", "127.0.0.1:0", "the address of the listener the browser is sent back to (a fixed port for a client registered with one)")
	fs.Bool("no-browser", false, "only print the URL to open")
	return cmd
}

// entryFor returns the config file's MCP entry for a URL, if any.
func entryFor(s *config.Settings, url string) *config.MCPServer {
	for i := range s.MCP {
		if s.MCP[i].URL != "" && oauth.CanonicalServer(s.MCP[i].URL) == oauth.CanonicalServer(url) {
			return &s.MCP[i]
		}
	}
	return nil
}

func (a *app) mcpLogin(cmd *cobra.Command, args []string) error {
	s, err := a.settings(cmd)
	var se *config.SetupError
	if err != nil && !errors.As(err, &se) {
		return err
	}
	server := args[0]
	if u, err := url.Parse(server); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return exit(ExitUsage, "%q is not an http or https URL", server)
	}
	fs := cmd.Flags()
	principal, _ := fs.GetString("principal")
	cfg := oauth.Config{Server: server, Principal: principal, Store: oauthStore(s)}
	if e := entryFor(s, server); e != nil && e.OAuth != nil {
		cfg.ClientID, cfg.ClientMetadataURL = e.OAuth.ClientID, e.OAuth.ClientMetadataURL
		if e.OAuth.ClientSecretEnv != "" {
			cfg.ClientSecret, _ = a.env.Getenv(e.OAuth.ClientSecretEnv)
		}
	}
	if v, _ := fs.GetString("client-id"); v != "" {
		cfg.ClientID = v
	}
	if v, _ := fs.GetString("client-secret-env"); v != "" {
		sec, ok := a.env.Getenv(v)
		if !ok {
			return exit(ExitUsage, "--client-secret-env: $%s is not set", v)
		}
		cfg.ClientSecret = sec
	}
	if v, _ := fs.GetString("client-metadata-url"); v != "" {
		cfg.ClientMetadataURL = v
	}
	addr, _ := fs.GetString("redirect")
	redirect, err := oauth.NewLocalRedirect(addr)
	if err != nil {
		return exit(ExitFailed, "%v", err)
	}
	defer redirect.Close()
	noBrowser, _ := fs.GetBool("no-browser")
	cfg.RedirectURL = redirect.URL()
	cfg.Login = redirect.Fetcher(func(authURL string) {
		fmt.Fprintf(a.env.Stderr, "To log in to %s, open this URL in a browser:\n\n  %s\n\n", config.RedactURL(server), authURL)
		if !noBrowser {
			a.openBrowser(authURL)
		}
		fmt.Fprintln(a.env.Stderr, "Waiting for the browser to come back...")
	})
	h, err := oauth.NewHandler(cfg)
	if err != nil {
		return exit(ExitUsage, "%v", err)
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), loginTimeout)
	defer cancel()
	c, err := mcp.Connect(ctx, mcp.Server{URL: server, OAuth: h})
	if err != nil {
		return exit(ExitFailed, "login to %s failed: %v", config.RedactURL(server), oneLine(err.Error()))
	}
	defer c.Close()
	g := h.Grant()
	if g == nil {
		fmt.Fprintf(a.env.Stdout, "%s asked for no login; its %d tools are usable as they are.\n", config.RedactURL(server), len(c.Tools()))
		return nil
	}
	fmt.Fprintf(a.env.Stdout, "Logged in to %s%s: %d tools; %s.\n", config.RedactURL(server), principalNote(principal), len(c.Tools()), expiryNote(g))
	return nil
}

func principalNote(p string) string {
	if p == "" {
		return ""
	}
	return fmt.Sprintf(" as principal %q", p)
}

func expiryNote(g *oauth.Grant) string {
	var parts []string
	if !g.Expiry.IsZero() {
		parts = append(parts, "the token expires "+g.Expiry.Local().Format("2006-01-02 15:04"))
	}
	if g.RefreshToken != "" {
		parts = append(parts, "it is refreshed as needed")
	}
	if len(parts) == 0 {
		return "the token does not expire"
	}
	return strings.Join(parts, ", ")
}

// openBrowser opens url in the user's browser when there is one: $BROWSER,
// else the desktop's opener (open on macOS, xdg-open with a display).
// Failing that, the printed URL is the way.
func (a *app) openBrowser(url string) {
	var name string
	var args []string
	if b, ok := a.env.Getenv("BROWSER"); ok && strings.TrimSpace(b) != "" {
		f := strings.Fields(b)
		name, args = f[0], f[1:]
	} else {
		switch goruntime.GOOS {
		case "darwin":
			name = "open"
		case "windows":
			name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
		default:
			_, x := a.env.Getenv("DISPLAY")
			_, w := a.env.Getenv("WAYLAND_DISPLAY")
			if !x && !w {
				return
			}
			name = "xdg-open"
		}
	}
	c := exec.Command(name, append(args, url)...)
	c.Stdout, c.Stderr = nil, nil
	if err := c.Start(); err == nil {
		go c.Wait()
	}
}

func (a *app) newMCPLogoutCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "logout [URL]",
		Short: "Forget the tokens of a remote MCP server (or of all, with --all)",
		Example: `  agcore mcp logout http://127.0.0.1:3001/mcp
  agcore mcp logout --all`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.mcpLogout,
	}
	fs := cmd.Flags()
	addStoreFlags(fs)
	fs.String("principal", "", "whose login to forget (default: the command line's user)")
	fs.Bool("all", false, "forget every login, of every principal")
	return cmd
}

func (a *app) mcpLogout(cmd *cobra.Command, args []string) error {
	s, err := a.settings(cmd)
	var se *config.SetupError
	if err != nil && !errors.As(err, &se) {
		return err
	}
	store := oauthStore(s)
	all, _ := cmd.Flags().GetBool("all")
	principal, _ := cmd.Flags().GetString("principal")
	switch {
	case all && len(args) == 0:
		gs, err := store.List()
		if err != nil {
			return exit(ExitFailed, "%v", err)
		}
		for _, g := range gs {
			if _, err := store.Delete(g.Server, g.Principal); err != nil {
				return exit(ExitFailed, "%v", err)
			}
		}
		fmt.Fprintf(a.env.Stdout, "Forgot %d logins.\n", len(gs))
		return nil
	case len(args) != 1 || all:
		return exit(ExitUsage, "give a server URL or --all (see agcore mcp logout --help)")
	}
	ok, err := store.Delete(args[0], principal)
	if err != nil {
		return exit(ExitFailed, "%v", err)
	}
	if !ok {
		fmt.Fprintf(a.env.Stdout, "No login for %s%s.\n", config.RedactURL(args[0]), principalNote(principal))
		return nil
	}
	fmt.Fprintf(a.env.Stdout, "Logged out of %s%s.\n", config.RedactURL(args[0]), principalNote(principal))
	return nil
}

func (a *app) newMCPListCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the configured MCP servers, their authorization and their tools",
		Long: `List connects to each MCP server run and chat would use (the config file's
"mcp" entries, or --mcp/--mcp-url) and shows its authorization (none,
headers, an OAuth login and when its token expires, client credentials) and
its tools, or why it cannot be reached. Logins kept for servers that are not
configured are listed after them.`,
		Example: `  agcore mcp list
  agcore mcp list --json`,
		Args: cobra.NoArgs,
		RunE: a.mcpList,
	}
	fs := cmd.Flags()
	addStoreFlags(fs)
	fs.StringArray("mcp", nil, "an MCP server started over stdio, as a command line (repeatable)")
	fs.StringArray("mcp-url", nil, "an MCP server reached over streamable HTTP (repeatable)")
	fs.Bool("json", false, "one JSON object: {\"servers\": [...], \"logins\": [...]}")
	return cmd
}

type listedServer struct {
	Name   string   `json:"name"`
	Target string   `json:"target"`
	Auth   string   `json:"auth"`
	Tools  []string `json:"tools"`
	Error  string   `json:"error,omitempty"`
}

type listedLogin struct {
	Server    string    `json:"server"`
	Principal string    `json:"principal,omitempty"`
	Expiry    time.Time `json:"expiry,omitzero"`
	Refresh   bool      `json:"refreshable"`
	Scopes    []string  `json:"scopes,omitempty"`
}

func (a *app) mcpList(cmd *cobra.Command, _ []string) error {
	s, err := a.settings(cmd)
	var se *config.SetupError
	if err != nil && !errors.As(err, &se) {
		return err
	}
	store := oauthStore(s)
	grants, err := store.List()
	if err != nil {
		return exit(ExitFailed, "%v", err)
	}
	var servers []listedServer
	configured := map[string]bool{}
	for _, m := range s.MCP {
		ms, err := a.mcpServer(s, m, "", nil, nil)
		ls := listedServer{Target: m.Command, Auth: "none"}
		if m.URL != "" {
			ls.Target = config.RedactURL(m.URL)
			configured[oauth.CanonicalServer(m.URL)] = true
			ls.Auth = authState(m, store)
		}
		if err != nil {
			ls.Name, ls.Error = m.Name, err.Error()
			servers = append(servers, ls)
			continue
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), mcpStartTimeout)
		c, err := mcp.Connect(ctx, ms)
		cancel()
		if err != nil {
			ls.Name, ls.Error = m.Name, mcpErrorLine(err)
			servers = append(servers, ls)
			continue
		}
		ls.Name = c.Name()
		ls.Tools = []string{}
		for _, t := range c.Tools() {
			ls.Tools = append(ls.Tools, t.Name())
		}
		c.Close()
		servers = append(servers, ls)
	}
	var logins []listedLogin
	for _, g := range grants {
		logins = append(logins, listedLogin{Server: g.Server, Principal: g.Principal, Expiry: g.Expiry, Refresh: g.RefreshToken != "", Scopes: g.Scopes})
	}
	if json, _ := cmd.Flags().GetBool("json"); json {
		if servers == nil {
			servers = []listedServer{}
		}
		if logins == nil {
			logins = []listedLogin{}
		}
		return writeJSON(a.env.Stdout, map[string]any{"servers": servers, "logins": logins})
	}
	w := a.env.Stdout
	if len(servers) == 0 {
		fmt.Fprintln(w, "No MCP servers configured (the config file's \"mcp\", --mcp, --mcp-url).")
	}
	for _, ls := range servers {
		name := ls.Name
		if name == "" {
			name = "?"
		}
		fmt.Fprintf(w, "%s  %s  (auth: %s)\n", name, ls.Target, ls.Auth)
		if ls.Error != "" {
			fmt.Fprintf(w, "  unreachable: %s\n", ls.Error)
			continue
		}
		fmt.Fprintf(w, "  %d tools: %s\n", len(ls.Tools), strings.Join(ls.Tools, ", "))
	}
	var other []listedLogin
	for _, l := range logins {
		if !configured[l.Server] || l.Principal != "" {
			other = append(other, l)
		}
	}
	if len(other) > 0 {
		fmt.Fprintln(w, "\nOther logins:")
		for _, l := range other {
			fmt.Fprintf(w, "  %s%s\n", l.Server, principalNote(l.Principal))
		}
	}
	return nil
}

// authState describes how agcore authorizes to a URL server, without a
// secret.
func authState(m config.MCPServer, store *oauth.Store) string {
	if len(m.Headers) > 0 {
		return "headers"
	}
	if m.OAuth != nil && m.OAuth.Grant == "client_credentials" {
		return "oauth client credentials"
	}
	g, err := store.Load(m.URL, "")
	switch {
	case errors.Is(err, oauth.ErrNoGrant):
		return "no login"
	case err != nil:
		return err.Error()
	case g.Expired(time.Now()) && g.RefreshToken == "":
		return "oauth login, expired"
	case !g.Expiry.IsZero():
		return "oauth login, token expires " + g.Expiry.Local().Format("2006-01-02 15:04")
	}
	return "oauth login"
}

// mcpServer describes a configured server for the mcp package: the
// command, or the URL with its headers (${VAR} expanded) and its OAuth
// handler (the stored login of principal, "" for the command line's user,
// refreshed as needed; or client credentials). notify and elicit may be
// nil.
func (a *app) mcpServer(s *config.Settings, m config.MCPServer, principal string, notify func(mcp.Notice), elicit mcp.Elicitor) (mcp.Server, error) {
	var out mcp.Server
	var err error
	if m.Command != "" {
		if out, err = mcp.ParseCommand(m.Command); err != nil {
			return out, exit(ExitUsage, "--mcp %q: %v", m.Command, err)
		}
		out.Dir = a.env.Cwd
	} else {
		out.URL = m.URL
		if out.Headers, err = m.ExpandHeaders(a.env.Getenv); err != nil {
			return out, exit(ExitUsage, "MCP server %s: %v", config.RedactURL(m.URL), err)
		}
		if _, ok := out.Headers["Authorization"]; !ok {
			cfg := oauth.Config{Server: m.URL, Principal: principal, Store: oauthStore(s)}
			if o := m.OAuth; o != nil {
				cfg.ClientID, cfg.ClientMetadataURL = o.ClientID, o.ClientMetadataURL
				if o.ClientSecretEnv != "" {
					sec, ok := a.env.Getenv(o.ClientSecretEnv)
					if !ok && o.Grant == "client_credentials" {
						return out, exit(ExitUsage, "MCP server %s: $%s (its client secret) is not set", config.RedactURL(m.URL), o.ClientSecretEnv)
					}
					cfg.ClientSecret = sec
				}
				cfg.ClientCredentials = o.Grant == "client_credentials"
				if o.ClientKeyFile != "" {
					if cfg.ClientKeyPEM, err = os.ReadFile(o.ClientKeyFile); err != nil {
						return out, exit(ExitUsage, "MCP server %s: client_key_file: %v", config.RedactURL(m.URL), err)
					}
				}
			}
			if out.OAuth, err = oauth.NewHandler(cfg); err != nil {
				return out, exit(ExitUsage, "MCP server %s: %v", config.RedactURL(m.URL), err)
			}
		}
	}
	out.Name, out.NeedsApproval = m.Name, m.Approval
	out.Timeout, _ = m.TimeoutDuration() // checked by config.Resolve
	out.Notify, out.Elicit = notify, elicit
	return out, nil
}

// mcpErrorLine is the one line a failed MCP connection is reported with;
// a server that needs a login names the command that gives one.
func mcpErrorLine(err error) string {
	var lr *oauth.LoginRequiredError
	if errors.As(err, &lr) {
		cmd := "agcore mcp login " + config.RedactURL(lr.Server)
		if lr.Principal != "" {
			cmd += " --principal " + lr.Principal
		}
		return fmt.Sprintf("%s; run `%s`", lr.Error(), cmd)
	}
	return err.Error()
}
