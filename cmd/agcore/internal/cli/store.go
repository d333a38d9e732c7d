package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/postgres"
	sredis "github.com/agcore/agcore/session/redis"
	"github.com/agcore/agcore/session/sqlite"
)

// openedStore is a session store and how to describe and close it.
type openedStore struct {
	session.Store
	desc    string // "sqlite:/home/me/.agcore/agcore.db", "file:DIR", "memory:"
	durable bool   // sessions outlive the process
	close   func() error
}

// openStore opens the store a --store DSN names:
//
//	""            the embedded SQLite database $AGCORE_HOME/agcore.db
//	sqlite:PATH   a SQLite database file
//	file:DIR      the JSON Lines file store in DIR
//	memory:       an in-memory store (nothing is kept)
//	postgres://…  a PostgreSQL database (session/postgres; the password from
//	              the URL or PGPASSWORD)
//	redis://…     a Redis database (session/redis; rediss:// for TLS; the
//	              password from the URL or REDIS_PASSWORD)
//
// A password in a URL is never shown: descriptions and errors carry the
// URL redacted.
func openStore(ctx context.Context, dsn, home string, logger *slog.Logger) (*openedStore, error) {
	switch {
	case dsn == "" || dsn == "sqlite" || dsn == "sqlite:":
		if err := os.MkdirAll(home, 0o700); err != nil {
			return nil, fmt.Errorf("store: creating AGCORE_HOME: %w", err)
		}
		return openSQLite(ctx, config.DefaultDB(home))
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("store %s: %w", dsn, err)
		}
		return openSQLite(ctx, path)
	case strings.HasPrefix(dsn, "file:"):
		dir := strings.TrimPrefix(dsn, "file:")
		if dir == "" {
			return nil, fmt.Errorf("store %q: file: needs a directory, e.g. file:./sessions", dsn)
		}
		fs, err := filestore.Open(dir, filestore.WithLogger(logger))
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", dsn, err)
		}
		abs, _ := filepath.Abs(dir)
		return &openedStore{Store: fs, desc: "file:" + abs, durable: true, close: fs.Close}, nil
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		pg, err := postgres.Open(ctx, dsn)
		if err != nil {
			return nil, redactedErr(dsn, err)
		}
		return &openedStore{Store: pg, desc: redactURL(dsn), durable: true, close: pg.Close}, nil
	case strings.HasPrefix(dsn, "redis://") || strings.HasPrefix(dsn, "rediss://"):
		rs, err := sredis.Open(ctx, dsn)
		if err != nil {
			return nil, redactedErr(dsn, err)
		}
		return &openedStore{Store: rs, desc: redactURL(dsn), durable: true, close: rs.Close}, nil
	case dsn == "memory:" || dsn == "memory":
		return &openedStore{Store: memstore.New(), desc: "memory:", close: func() error { return nil }}, nil
	}
	return nil, fmt.Errorf("store %q: want sqlite:PATH, file:DIR, postgres://…, redis://… or memory: (the default is %s)", redactURL(dsn), "sqlite:$AGCORE_HOME/agcore.db")
}

// redactURL returns dsn with the password of its user info, if any,
// replaced by "xxxxx".
func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		if i := strings.Index(dsn, "://"); i >= 0 { // unparsable: keep only the scheme
			return dsn[:i+3] + "…"
		}
		return dsn
	}
	return u.Redacted()
}

// redactedErr is the error of opening the store dsn names, its text rid of
// the URL's password.
func redactedErr(dsn string, err error) error {
	msg := err.Error()
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
			if esc := url.PathEscape(pw); esc != pw {
				msg = strings.ReplaceAll(msg, esc, "xxxxx")
			}
		}
	}
	return fmt.Errorf("store %s: %s", redactURL(dsn), msg)
}

func openSQLite(ctx context.Context, path string) (*openedStore, error) {
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return &openedStore{Store: db, desc: "sqlite:" + db.Path(), durable: true, close: db.Close}, nil
}

// openStoreToRead opens the store a --store DSN names for a command that
// only reads it (sessions list, show): nothing is created, and a database
// the user cannot write is opened read-only. The default store that does
// not exist yet is an empty one; a store named explicitly that does not
// exist is a usage error (a typo must not look like an empty store).
func openStoreToRead(ctx context.Context, dsn, home string) (*openedStore, error) {
	missing := func(what, path string) error {
		return exit(ExitUsage, "--store %s: no %s at %s (nothing has been stored there): check the path", dsn, what, path)
	}
	switch {
	case dsn == "" || dsn == "sqlite" || dsn == "sqlite:":
		path := config.DefaultDB(home)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return &openedStore{Store: memstore.New(), desc: "sqlite:" + path, durable: true, close: func() error { return nil }}, nil
		}
		return openSQLiteToRead(ctx, path)
	case strings.HasPrefix(dsn, "sqlite:"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, missing("database", path)
		}
		return openSQLiteToRead(ctx, path)
	case strings.HasPrefix(dsn, "file:"):
		dir := strings.TrimPrefix(dsn, "file:")
		if fi, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir() {
			return nil, missing("session directory", dir)
		}
	}
	return openStore(ctx, dsn, home, slog.New(slog.DiscardHandler))
}

func openSQLiteToRead(ctx context.Context, path string) (*openedStore, error) {
	db, err := sqlite.Open(ctx, path, sqlite.ReadOnly())
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return &openedStore{Store: db, desc: "sqlite:" + db.Path(), durable: true, close: db.Close}, nil
}
