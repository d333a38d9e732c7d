// Package oauthtest is a small OAuth 2.1 authorization server with an
// MCP server it protects, on 127.0.0.1, for tests of the MCP client's
// authorization: protected-resource and authorization-server metadata,
// dynamic client registration, the authorization code grant with PKCE
// S256 and resource indicators (checked), refresh with rotation, the client
// credentials grant, and revocation. The "browser" of a login is
// [Server.Approve], which follows the authorization URL as a user who
// consents would.
//
// It imports only the MCP SDK and the standard library; nothing outside
// tests may import it.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is the authorization server and the MCP server behind it.
type Server struct {
	// URL is the authorization server's issuer; MCPURL the protected MCP
	// endpoint (URL + "/mcp").
	URL, MCPURL string
	// ExpiresIn is the lifetime in seconds of the access tokens issued
	// from now on; 0 means 3600.
	ExpiresIn int
	// Secret is the client secret of the pre-registered client "robot",
	// the one the client credentials grant accepts.
	Secret string

	ts *httptest.Server

	mu        sync.Mutex
	clients   map[string][]string // client id → redirect URIs
	codes     map[string]codeGrant
	access    map[string]string // access token → whose it is: "userN" (the Nth login) or "robot"
	refresh   map[string]string // refresh token → whose it is
	counts    map[string]int
	lastToken string
}

type codeGrant struct {
	client, redirect, challenge, resource string
}

// New starts the servers; they stop when the test ends. The MCP server has
// one tool, whoami, that answers with whose the token is: "user1" for the
// first login's tokens (refreshed or not), "user2" for the second's, and
// "robot" for the client credentials grant's.
func New(t testing.TB) *Server {
	s := &Server{Secret: "robot-secret", clients: map[string][]string{"robot": nil}, codes: map[string]codeGrant{},
		access: map[string]string{}, refresh: map[string]string{}, counts: map[string]int{}}
	mcpSrv := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "v1"}, nil)
	mcpSrv.AddTool(&sdk.Tool{Name: "whoami", Description: "Says who the token belongs to", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			who := "unknown"
			if req.Extra != nil && req.Extra.Header != nil {
				s.mu.Lock()
				who = s.access[strings.TrimPrefix(req.Extra.Header.Get("Authorization"), "Bearer ")]
				s.mu.Unlock()
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you are " + who}}}, nil
		})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpSrv }, nil)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", s.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-protected-resource", s.resourceMetadata)
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.serverMetadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		_, ok := s.access[tok]
		s.counts["mcp"]++
		s.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", scope="tools"`, s.URL))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	// The URLs are set before the server starts: its handlers read them.
	s.ts = httptest.NewUnstartedServer(mux)
	s.URL = "http://" + s.ts.Listener.Addr().String()
	s.MCPURL = s.URL + "/mcp"
	s.ts.Start()
	t.Cleanup(s.ts.Close)
	return s
}

// Count returns how many times an event happened: "register",
// "authorize", "code" (tokens from a code), "refresh", "client_credentials",
// "mcp" (requests to the MCP endpoint).
func (s *Server) Count(what string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[what]
}

// Revoke invalidates every access and refresh token issued so far.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
	clear(s.refresh)
}

// ExpireAccess invalidates every access token (the refresh tokens stay
// good), as a server that shortened their lives would.
func (s *Server) ExpireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// LastAccessToken returns the access token issued last.
func (s *Server) LastAccessToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastToken
}

// Approve is the user's browser: it opens authURL, consents, and follows
// the redirect to the client's redirect URI (the client's local
// listener), returning its status.
func (s *Server) Approve(ctx context.Context, authURL string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the login ended with %s at %s", resp.Status, resp.Request.URL.Redacted())
	}
	return nil
}

func (s *Server) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"resource": s.MCPURL, "authorization_servers": []string{s.URL}, "scopes_supported": []string{"tools"},
		"bearer_methods_supported": []string{"header"},
	})
}

func (s *Server) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": s.URL, "authorization_endpoint": s.URL + "/authorize", "token_endpoint": s.URL + "/token",
		"registration_endpoint": s.URL + "/register", "response_types_supported": []string{"code"},
		"grant_types_supported":                 []string{"authorization_code", "refresh_token", "client_credentials"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_post", "client_secret_basic"},
		"scopes_supported":                      []string{"tools", "offline_access"},
	})
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var md struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	s.mu.Lock()
	s.counts["register"]++
	id := fmt.Sprintf("client-%d", s.counts["register"])
	s.clients[id] = md.RedirectURIs
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// authorize consents at once (the test's user always does), after checking
// what OAuth 2.1 and the MCP spec require of the request.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	redirects, known := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	switch {
	case !known || !contains(redirects, q.Get("redirect_uri")):
		http.Error(w, "unknown client or redirect URI", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		http.Error(w, "PKCE S256 is required", http.StatusBadRequest)
		return
	case q.Get("resource") != s.MCPURL:
		http.Error(w, "the resource indicator must name the MCP server, got "+q.Get("resource"), http.StatusBadRequest)
		return
	}
	code := randomString()
	s.mu.Lock()
	s.counts["authorize"]++
	s.codes[code] = codeGrant{client: q.Get("client_id"), redirect: q.Get("redirect_uri"), challenge: q.Get("code_challenge"), resource: q.Get("resource")}
	s.mu.Unlock()
	u, _ := url.Parse(q.Get("redirect_uri"))
	v := u.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	u.RawQuery = v.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	fail := func(code, desc string) {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": code, "error_description": desc})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	principal := ""
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok || g.client != f.Get("client_id") || g.redirect != f.Get("redirect_uri"):
			fail("invalid_grant", "unknown code")
			return
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			fail("invalid_grant", "the PKCE verifier does not match")
			return
		case f.Get("resource") != g.resource:
			fail("invalid_target", "the resource differs from the authorization's")
			return
		}
		s.counts["code"]++
		principal = fmt.Sprintf("user%d", s.counts["code"])
	case "refresh_token":
		principal = s.refresh[f.Get("refresh_token")]
		if principal == "" {
			fail("invalid_grant", "unknown or revoked refresh token")
			return
		}
		if f.Get("resource") != s.MCPURL {
			fail("invalid_target", "the refresh must name the resource")
			return
		}
		delete(s.refresh, f.Get("refresh_token")) // rotation
		s.counts["refresh"]++
	case "client_credentials":
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = f.Get("client_id"), f.Get("client_secret")
		}
		if id != "robot" || secret != s.Secret {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
			return
		}
		principal = "robot"
		s.counts["client_credentials"]++
	default:
		fail("unsupported_grant_type", f.Get("grant_type"))
		return
	}
	access, refresh := randomString(), randomString()
	s.access[access] = principal
	s.lastToken = access
	expires := s.ExpiresIn
	if expires == 0 {
		expires = 3600
	}
	resp := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": expires, "scope": "tools"}
	if principal != "robot" {
		s.refresh[refresh] = principal
		resp["refresh_token"] = refresh
	}
	writeJSON(w, http.StatusOK, resp)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomString() string { return rand.Text() }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
