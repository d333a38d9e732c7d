package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agcore/agcore/session"
)

func init() {
	session.Register("postgres", opener{})
	session.Register("postgresql", opener{})
}

// opener opens postgres:// and postgresql:// URLs for session.Open. pgx
// logs nothing unless given a tracer, and none is set.
type opener struct{}

func (opener) Syntax() string { return "postgres://…" }

func (opener) Check(url string) error {
	if _, err := pgxpool.ParseConfig(url); err != nil {
		return err
	}
	return nil
}

func (opener) Open(ctx context.Context, url string, o session.OpenOptions) (*session.Opened, error) {
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
