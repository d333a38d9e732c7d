package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Grant is what a login leaves: the tokens, and the client and token
// endpoint needed to refresh them. Its fields are secrets (the tokens,
// the client secret); it is kept only in a [Store].
type Grant struct {
	// Server is the MCP server's URL as given to the login (normalized
	// by [CanonicalServer]), and Principal whose grant it is ("" for the
	// command line's single user).
	Server    string `json:"server"`
	Principal string `json:"principal"`

	// The client the tokens were issued to, and where to refresh them.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	TokenURL     string `json:"token_url"`
	// AuthStyle is how the client authenticates at the token endpoint:
	// "basic", "post" or "" (a public client sends its client_id).
	AuthStyle string `json:"auth_style,omitempty"`
	// Resource is the resource indicator (RFC 8707) the tokens are for.
	Resource string   `json:"resource,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`

	AccessToken  string    `json:"access_token"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	TokenType    string    `json:"token_type,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// Updated is when the grant was last saved (a login or a refresh).
	Updated time.Time `json:"updated"`
}

// Expired reports whether the access token has expired (or will within
// the next 30 seconds) at now.
func (g *Grant) Expired(now time.Time) bool {
	return !g.Expiry.IsZero() && now.Add(30*time.Second).After(g.Expiry)
}

// String describes the grant without any secret.
func (g *Grant) String() string {
	return fmt.Sprintf("grant for %s (principal %q)", g.Server, g.Principal)
}

// Store keeps grants as files in Dir (created mode 0700), one a server and
// principal, each mode 0600.
type Store struct {
	Dir string
}

// ErrNoGrant is the error of a Load for a server and principal with no
// grant.
var ErrNoGrant = errors.New("no stored login")

// CanonicalServer normalizes a server URL so that one server has one
// grant: lower-case scheme and host, no fragment, no trailing slash.
func CanonicalServer(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return raw
	}
	u.Scheme, u.Host, u.Fragment = strings.ToLower(u.Scheme), strings.ToLower(u.Host), ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u.String()
}

// path is the file of a server's grant for principal: named by a hash of
// both, so any principal and URL make a safe file name.
func (s *Store) path(server, principal string) string {
	sum := sha256.Sum256([]byte(principal + "\x00" + CanonicalServer(server)))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:12])+".json")
}

// Load returns the grant of server for principal, or ErrNoGrant.
func (s *Store) Load(server, principal string) (*Grant, error) {
	b, err := os.ReadFile(s.path(server, principal))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoGrant
	}
	if err != nil {
		return nil, err
	}
	var g Grant
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, fmt.Errorf("the stored login for %s is damaged: %v", server, err)
	}
	return &g, nil
}

// Save writes g (replacing the file atomically), mode 0600.
func (s *Store) Save(g *Grant) error {
	g.Server = CanonicalServer(g.Server)
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, ".grant-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), s.path(g.Server, g.Principal))
}

// Delete removes the grant of server for principal, reporting whether
// there was one.
func (s *Store) Delete(server, principal string) (bool, error) {
	err := os.Remove(s.path(server, principal))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// List returns every stored grant, by server then principal.
func (s *Store) List() ([]*Grant, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Grant
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.Dir, e.Name()))
		if err != nil {
			return nil, err
		}
		var g Grant
		if json.Unmarshal(b, &g) == nil && g.Server != "" {
			out = append(out, &g)
		}
	}
	slices.SortFunc(out, func(a, b *Grant) int {
		if c := strings.Compare(a.Server, b.Server); c != 0 {
			return c
		}
		return strings.Compare(a.Principal, b.Principal)
	})
	return out, nil
}
