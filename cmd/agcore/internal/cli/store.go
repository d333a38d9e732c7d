package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"

	"github.com/agcore/agcore/session"
	_ "github.com/agcore/agcore/session/stores" // every kind of store --store names
)

// openedStore is a session store, how to describe it and how to close it.
type openedStore = session.Opened

// openStore opens the store a --store URL names, with session.Open ("" is
// the embedded SQLite database $AGCORE_HOME/agcore.db). toRead opens it
// for a command that only reads it (sessions list, show): nothing is
// created, a database the user cannot write is opened read-only, and a
// store named explicitly that does not exist is a usage error (a typo must
// not look like an empty store); more are further options (serve's
// --cache-size). Errors are one line naming the store without its
// password; they exit 2 for a store that does not exist, 1 otherwise.
func openStore(ctx context.Context, dsn, home string, logger *slog.Logger, toRead bool, more ...session.OpenOption) (*openedStore, error) {
	opts := append([]session.OpenOption{session.WithHome(home), session.WithLogger(logger)}, more...)
	if toRead {
		opts = append(opts, session.ReadOnly())
	}
	st, err := session.Open(ctx, dsn, opts...)
	switch {
	case errors.Is(err, session.ErrNoStore), errors.Is(err, session.ErrUnknownStore):
		return nil, exit(ExitUsage, "%v", err)
	case err != nil:
		return nil, exit(ExitFailed, "%s", storeOpenError(dsn, err))
	}
	return st, nil
}

// storeOpenError is a store's failure to open in one short line: a server
// that cannot be reached is named once, with what to check, instead of the
// driver's chain of wrapped dial errors (pgx repeats the address and the
// dial error at every layer).
func storeOpenError(dsn string, err error) string {
	var (
		op  *net.OpError
		dns *net.DNSError
	)
	where := "store " + session.Redact(dsn)
	switch {
	case errors.As(err, &dns):
		return fmt.Sprintf("%s: cannot find the host %q: check the store URL", where, dns.Name)
	case errors.Is(err, syscall.ECONNREFUSED):
		return where + ": nothing answers there (connection refused): is the server running, and is the URL right?"
	case errors.As(err, &op) && op.Op == "dial":
		addr := ""
		if op.Addr != nil {
			addr = " " + op.Addr.String()
		}
		return fmt.Sprintf("%s: cannot reach%s: %v", where, addr, op.Err)
	}
	return err.Error()
}
