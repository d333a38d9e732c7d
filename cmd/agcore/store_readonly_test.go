package main_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/internal/testkit/pgtest"
	"github.com/agcore/agcore/internal/testkit/testenv"
)

// TestReadingRemoteStoresWritesNothing: sessions list, show and export on
// an empty PostgreSQL schema, a schema that does not exist, or a Redis
// prefix nothing was stored under report that nothing is stored there
// (exit 2) and leave the store as it was: no table, no version key. Once
// a run has stored a session, the same commands read it.
func TestReadingRemoteStoresWritesNothing(t *testing.T) {
	t.Parallel()
	reading := [][]string{{"sessions", "list"}, {"sessions", "show", "x"}, {"sessions", "export", "x"}}

	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		raw := os.Getenv("AGCORE_TEST_POSTGRES")
		if raw == "" {
			testenv.Missing(t, "AGCORE_TEST_POSTGRES is not set")
		}
		schema := pgtest.Schema(t, raw, "cli_readonly_")
		u, err := pgtest.URL(raw, schema)
		if err != nil {
			t.Fatal(err)
		}
		missing, _ := pgtest.URL(raw, schema+"_typo")
		conn, err := pgx.Connect(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		tables := func() int {
			var n int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1 OR table_schema = $2`, schema, schema+"_typo").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		c := newCLI(t)
		for _, args := range reading {
			for store, want := range map[string]string{u: "holds no agcore tables", missing: "no schema of the search_path"} {
				r := c.run("", append(args, "--store", store)...)
				if r.code != 2 || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
					t.Errorf("%v on %s: exit %d, want 2 and %q:\n%s", args, store, r.code, want, r.stderr)
				}
			}
		}
		if n := tables(); n != 0 {
			t.Fatalf("reading made %d tables", n)
		}
		storedThenRead(t, c, u)
	})

	t.Run("redis", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		raw := os.Getenv("AGCORE_TEST_REDIS")
		if raw == "" {
			testenv.Missing(t, "AGCORE_TEST_REDIS is not set")
		}
		store := redisPrefix(t, ctx, raw, "cli_readonly_")
		o, _ := goredis.ParseURL(raw)
		rdb := goredis.NewClient(o)
		defer rdb.Close()
		prefix := store[strings.Index(store, "prefix=")+len("prefix="):]
		prefix = strings.ReplaceAll(strings.ReplaceAll(prefix, "%3A", ":"), "%3a", ":")
		c := newCLI(t)
		for _, args := range reading {
			r := c.run("", append(args, "--store", store)...)
			if r.code != 2 || !strings.Contains(r.stderr, "no agcore keys under the prefix") {
				t.Errorf("%v: exit %d, want 2:\n%s", args, r.code, r.stderr)
			}
		}
		keys, err := rdb.Keys(ctx, prefix+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 0 {
			t.Fatalf("reading wrote the keys %q", keys)
		}
		storedThenRead(t, c, store)
	})
}

// storedThenRead stores a session in store with run, then reads it.
func storedThenRead(t *testing.T, c *cli, store string) {
	t.Helper()
	c.ok("run", "--provider", "demo", "--store", store, "--session", "kept", "Hello")
	if r := c.ok("sessions", "list", "--store", store); !strings.Contains(r.stdout, "kept") {
		t.Errorf("sessions list after a run:\n%s%s", r.stdout, r.stderr)
	}
	if r := c.ok("sessions", "export", "--store", store, "kept"); !strings.Contains(r.stdout, `"id":"kept"`) {
		t.Errorf("sessions export after a run:\n%s", r.stdout)
	}
}
