package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// Config says how a [Handler] authorizes to one server.
type Config struct {
	// Server is the MCP server's URL; Principal whose tokens are used
	// ("" for the command line's single user).
	Server    string
	Principal string
	// Store keeps the grant: a stored one is used (and refreshed), a new
	// one saved. Nil keeps tokens in memory only.
	Store *Store
	// HTTPClient makes the OAuth requests (metadata, registration,
	// tokens); nil means http.DefaultClient.
	HTTPClient *http.Client

	// Login, when set, runs the interactive step of a login: the user
	// opens authURL (in a browser) and the authorization server redirects
	// to RedirectURL with the code. Nil means nobody can log in here: a
	// server that needs a login fails with a *LoginRequiredError.
	Login auth.AuthorizationCodeFetcher
	// RedirectURL is where the authorization server sends the user back
	// (LocalRedirect.URL); required with Login.
	RedirectURL string

	// How the client is identified, in the SDK's order of preference: a
	// client ID metadata document (an https URL), a pre-registered client
	// (ClientID, ClientSecret), else dynamic client registration.
	ClientMetadataURL string
	ClientID          string
	ClientSecret      string
	// ClientName is the name dynamic registration gives; empty means
	// "agcore".
	ClientName string

	// ClientCredentials uses the client credentials grant with ClientID and
	// ClientSecret (unattended use: no user, no browser, no stored grant),
	// or, with ClientKeyPEM, with a JWT signed by that key instead of a
	// secret (private_key_jwt, RFC 7523).
	ClientCredentials bool
	// ClientKeyPEM is the client's private key (EC P-256 for ES256, RSA for
	// RS256) and SigningAlgorithm the JWS algorithm ("" picks from the
	// key).
	ClientKeyPEM     []byte
	SigningAlgorithm string

	// Now is the clock for token expiry; nil means time.Now.
	Now func() time.Time
}

// LoginRequiredError is the error of a server that needs a login nobody
// can make here: no stored grant, a token refused (revoked or expired,
// and not refreshable), or more scopes needed.
type LoginRequiredError struct {
	Server    string
	Principal string
	// Reason says why, for people: "no stored login", "the stored token
	// was refused (revoked or expired)", "it asks for more scopes (...)".
	Reason string
}

// Error is one line naming the server and why.
func (e *LoginRequiredError) Error() string {
	who := ""
	if e.Principal != "" {
		who = fmt.Sprintf(" for principal %q", e.Principal)
	}
	return fmt.Sprintf("MCP server %s needs a login%s: %s", e.Server, who, e.Reason)
}

// Handler is an auth.OAuthHandler for a StreamableClientTransport (the
// mcp package's Server.OAuth). It is safe for concurrent use.
type Handler struct {
	cfg Config

	mu       sync.Mutex
	grant    *Grant // nil before a login
	refused  string // the access token the server last refused
	sdk      *auth.AuthorizationCodeHandler
	cc       *extauth.ClientCredentialsHandler
	jwt      *jwtClient // the client credentials grant with private_key_jwt
	issuer   string     // the jwt client's authorization server
	resource string     // the resource indicator of the login under way
}

// NewHandler returns a Handler for cfg, with the stored grant if any.
func NewHandler(cfg Config) (*Handler, error) {
	if cfg.Server == "" {
		return nil, errors.New("oauth: no server URL")
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = http.DefaultClient
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "agcore"
	}
	h := &Handler{cfg: cfg}
	if cfg.ClientCredentials && len(cfg.ClientKeyPEM) > 0 {
		if cfg.ClientID == "" {
			return nil, errors.New("oauth: the client credentials grant needs a client ID")
		}
		key, alg, err := parseClientKey(cfg.ClientKeyPEM, cfg.SigningAlgorithm)
		if err != nil {
			return nil, fmt.Errorf("oauth: %w", err)
		}
		h.jwt = &jwtClient{id: cfg.ClientID, key: key, alg: alg}
		return h, nil
	}
	if cfg.ClientCredentials {
		if cfg.ClientID == "" || cfg.ClientSecret == "" {
			return nil, errors.New("oauth: the client credentials grant needs a client ID and a client secret")
		}
		cc, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: cfg.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}},
			HTTPClient:  cfg.HTTPClient,
		})
		if err != nil {
			return nil, fmt.Errorf("oauth: %w", err)
		}
		h.cc = cc
		return h, nil
	}
	if cfg.Store != nil {
		g, err := cfg.Store.Load(cfg.Server, cfg.Principal)
		switch {
		case err == nil:
			h.grant = g
		case !errors.Is(err, ErrNoGrant):
			return nil, err
		}
	}
	if cfg.Login != nil {
		if err := h.newSDKHandler(); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// newSDKHandler makes the SDK's authorization code handler, which runs a
// login's protocol; the grant it ends with is saved by grantFrom.
func (h *Handler) newSDKHandler() error {
	c := h.cfg
	sc := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL: c.RedirectURL,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			// The resource indicator the SDK chose is in the URL; the
			// refreshes send it too.
			if u, err := url.Parse(args.URL); err == nil {
				h.mu.Lock()
				h.resource = u.Query().Get("resource")
				h.mu.Unlock()
			}
			return c.Login(ctx, args)
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:            []string{c.RedirectURL},
				ClientName:              c.ClientName,
				GrantTypes:              []string{"authorization_code", "refresh_token"},
				ResponseTypes:           []string{"code"},
				TokenEndpointAuthMethod: "none",
			},
		},
		RequestRefreshToken: true,
		Client:              c.HTTPClient,
		NewTokenSource: func(_ context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			if err := h.grantFrom(oc, tok); err != nil {
				return nil, err
			}
			return h, nil
		},
		ScopeFilter: func(discovered []string) []string {
			// A new login keeps the scopes of the last (step-up).
			h.mu.Lock()
			defer h.mu.Unlock()
			out := slices.Clone(discovered)
			if h.grant != nil {
				for _, s := range h.grant.Scopes {
					if !slices.Contains(out, s) {
						out = append(out, s)
					}
				}
			}
			return out
		},
	}
	if c.ClientMetadataURL != "" {
		sc.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: c.ClientMetadataURL}
	}
	if c.ClientID != "" {
		pc := &oauthex.ClientCredentials{ClientID: c.ClientID}
		if c.ClientSecret != "" {
			pc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: c.ClientSecret}
		}
		sc.PreregisteredClient = pc
	}
	ah, err := auth.NewAuthorizationCodeHandler(sc)
	if err != nil {
		return fmt.Errorf("oauth: %w", err)
	}
	h.sdk = ah
	return nil
}

// grantFrom keeps (and saves) the grant a login ended with.
func (h *Handler) grantFrom(oc *oauth2.Config, tok *oauth2.Token) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	g := &Grant{
		Server: CanonicalServer(h.cfg.Server), Principal: h.cfg.Principal,
		ClientID: oc.ClientID, ClientSecret: oc.ClientSecret, TokenURL: oc.Endpoint.TokenURL,
		AuthStyle: authStyleName(oc.Endpoint.AuthStyle), Resource: h.resource, Scopes: oc.Scopes,
		AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, TokenType: tok.TokenType, Expiry: tok.Expiry,
		Updated: h.cfg.Now(),
	}
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		g.Scopes = strings.Fields(s)
	}
	h.grant, h.refused = g, ""
	if h.cfg.Store != nil {
		if err := h.cfg.Store.Save(g); err != nil {
			return fmt.Errorf("oauth: saving the login for %s: %w", h.cfg.Server, err)
		}
	}
	return nil
}

// Grant returns a copy of the current grant, or nil before a login.
func (h *Handler) Grant() *Grant {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.grant == nil {
		return nil
	}
	g := *h.grant
	return &g
}

// TokenSource implements auth.OAuthHandler: the handler itself, once there
// is a grant (nil before, so the first request goes without a token and
// its 401 starts the discovery).
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	if h.cc != nil {
		return h.cc.TokenSource(ctx)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.grant == nil {
		return nil, nil
	}
	return h, nil
}

// Token implements oauth2.TokenSource: the grant's access token, refreshed
// first when it has expired. A refresh the authorization server refuses is
// an *oauth2.RetrieveError with the code invalid_grant, so the request
// goes without a token and its 401 comes to Authorize.
func (h *Handler) Token() (*oauth2.Token, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.grant == nil {
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "no login"}
	}
	switch {
	case h.grant.Expired(h.cfg.Now()) && h.jwt != nil:
		if err := h.jwtTokenLocked(context.Background()); err != nil {
			return nil, err
		}
	case h.grant.Expired(h.cfg.Now()) && h.grant.RefreshToken != "":
		if err := h.refreshLocked(context.Background()); err != nil {
			return nil, err
		}
	}
	return &oauth2.Token{AccessToken: h.grant.AccessToken, TokenType: "Bearer", Expiry: h.grant.Expiry}, nil
}

// Authorize implements auth.OAuthHandler, for a request answered 401 or
// 403. A refused token is refreshed once; failing that, a login runs when
// one can (Config.Login), else the error is a *LoginRequiredError.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.cc != nil {
		return h.cc.Authorize(ctx, req, resp)
	}
	if h.jwt != nil {
		return h.jwtAuthorize(ctx, req, resp)
	}
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	scopeErr := challengeParam(challenges, "error") == "insufficient_scope"
	if resp.StatusCode == http.StatusForbidden && !scopeErr {
		resp.Body.Close()
		return nil // not an authorization problem: the request fails as it is
	}
	sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")

	h.mu.Lock()
	reason := "no stored login"
	if h.grant != nil && !scopeErr {
		reason = "the stored token was refused (revoked or expired)"
		// Refresh once per refused token: the server may have expired it
		// early. A token refused again after its refresh needs a login.
		if h.grant.RefreshToken != "" && sent != "" && sent == h.grant.AccessToken && h.refused != sent {
			h.refused = sent
			err := h.refreshLocked(ctx)
			h.mu.Unlock()
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return nil
			}
			h.mu.Lock()
			reason = "the stored token was refused and could not be refreshed (revoked or expired)"
		}
	}
	if scopeErr {
		reason = "it asks for more scopes"
		if s := challengeParam(challenges, "scope"); s != "" {
			reason += " (" + s + ")"
		}
	}
	h.mu.Unlock()
	if h.sdk == nil {
		resp.Body.Close()
		return &LoginRequiredError{Server: h.cfg.Server, Principal: h.cfg.Principal, Reason: reason}
	}
	return h.sdk.Authorize(ctx, req, resp)
}

// refreshLocked refreshes the grant's access token with its refresh token,
// sending the resource indicator, and saves the result.
func (h *Handler) refreshLocked(ctx context.Context) error {
	g := h.grant
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {g.RefreshToken}}
	if g.Resource != "" {
		form.Set("resource", g.Resource)
	}
	if g.AuthStyle != "basic" {
		form.Set("client_id", g.ClientID)
		if g.ClientSecret != "" && g.AuthStyle == "post" {
			form.Set("client_secret", g.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if g.AuthStyle == "basic" {
		req.SetBasicAuth(url.QueryEscape(g.ClientID), url.QueryEscape(g.ClientSecret))
	}
	resp, err := h.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("oauth: refreshing the token of %s: %w", h.cfg.Server, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var tr struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		TokenType    string `json:"token_type"`
		ExpiresIn    int64  `json:"expires_in"`
		Scope        string `json:"scope"`
		Error        string `json:"error"`
		Description  string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK || tr.AccessToken == "" {
		code := tr.Error
		if code == "" {
			code = "invalid_grant"
		}
		// No body, no token: the error says only what the server's error
		// code and description say.
		return &oauth2.RetrieveError{ErrorCode: code, ErrorDescription: tr.Description}
	}
	g.AccessToken, g.TokenType = tr.AccessToken, tr.TokenType
	if tr.RefreshToken != "" {
		g.RefreshToken = tr.RefreshToken // rotated
	}
	g.Expiry = time.Time{}
	if tr.ExpiresIn > 0 {
		g.Expiry = h.cfg.Now().Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	if tr.Scope != "" {
		g.Scopes = strings.Fields(tr.Scope)
	}
	g.Updated = h.cfg.Now()
	if h.cfg.Store != nil {
		if err := h.cfg.Store.Save(g); err != nil {
			return fmt.Errorf("oauth: saving the refreshed token of %s: %w", h.cfg.Server, err)
		}
	}
	return nil
}

func challengeParam(cs []oauthex.Challenge, name string) string {
	for _, c := range cs {
		if v := c.Params[name]; v != "" {
			return v
		}
	}
	return ""
}

func authStyleName(s oauth2.AuthStyle) string {
	switch s {
	case oauth2.AuthStyleInHeader:
		return "basic"
	case oauth2.AuthStyleInParams:
		return "post"
	}
	return ""
}
