// Package pgtest gives a test a PostgreSQL schema of its own, so tests and
// packages sharing one server (and its public schema) never see each
// other's tables. A test rig: tests only.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/session"
)

// ErrUnreachable is wrapped by Create's error when the server cannot be
// reached.
var ErrUnreachable = errors.New("pgtest: server unreachable")

// Create makes a schema named prefix plus random hex in the PostgreSQL at
// raw and returns its name and the function that drops it (with its
// tables).
func Create(ctx context.Context, raw, prefix string) (schema string, drop func(), err error) {
	conn, err := pgx.Connect(ctx, raw)
	if err != nil {
		return "", nil, fmt.Errorf("%w: PostgreSQL at %s: %v", ErrUnreachable, session.Redact(raw), err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 6)
	rand.Read(b)
	schema = prefix + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", nil, err
	}
	drop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, raw); err == nil {
			conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			conn.Close(ctx)
		}
	}
	return schema, drop, nil
}

// Schema is Create for t: an unreachable server is testenv.Missing, the
// schema is dropped when t ends.
func Schema(t testing.TB, raw, prefix string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	schema, drop, err := Create(ctx, raw, prefix)
	if errors.Is(err, ErrUnreachable) {
		testenv.Missing(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return schema
}

// URL returns raw with its search_path set to schema.
func URL(raw, schema string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}
