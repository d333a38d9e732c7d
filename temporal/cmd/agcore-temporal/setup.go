package main

import (
	"context"
	"log/slog"

	"github.com/agcore/agcore/session"
	_ "github.com/agcore/agcore/session/stores" // every kind of store --store names
)

// openStore opens the store a --store URL names with session.Open, as the
// agcore command does: sqlite:PATH, file:DIR, memory:, postgres://…,
// redis://…; empty means $AGCORE_HOME/agcore.db (~/.agcore by default).
// Its error is one line naming the store without its password.
func openStore(ctx context.Context, dsn string) (session.Store, func() error, error) {
	st, err := session.Open(ctx, dsn, session.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, nil, err
	}
	return st, st.Close, nil
}
