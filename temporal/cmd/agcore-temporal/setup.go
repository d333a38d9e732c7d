package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/postgres"
	sredis "github.com/agcore/agcore/session/redis"
	"github.com/agcore/agcore/session/sqlite"
)

// openStore opens the store a --store DSN names, as the agcore command
// does: sqlite:PATH (or a bare path), file:DIR, memory:, postgres://…,
// redis://…. Empty means $AGCORE_HOME/agcore.db (~/.agcore by default).
func openStore(ctx context.Context, dsn string) (session.Store, func() error, error) {
	noop := func() error { return nil }
	switch {
	case dsn == "" || dsn == "sqlite" || dsn == "sqlite:":
		home := os.Getenv("AGCORE_HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return nil, nil, err
			}
			home = filepath.Join(h, ".agcore")
		}
		return openSQLite(ctx, filepath.Join(home, "agcore.db"))
	case strings.HasPrefix(dsn, "sqlite:"):
		return openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"))
	case strings.HasPrefix(dsn, "file:"):
		fs, err := filestore.Open(strings.TrimPrefix(dsn, "file:"))
		if err != nil {
			return nil, nil, err
		}
		return fs, fs.Close, nil
	case dsn == "memory:" || dsn == "memory":
		return memstore.New(), noop, nil
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		pg, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, nil, fmt.Errorf("store %s: %w", redact(dsn), scrub(err, dsn))
		}
		return pg, pg.Close, nil
	case strings.HasPrefix(dsn, "redis://") || strings.HasPrefix(dsn, "rediss://"):
		rs, err := sredis.Open(ctx, dsn)
		if err != nil {
			return nil, nil, fmt.Errorf("store %s: %w", redact(dsn), scrub(err, dsn))
		}
		return rs, rs.Close, nil
	case strings.Contains(dsn, "://"):
		return nil, nil, fmt.Errorf("store %q: unknown scheme (sqlite:PATH, file:DIR, memory:, postgres://, redis://)", redact(dsn))
	default:
		return openSQLite(ctx, dsn)
	}
}

func openSQLite(ctx context.Context, path string) (session.Store, func() error, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, err
	}
	st, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("store sqlite:%s: %w", path, err)
	}
	return st, st.Close, nil
}

// redact hides a URL's password.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// scrub replaces the raw DSN in an error with its redacted form.
func scrub(err error, dsn string) error {
	if msg := err.Error(); strings.Contains(msg, dsn) {
		return fmt.Errorf("%s", strings.ReplaceAll(msg, dsn, redact(dsn)))
	}
	return err
}
