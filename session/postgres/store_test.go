package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/postgres"
	"github.com/agcore/agcore/session/sessiontest"
)

// EnvURL names the environment variable holding the test server's
// connection string, e.g.
// postgres://root@127.0.0.1:5432/test?sslmode=disable.
const EnvURL = "AGCORE_TEST_POSTGRES"

func serverURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		testenv.Missing(t, "%s is not set: set it to a PostgreSQL URL (e.g. postgres://root@127.0.0.1:5432/test?sslmode=disable) to run the PostgreSQL store's tests", EnvURL)
	}
	return u
}

// adminPool connects to the test server without a schema of its own.
func adminPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// schemaURL returns the server URL with search_path set to schema.
func schemaURL(t testing.TB, schema string) string {
	t.Helper()
	u, err := url.Parse(serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// newSchema makes a schema of its own for the test, dropped when it ends,
// and returns the URL that uses it.
func newSchema(t testing.TB) string {
	t.Helper()
	sum := sha256.Sum256([]byte(t.Name() + fmt.Sprint(os.Getpid())))
	return ensureSchema(t, "t_"+hex.EncodeToString(sum[:10]), true)
}

func ensureSchema(t testing.TB, name string, drop bool) string {
	t.Helper()
	admin := adminPool(t)
	ctx := context.Background()
	if _, err := admin.Exec(ctx, `DROP SCHEMA IF EXISTS `+name+` CASCADE`); err != nil && drop {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+name); err != nil {
		t.Fatal(err)
	}
	if drop {
		t.Cleanup(func() {
			if _, err := admin.Exec(ctx, `DROP SCHEMA IF EXISTS `+name+` CASCADE`); err != nil {
				t.Errorf("dropping schema %s: %v", name, err)
			}
		})
	}
	return schemaURL(t, name)
}

func open(t testing.TB, u string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(context.Background(), u, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	serverURL(t)
	sessiontest.Run(t, func(t *testing.T) session.Store { return open(t, newSchema(t)) })
}

// TestCrash kills a child process appending through its own pool, over
// and over; the schema is named after the crash suite's directory, which
// the child is given too.
func TestCrash(t *testing.T) {
	serverURL(t)
	kills := 10
	if testing.Short() {
		kills = 4
	}
	var mu sync.Mutex
	var schemas []string
	sessiontest.Crash(t, kills, func(dir string) (session.Store, error) {
		sum := sha256.Sum256([]byte(dir))
		name := "crash_" + hex.EncodeToString(sum[:10])
		u, err := url.Parse(os.Getenv(EnvURL))
		if err != nil {
			return nil, err
		}
		pool, err := pgxpool.New(context.Background(), u.String())
		if err != nil {
			return nil, err
		}
		_, err = pool.Exec(context.Background(), `CREATE SCHEMA IF NOT EXISTS `+name)
		pool.Close()
		if err != nil {
			return nil, err
		}
		mu.Lock()
		if !strings.Contains(strings.Join(schemas, ","), name) {
			schemas = append(schemas, name)
		}
		mu.Unlock()
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		return postgres.Open(context.Background(), u.String())
	})
	admin := adminPool(t)
	for _, name := range schemas {
		if _, err := admin.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+name+` CASCADE`); err != nil {
			t.Error(err)
		}
	}
}

func TestReopenAndRetry(t *testing.T) {
	u := newSchema(t)
	s := open(t, u)
	want := sessiontest.Conversation("r", 8)
	if err := s.Append(t.Context(), "keep", session.Turn{ID: "1", Messages: want, Hashes: []uint64{1, 2}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := open(t, u) // migrations are a no-op on a current schema
	if err := s2.Append(t.Context(), "keep", session.Turn{ID: "1", Messages: want}); err != nil {
		t.Fatal(err)
	}
	got, err := s2.Load(t.Context(), "keep")
	if err != nil || got.Turns != 1 || len(got.Messages) != 8 || len(got.Hashes) != 2 {
		t.Fatalf("after reopen and a retried turn: %v, %+v", err, got)
	}
}

func TestRefusesNewerSchema(t *testing.T) {
	u := newSchema(t)
	s := open(t, u)
	s.Close()
	if err := s.Pool().Ping(context.Background()); err == nil {
		t.Fatal("Close left the pool open")
	}
	pool, err := pgxpool.New(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if _, err := pool.Exec(t.Context(), `UPDATE agcore_schema SET version = $1`, postgres.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	s3, err := postgres.Open(t.Context(), u)
	if err == nil {
		s3.Close()
		t.Fatal("Open of a newer schema succeeded")
	}
	if !errors.Is(err, postgres.ErrSchemaTooNew) || !strings.Contains(err.Error(), "upgrade agcore") {
		t.Fatalf("Open of a newer schema: err = %v, want ErrSchemaTooNew", err)
	}
}

// Many processes opening a new database at once migrate it once.
func TestConcurrentOpen(t *testing.T) {
	u := newSchema(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := postgres.Open(t.Context(), u)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			errs <- s.Append(t.Context(), "x", session.Turn{ID: "same", Messages: []llm.Message{llm.UserText("hi")}})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	s := open(t, u)
	if got, err := s.Load(t.Context(), "x"); err != nil || got.Turns != 1 {
		t.Fatalf("Load = %v, %+v", err, got)
	}
}

// Two stores (two pools) on one schema stand in for two processes.
func TestTwoStoresOneSession(t *testing.T) {
	u := newSchema(t)
	stores := []*postgres.Store{open(t, u), open(t, u)}
	// stores[0] holds the session decoded (its cache) before the others append.
	if err := stores[0].Append(t.Context(), "shared", session.Turn{ID: "first", Messages: sessiontest.Conversation("first", 3)}); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[0].Load(t.Context(), "shared"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i, s := range stores {
		for g := range 3 {
			wg.Go(func() {
				for n := range 10 {
					tag := fmt.Sprintf("s%d-g%d-%d", i, g, n)
					if err := s.Append(t.Context(), "shared", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 3)}); err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := stores[0].Load(t.Context(), "shared")
	if err != nil || got.Turns != 61 || len(got.Messages) != 183 {
		t.Fatalf("Load = %v, %d turns, %d messages; want 61, 183", err, got.Turns, len(got.Messages))
	}
	for i := 3; i < len(got.Messages); i += 3 { // after the first turn
		var s, g, n int
		if _, err := fmt.Sscanf(got.Messages[i].Text(), "[s%d-g%d-%d ", &s, &g, &n); err != nil {
			t.Fatalf("message %d does not start a turn: %v", i, err)
		}
	}
}

func BenchmarkStoreAppend(b *testing.B) {
	sessiontest.BenchAppend(b, func(b *testing.B) session.Store { return open(b, newSchema(b)) })
}

func BenchmarkSessionLoad(b *testing.B) {
	sessiontest.BenchLoad(b, func(b *testing.B) session.Store { return open(b, newSchema(b)) })
}

func BenchmarkAppendConcurrent64(b *testing.B) {
	sessiontest.BenchAppendConcurrent(b, 64, func(b *testing.B) session.Store { return open(b, newSchema(b)) })
}

// BenchmarkFloorCommit is the floor of BenchmarkStoreAppend: one row of the
// same size (a 10-message turn's JSON) inserted in its own transaction,
// committed with synchronous_commit on, as the server's fsync'd commit
// costs any durable write.
func BenchmarkFloorCommit(b *testing.B) {
	sessiontest.BenchFloor(b, floorCommit(b, open(b, newSchema(b))))
}

// BenchmarkAppendVsFloor measures BenchmarkStoreAppend's append and
// BenchmarkFloorCommit's insert in turns, through one store's pool.
func BenchmarkAppendVsFloor(b *testing.B) {
	s := open(b, newSchema(b))
	sessiontest.BenchAppendVsFloor(b, func(*testing.B) session.Store { return s }, floorCommit(b, s))
}

// floorCommit makes the floor's table in s's schema and returns the
// floor's op.
func floorCommit(b *testing.B, s *postgres.Store) func(i int) error {
	ctx := b.Context()
	if _, err := s.Pool().Exec(ctx, `CREATE TABLE floor (id bigint PRIMARY KEY, body jsonb NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	body, err := json.Marshal(sessiontest.Conversation("bench", 10))
	if err != nil {
		b.Fatal(err)
	}
	return func(i int) error {
		_, err := s.Pool().Exec(ctx, `INSERT INTO floor (id, body) VALUES ($1, $2)`, i, body)
		return err
	}
}

// BenchmarkSessionLoadUncached loads without the store's decoded-session
// cache: every load reads and decodes all 10,000 messages.
func BenchmarkSessionLoadUncached(b *testing.B) {
	sessiontest.BenchLoad(b, func(b *testing.B) session.Store { return open(b, newSchema(b), postgres.WithCacheBytes(0)) })
}

func BenchmarkList(b *testing.B) {
	sessiontest.BenchList(b, func(b *testing.B) session.Store { return open(b, newSchema(b)) })
}

// BenchmarkLoadView loads cold (no cache), as a new process does.
func BenchmarkLoadView(b *testing.B) {
	sessiontest.BenchLoadView(b, func(b *testing.B) session.Store {
		return open(b, newSchema(b), postgres.WithCacheBytes(0))
	})
}

// Two stores (two pools) on one schema, each summing the usage it last
// saw.
func TestSharedStores(t *testing.T) {
	u := newSchema(t)
	sessiontest.Shared(t, open(t, u), open(t, u))
}
