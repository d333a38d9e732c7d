package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// jwtClient is a client that authenticates at the token endpoint with a
// signed JWT (private_key_jwt, RFC 7523), for the client credentials
// grant: no secret leaves the machine.
type jwtClient struct {
	id  string
	key crypto.Signer
	alg string // ES256 or RS256
}

// parseClientKey reads a PEM private key (PKCS#8, or SEC 1 EC, or PKCS#1
// RSA) for alg ("" picks from the key: ES256 or RS256).
func parseClientKey(pemBytes []byte, alg string) (crypto.Signer, string, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, "", errors.New("the client key is not PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, "", fmt.Errorf("the client key: %v", err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if alg == "" {
			alg = "ES256"
		}
		if alg != "ES256" || k.Curve.Params().BitSize != 256 {
			return nil, "", fmt.Errorf("an EC client key signs ES256 on P-256 only, not %s", alg)
		}
		return k, alg, nil
	case *rsa.PrivateKey:
		if alg == "" {
			alg = "RS256"
		}
		if alg != "RS256" {
			return nil, "", fmt.Errorf("an RSA client key signs RS256 only, not %s", alg)
		}
		return k, alg, nil
	}
	return nil, "", fmt.Errorf("the client key is a %T; want EC (ES256) or RSA (RS256)", key)
}

// assertion is a client assertion for the token endpoint of issuer.
func (c *jwtClient) assertion(issuer string, now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": c.alg, "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": c.id, "sub": c.id, "aud": issuer,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": rand.Text(),
	})
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	var sig []byte
	switch k := c.key.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, k, sum[:])
		if err != nil {
			return "", err
		}
		sig = make([]byte, 64) // JWS: r and s, 32 bytes each
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:]); err != nil {
			return "", err
		}
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// jwtAuthorize gets a token with the client credentials grant and a signed
// client assertion, after discovering the authorization server from the
// 401 (protected-resource metadata, then the server's metadata).
func (h *Handler) jwtAuthorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	hc := h.cfg.HTTPClient
	var prm *oauthex.ProtectedResourceMetadata
	for _, u := range metadataURLs(challengeParam(challenges, "resource_metadata"), req.URL.String()) {
		if p, err := oauthex.GetProtectedResourceMetadata(ctx, u[0], u[1], hc); err == nil && p != nil && len(p.AuthorizationServers) > 0 {
			prm = p
			break
		}
	}
	if prm == nil {
		return fmt.Errorf("oauth: no protected-resource metadata for %s", h.cfg.Server)
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], hc)
	if err != nil {
		return fmt.Errorf("oauth: the authorization server's metadata: %w", err)
	}
	issuer, tokenURL := prm.AuthorizationServers[0], strings.TrimSuffix(prm.AuthorizationServers[0], "/")+"/token"
	if asm != nil {
		issuer, tokenURL = asm.Issuer, asm.TokenEndpoint
	}
	scopes := strings.Fields(challengeParam(challenges, "scope"))
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.grant = &Grant{Server: CanonicalServer(h.cfg.Server), Principal: h.cfg.Principal, ClientID: h.jwt.id,
		TokenURL: tokenURL, Resource: prm.Resource, Scopes: scopes}
	h.issuer = issuer
	return h.jwtTokenLocked(ctx)
}

// jwtTokenLocked asks the token endpoint for a new access token.
func (h *Handler) jwtTokenLocked(ctx context.Context) error {
	g := h.grant
	a, err := h.jwt.assertion(h.issuer, h.cfg.Now())
	if err != nil {
		return fmt.Errorf("oauth: signing the client assertion: %w", err)
	}
	form := url.Values{
		"grant_type":            {"client_credentials"},
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion":      {a},
	}
	if g.Resource != "" {
		form.Set("resource", g.Resource)
	}
	if len(g.Scopes) > 0 {
		form.Set("scope", strings.Join(g.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := h.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("oauth: the client credentials grant at %s: %w", g.TokenURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var tr struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(body, &tr)
	if resp.StatusCode != http.StatusOK || tr.AccessToken == "" {
		return &oauth2.RetrieveError{ErrorCode: tr.Error, ErrorDescription: tr.Description}
	}
	g.AccessToken, g.Expiry, g.Updated = tr.AccessToken, time.Time{}, h.cfg.Now()
	if tr.ExpiresIn > 0 {
		g.Expiry = h.cfg.Now().Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	return nil
}

// metadataURLs are where the protected-resource metadata may be, with the
// resource each must name: the 401's resource_metadata, then the
// well-known paths at the endpoint's path and at the root (RFC 9728).
func metadataURLs(fromChallenge, resource string) [][2]string {
	var out [][2]string
	if fromChallenge != "" {
		out = append(out, [2]string{fromChallenge, resource})
	}
	u, err := url.Parse(resource)
	if err != nil {
		return out
	}
	m := *u
	m.RawQuery, m.Fragment = "", ""
	m.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/")
	out = append(out, [2]string{m.String(), resource})
	m.Path = "/.well-known/oauth-protected-resource"
	root := *u
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	return append(out, [2]string{m.String(), root.String()})
}
