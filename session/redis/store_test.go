package redis_test

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

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/redis"
	"github.com/agcore/agcore/session/sessiontest"
)

// EnvURL names the environment variable holding the test server's URL,
// e.g. redis://127.0.0.1:6379/15.
const EnvURL = "AGCORE_TEST_REDIS"

func serverURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		testenv.Missing(t, "%s is not set: set it to a Redis URL (e.g. redis://127.0.0.1:6379/15) to run the Redis store's tests", EnvURL)
	}
	return u
}

func client(t testing.TB) *goredis.Client {
	t.Helper()
	o, err := goredis.ParseURL(serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// dropPrefix deletes every key that starts with prefix.
func dropPrefix(t testing.TB, c *goredis.Client, prefix string) {
	t.Helper()
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Error(err)
		return
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := c.Del(ctx, keys[:n]...).Err(); err != nil {
			t.Error(err)
			return
		}
		keys = keys[n:]
	}
}

// newPrefix returns a key prefix of the test's own, whose keys are
// deleted when it ends.
func newPrefix(t testing.TB) string {
	t.Helper()
	sum := sha256.Sum256([]byte(t.Name() + fmt.Sprint(os.Getpid())))
	p := "agcoretest:" + hex.EncodeToString(sum[:10]) + ":"
	c := client(t)
	dropPrefix(t, c, p)
	t.Cleanup(func() { dropPrefix(t, c, p) })
	return p
}

func open(t testing.TB, prefix string, opts ...redis.Option) *redis.Store {
	t.Helper()
	s, err := redis.Open(context.Background(), serverURL(t), append([]redis.Option{redis.WithPrefix(prefix)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	serverURL(t)
	sessiontest.Run(t, func(t *testing.T) session.Store { return open(t, newPrefix(t)) })
}

func TestCrash(t *testing.T) {
	serverURL(t)
	kills := 10
	if testing.Short() {
		kills = 4
	}
	var mu sync.Mutex
	prefixes := map[string]bool{}
	sessiontest.Crash(t, kills, func(dir string) (session.Store, error) {
		sum := sha256.Sum256([]byte(dir))
		p := "agcoretest:crash-" + hex.EncodeToString(sum[:10]) + ":"
		mu.Lock()
		prefixes[p] = true
		mu.Unlock()
		return redis.Open(context.Background(), os.Getenv(EnvURL), redis.WithPrefix(p))
	})
	c := client(t)
	for p := range prefixes {
		dropPrefix(t, c, p)
	}
}

func TestRefusesNewerLayout(t *testing.T) {
	p := newPrefix(t)
	open(t, p).Close()
	if err := client(t).Set(t.Context(), p+"version", redis.LayoutVersion+1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	s, err := redis.Open(t.Context(), serverURL(t), redis.WithPrefix(p))
	if err == nil {
		s.Close()
		t.Fatal("Open of a newer layout succeeded")
	}
	if !errors.Is(err, redis.ErrLayoutTooNew) {
		t.Fatalf("err = %v, want ErrLayoutTooNew", err)
	}
}

func TestTwoStoresOneSession(t *testing.T) {
	p := newPrefix(t)
	stores := []*redis.Store{open(t, p), open(t, p)}
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
}

func TestPasswordNotInErrors(t *testing.T) {
	_, err := redis.Open(t.Context(), "redis://user:s3cr3t-pw@127.0.0.1:6379/notanumber")
	if err == nil {
		t.Fatal("Open of a bad URL succeeded")
	}
	if strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Fatalf("the error shows the password: %v", err)
	}
	_ = llm.UserText
}

func BenchmarkStoreAppend(b *testing.B) {
	sessiontest.BenchAppend(b, func(b *testing.B) session.Store { return open(b, newPrefix(b)) })
}

func BenchmarkSessionLoad(b *testing.B) {
	sessiontest.BenchLoad(b, func(b *testing.B) session.Store { return open(b, newPrefix(b)) })
}

func BenchmarkAppendConcurrent64(b *testing.B) {
	sessiontest.BenchAppendConcurrent(b, 64, func(b *testing.B) session.Store { return open(b, newPrefix(b)) })
}

// BenchmarkFloorSet is the floor of BenchmarkStoreAppend: one SET of a
// value the size of a 10-message turn's JSON, a single round trip.
func BenchmarkFloorSet(b *testing.B) {
	sessiontest.BenchFloor(b, floorSet(b, newPrefix(b)))
}

// BenchmarkAppendVsFloor measures BenchmarkStoreAppend's append and
// BenchmarkFloorSet's SET in turns.
func BenchmarkAppendVsFloor(b *testing.B) {
	p := newPrefix(b)
	sessiontest.BenchAppendVsFloor(b, func(b *testing.B) session.Store { return open(b, p) }, floorSet(b, p))
}

// floorSet returns the floor's op, writing under prefix p.
func floorSet(b *testing.B, p string) func(i int) error {
	c := client(b)
	ctx := b.Context()
	body, err := json.Marshal(sessiontest.Conversation("bench", 10))
	if err != nil {
		b.Fatal(err)
	}
	return func(i int) error {
		return c.Set(ctx, fmt.Sprintf("%sfloor:%d", p, i), body, 0).Err()
	}
}

// BenchmarkSessionLoadUncached loads without the store's decoded-session
// cache: every load reads and decodes all 10,000 messages.
func BenchmarkSessionLoadUncached(b *testing.B) {
	sessiontest.BenchLoad(b, func(b *testing.B) session.Store { return open(b, newPrefix(b), redis.WithCacheBytes(0)) })
}

func BenchmarkList(b *testing.B) {
	sessiontest.BenchList(b, func(b *testing.B) session.Store { return open(b, newPrefix(b)) })
}

// BenchmarkLoadView loads cold (no cache), as a new process does.
func BenchmarkLoadView(b *testing.B) {
	sessiontest.BenchLoadView(b, func(b *testing.B) session.Store {
		return open(b, newPrefix(b), redis.WithCacheBytes(0))
	})
}

// Two stores on one prefix, each appending on the version it last saw.
func TestSharedStores(t *testing.T) {
	p := newPrefix(t)
	sessiontest.Shared(t, open(t, p), open(t, p))
}

// A prefix given in the URL keys the store under it, through
// session.Open too; an option given to Open wins over it.
func TestURLPrefix(t *testing.T) {
	p := newPrefix(t)
	sep := "?"
	if strings.Contains(serverURL(t), "?") {
		sep = "&"
	}
	u := serverURL(t) + sep + "prefix=" + url.QueryEscape(p)
	st, err := session.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Append(t.Context(), "via-url", session.Turn{ID: "t1", Messages: sessiontest.Conversation("u", 2)}); err != nil {
		t.Fatal(err)
	}
	if n, err := client(t).Exists(t.Context(), p+"s:via-url").Result(); err != nil || n != 1 {
		t.Fatalf("the session's key under the URL's prefix: %d, %v", n, err)
	}
	if _, err := open(t, p).Load(t.Context(), "via-url"); err != nil {
		t.Fatalf("a store with the same prefix: %v", err)
	}
	other := newPrefix(t)
	s, err := redis.Open(t.Context(), u, redis.WithPrefix(other))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Load(t.Context(), "via-url"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("WithPrefix over the URL's prefix: %v", err)
	}
	for _, bad := range []string{"prefix=", "prefix=a&prefix=b"} {
		if _, err := redis.Open(t.Context(), serverURL(t)+sep+bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
