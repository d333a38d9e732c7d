package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/oauthtest"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/mcp/oauth"
)

func connect(t *testing.T, srv *oauthtest.Server, h *oauth.Handler) (*mcp.Client, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, mcp.Server{Name: "prot", URL: srv.MCPURL, OAuth: h})
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func whoami(t *testing.T, c *mcp.Client) string {
	t.Helper()
	for _, tl := range c.Tools() {
		if tl.Name() == "mcp__prot__whoami" {
			out, err := tl.Invoke(context.Background(), json.RawMessage(`{}`))
			if err != nil {
				t.Fatalf("whoami: %v", err)
			}
			return out
		}
	}
	t.Fatal("no whoami tool")
	return ""
}

// login runs a login the way `agcore mcp login` does: a local redirect
// listener, the user's browser (the test server's Approve).
func login(t *testing.T, srv *oauthtest.Server, store *oauth.Store) *oauth.Handler {
	t.Helper()
	redirect, err := oauth.NewLocalRedirect("")
	if err != nil {
		t.Fatal(err)
	}
	defer redirect.Close()
	// The browser reports through browserErrs, never through t from its
	// goroutine: it is waited for before login returns (and before its
	// redirect listener closes), even when login fails early, so it can
	// never fail the test after it ended.
	var browser sync.WaitGroup
	browserErrs := make(chan error, 8)
	defer browser.Wait()
	bctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := oauth.NewHandler(oauth.Config{Server: srv.MCPURL, Store: store, RedirectURL: redirect.URL(),
		Login: redirect.Fetcher(func(authURL string) {
			browser.Add(1)
			go func() {
				defer browser.Done()
				if err := srv.Approve(bctx, authURL); err != nil {
					select {
					case browserErrs <- err:
					default:
					}
				}
			}()
		})})
	if err != nil {
		t.Fatal(err)
	}
	c, err := connect(t, srv, h)
	browser.Wait()
	select {
	case berr := <-browserErrs:
		t.Errorf("browser: %v", berr)
	default:
	}
	if err != nil {
		t.Fatalf("login: %v", err)
	}
	if got := whoami(t, c); got != "you are user1" {
		t.Errorf("whoami after login = %q", got)
	}
	return h
}

func TestLoginRefreshAndRevocation(t *testing.T) {
	srv := oauthtest.New(t)
	store := &oauth.Store{Dir: filepath.Join(t.TempDir(), "tokens")}
	login(t, srv, store)
	if srv.Count("register") != 1 || srv.Count("authorize") != 1 || srv.Count("code") != 1 {
		t.Errorf("register %d, authorize %d, code %d; want one each", srv.Count("register"), srv.Count("authorize"), srv.Count("code"))
	}

	t.Run("the grant is stored mode 0600 and names no secret in its String", func(t *testing.T) {
		g, err := store.Load(srv.MCPURL, "")
		if err != nil || g.AccessToken != srv.LastAccessToken() || g.RefreshToken == "" || g.Resource != srv.MCPURL {
			t.Fatalf("stored grant: %+v, %v", g, err)
		}
		entries, _ := os.ReadDir(store.Dir)
		for _, e := range entries {
			info, _ := e.Info()
			if info.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %v", e.Name(), info.Mode().Perm())
			}
		}
		if strings.Contains(g.String(), g.AccessToken) {
			t.Error("String shows the token")
		}
	})

	t.Run("a later process uses the stored grant without a login", func(t *testing.T) {
		h, err := oauth.NewHandler(oauth.Config{Server: srv.MCPURL, Store: store})
		if err != nil {
			t.Fatal(err)
		}
		c, err := connect(t, srv, h)
		if err != nil || whoami(t, c) != "you are user1" {
			t.Fatalf("connect: %v", err)
		}
		if srv.Count("authorize") != 1 {
			t.Error("a second login happened")
		}
	})

	t.Run("a refused token is refreshed once, with the resource, and saved", func(t *testing.T) {
		srv.ExpireAccess()
		before, _ := store.Load(srv.MCPURL, "")
		h, _ := oauth.NewHandler(oauth.Config{Server: srv.MCPURL, Store: store})
		c, err := connect(t, srv, h)
		if err != nil || whoami(t, c) != "you are user1" {
			t.Fatalf("connect after expiry: %v", err)
		}
		after, _ := store.Load(srv.MCPURL, "")
		if srv.Count("refresh") != 1 || after.AccessToken == before.AccessToken || after.RefreshToken == before.RefreshToken {
			t.Errorf("refreshes %d; the stored tokens changed: %v (rotated refresh: %v)", srv.Count("refresh"), after.AccessToken != before.AccessToken, after.RefreshToken != before.RefreshToken)
		}
	})

	t.Run("an expired token is refreshed before it is sent", func(t *testing.T) {
		g, _ := store.Load(srv.MCPURL, "")
		g.Expiry = time.Now().Add(-time.Minute)
		if err := store.Save(g); err != nil {
			t.Fatal(err)
		}
		n := srv.Count("refresh")
		h, _ := oauth.NewHandler(oauth.Config{Server: srv.MCPURL, Store: store})
		c, err := connect(t, srv, h)
		if err != nil || whoami(t, c) != "you are user1" || srv.Count("refresh") != n+1 {
			t.Fatalf("connect: %v; refreshes %d, want %d", err, srv.Count("refresh"), n+1)
		}
	})

	t.Run("a revoked grant is a LoginRequiredError naming the server", func(t *testing.T) {
		srv.Revoke()
		h, _ := oauth.NewHandler(oauth.Config{Server: srv.MCPURL, Store: store})
		_, err := connect(t, srv, h)
		var lr *oauth.LoginRequiredError
		if !errors.As(err, &lr) || lr.Server != srv.MCPURL || !strings.Contains(lr.Error(), "revoked") {
			t.Fatalf("err = %v; want a *LoginRequiredError", err)
		}
		g, _ := store.Load(srv.MCPURL, "")
		if strings.Contains(err.Error(), g.AccessToken) || strings.Contains(err.Error(), g.RefreshToken) {
			t.Error("the error shows a token")
		}
	})

	t.Run("no stored login and nobody to log in", func(t *testing.T) {
		h, _ := oauth.NewHandler(oauth.Config{Server: srv.MCPURL, Principal: "alice", Store: store})
		_, err := connect(t, srv, h)
		var lr *oauth.LoginRequiredError
		if !errors.As(err, &lr) || lr.Principal != "alice" || !strings.Contains(err.Error(), "no stored login") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestPrincipalsNeverShareAGrant(t *testing.T) {
	srv := oauthtest.New(t)
	store := &oauth.Store{Dir: t.TempDir()}
	login(t, srv, store)
	if _, err := store.Load(srv.MCPURL, "bob"); !errors.Is(err, oauth.ErrNoGrant) {
		t.Errorf("bob sees a grant: %v", err)
	}
	gs, _ := store.List()
	if len(gs) != 1 || gs[0].Principal != "" {
		t.Errorf("grants = %v", gs)
	}
	if ok, err := store.Delete(srv.MCPURL, ""); !ok || err != nil {
		t.Errorf("delete: %v, %v", ok, err)
	}
}

func TestClientCredentials(t *testing.T) {
	srv := oauthtest.New(t)
	h, err := oauth.NewHandler(oauth.Config{Server: srv.MCPURL, ClientCredentials: true, ClientID: "robot", ClientSecret: srv.Secret})
	if err != nil {
		t.Fatal(err)
	}
	c, err := connect(t, srv, h)
	if err != nil {
		t.Fatal(err)
	}
	if got := whoami(t, c); got != "you are robot" || srv.Count("client_credentials") != 1 {
		t.Errorf("whoami = %q, grants %d", got, srv.Count("client_credentials"))
	}
}
