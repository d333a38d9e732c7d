package budget_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/internal/testkit/pgtest"
	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/postgres"
	"github.com/agcore/agcore/session/redis"
	"github.com/agcore/agcore/session/sqlite"
)

// A store the budget tests run on, with the function that opens another
// handle on the same data (a second replica, or the process after a
// restart).
type namedStore struct {
	name   string
	open   func(t *testing.T) session.Store
	shared bool // several processes may share it
}

// stores returns every kind of store agcore has; PostgreSQL and Redis are
// reached through $AGCORE_TEST_POSTGRES and $AGCORE_TEST_REDIS (skipped
// without them, failed under CI).
func stores(t *testing.T) []namedStore {
	mem := memstore.New()
	dir := t.TempDir()
	return []namedStore{
		{name: "memory", open: func(*testing.T) session.Store { return mem }},
		{name: "file", open: func(t *testing.T) session.Store {
			st, err := filestore.Open(filepath.Join(dir, "files"))
			if err != nil {
				t.Fatal(err)
			}
			return st
		}},
		{name: "sqlite", open: func(t *testing.T) session.Store {
			st, err := sqlite.Open(t.Context(), filepath.Join(dir, "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		}},
		{name: "postgres", shared: true, open: postgresOpener(t)},
		{name: "redis", shared: true, open: redisOpener(t)},
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// postgresOpener opens the test's own schema of $AGCORE_TEST_POSTGRES,
// made on first use and dropped when the test ends.
func postgresOpener(t *testing.T) func(*testing.T) session.Store {
	var u string
	return func(tt *testing.T) session.Store {
		raw := os.Getenv("AGCORE_TEST_POSTGRES")
		if raw == "" {
			testenv.Missing(tt, "AGCORE_TEST_POSTGRES is not set: set it to a PostgreSQL URL to run the budget tests on PostgreSQL")
		}
		if u == "" {
			schema, drop, err := pgtest.Create(tt.Context(), raw, "budget_")
			if errors.Is(err, pgtest.ErrUnreachable) {
				testenv.Missing(tt, "%v", err)
			}
			if err != nil {
				tt.Fatal(err)
			}
			t.Cleanup(drop) // the schema outlives the subtest that made it
			if u, err = pgtest.URL(raw, schema); err != nil {
				tt.Fatal(err)
			}
		}
		st, err := postgres.Open(tt.Context(), u)
		if err != nil {
			tt.Fatal(err)
		}
		tt.Cleanup(func() { st.Close() })
		return st
	}
}

// redisOpener opens $AGCORE_TEST_REDIS under a key prefix of the test's
// own, whose keys are deleted when the test ends.
func redisOpener(t *testing.T) func(*testing.T) session.Store {
	prefix := "agcore-budget-test:" + randomHex(6) + ":"
	cleaned := false
	return func(tt *testing.T) session.Store {
		raw := os.Getenv("AGCORE_TEST_REDIS")
		if raw == "" {
			testenv.Missing(tt, "AGCORE_TEST_REDIS is not set: set it to a Redis URL to run the budget tests on Redis")
		}
		if !cleaned {
			cleaned = true
			t.Cleanup(func() { dropPrefix(raw, prefix) })
		}
		st, err := redis.Open(tt.Context(), raw, redis.WithPrefix(prefix))
		if err != nil {
			testenv.Missing(tt, "Redis at %s: %v", session.Redact(raw), err)
		}
		tt.Cleanup(func() { st.Close() })
		return st
	}
}

// dropPrefix deletes the Redis keys under prefix.
func dropPrefix(raw, prefix string) {
	o, err := goredis.ParseURL(raw)
	if err != nil {
		return
	}
	c := goredis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		c.Del(ctx, keys...)
	}
}
