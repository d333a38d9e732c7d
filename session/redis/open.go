package redis

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/session"
)

func init() {
	session.Register("redis", opener{})
	session.Register("rediss", opener{})
}

// opener opens redis:// and rediss:// URLs for session.Open.
type opener struct{}

func (opener) Syntax() string { return "redis://…" }

func (opener) Check(url string) error {
	clientURL, _, _, err := splitPrefix(url)
	if err != nil {
		return err
	}
	_, err = goredis.ParseURL(clientURL)
	return err
}

func (opener) Open(ctx context.Context, url string, o session.OpenOptions) (*session.Opened, error) {
	// go-redis writes its pool's complaints (a failed dial, a handshake
	// the server refused) to its own logger, stderr by default: they go
	// to the caller's logger, at debug level, instead. The logger is
	// go-redis's one for the whole program.
	goredis.SetLogger(logger{o.Logger})
	opts := []Option{WithCacheBytes(o.CacheSize())}
	if o.ReadOnly {
		opts = append(opts, ReadOnly())
	}
	st, err := Open(ctx, url, opts...)
	if err != nil {
		return nil, err
	}
	return &session.Opened{Store: st, Description: session.Redact(url), Durable: true, Closer: st.Close}, nil
}

// logger is go-redis's logger over a slog.Logger.
type logger struct{ l *slog.Logger }

func (l logger) Printf(ctx context.Context, format string, v ...any) {
	if l.l != nil {
		l.l.DebugContext(ctx, "redis: "+fmt.Sprintf(format, v...))
	}
}

// splitPrefix takes the store's own query option, prefix, out of a URL
// (go-redis refuses options it does not know): the URL left for go-redis,
// the prefix, and whether the URL gave one. A prefix must not be empty.
func splitPrefix(rawURL string) (string, string, bool, error) {
	u, err := url.Parse(rawURL)
	if err != nil || !u.Query().Has("prefix") {
		return rawURL, "", false, nil // go-redis reports a malformed URL
	}
	q := u.Query()
	p := q.Get("prefix")
	if p == "" || len(q["prefix"]) > 1 {
		return "", "", false, errors.New("the prefix option must be given once, not empty")
	}
	q.Del("prefix")
	u.RawQuery = q.Encode()
	return u.String(), p, true, nil
}
