package redis

import (
	"context"
	"fmt"
	"log/slog"

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
	if _, err := goredis.ParseURL(url); err != nil {
		return err
	}
	return nil
}

func (opener) Open(ctx context.Context, url string, o session.OpenOptions) (*session.Opened, error) {
	// go-redis writes its pool's complaints (a failed dial, a handshake
	// the server refused) to its own logger, stderr by default: they go
	// to the caller's logger, at debug level, instead. The logger is
	// go-redis's one for the whole program.
	goredis.SetLogger(logger{o.Logger})
	st, err := Open(ctx, url)
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
