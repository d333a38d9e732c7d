package oauth

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// LocalRedirect receives the authorization server's redirect at the end of
// a login in a browser: an HTTP server on 127.0.0.1 (a loopback redirect,
// as OAuth 2.1 asks of native apps) whose /callback takes the code.
type LocalRedirect struct {
	l       net.Listener
	srv     *http.Server
	results chan *auth.AuthorizationResult
	once    sync.Once
}

// NewLocalRedirect listens on a free port of 127.0.0.1 (addr "" ) or on
// addr ("127.0.0.1:PORT", for an authorization server that registered a
// fixed redirect).
func NewLocalRedirect(addr string) (*LocalRedirect, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("oauth: listening for the login's redirect: %w", err)
	}
	r := &LocalRedirect{l: l, results: make(chan *auth.AuthorizationResult, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /callback", r.callback)
	r.srv = &http.Server{Handler: mux}
	go r.srv.Serve(l)
	return r, nil
}

// URL is the redirect URL to register: http://127.0.0.1:PORT/callback.
func (r *LocalRedirect) URL() string { return "http://" + r.l.Addr().String() + "/callback" }

func (r *LocalRedirect) callback(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if e := q.Get("error"); e != "" {
		fmt.Fprintf(w, "<p>The login failed: %s. You can close this window.</p>", html.EscapeString(e+" "+q.Get("error_description")))
	} else {
		fmt.Fprint(w, "<p>agcore is logged in. You can close this window.</p>")
	}
	res := &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}
	select {
	case r.results <- res:
	default: // a second redirect: the first counts
	}
}

// Fetcher returns the SDK's AuthorizationCodeFetcher for a login through
// this redirect: show tells the user the URL to open (and may open a
// browser); it then waits for the redirect or ctx.
func (r *LocalRedirect) Fetcher(show func(authURL string)) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		show(args.URL)
		select {
		case res := <-r.results:
			if res.Code == "" {
				return nil, errors.New("the authorization server sent no code (the login was refused or cancelled)")
			}
			return res, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close stops listening.
func (r *LocalRedirect) Close() error {
	var err error
	r.once.Do(func() { err = r.srv.Close() })
	return err
}
