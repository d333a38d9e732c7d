package serve_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/postgres"
	"github.com/agcore/agcore/session/redis"
)

// sharedStores returns two handles on one store of kind, as two
// processes have: each its own connection pool (memory: one store).
func sharedStores(t *testing.T, kind string) [2]session.Store {
	t.Helper()
	var out [2]session.Store
	switch kind {
	case "memory":
		m := memstore.New()
		out = [2]session.Store{m, m}
	case "postgres":
		u := pgSchemaURL(t)
		for i := range out {
			st, err := postgres.Open(t.Context(), u)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			out[i] = st
		}
	case "redis":
		raw, prefix := redisPrefix(t)
		for i := range out {
			st, err := redis.Open(t.Context(), raw, redis.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			out[i] = st
		}
	}
	return out
}

// redisPrefix returns $AGCORE_TEST_REDIS and a key prefix of the test's
// own, whose keys are deleted when it ends.
func redisPrefix(t *testing.T) (raw, prefix string) {
	t.Helper()
	raw = os.Getenv("AGCORE_TEST_REDIS")
	if raw == "" {
		testenv.Missing(t, "AGCORE_TEST_REDIS is not set: set it to a Redis URL to run the test on Redis")
	}
	o, err := goredis.ParseURL(raw)
	if err != nil {
		t.Fatalf("AGCORE_TEST_REDIS: %v", err)
	}
	c := goredis.NewClient(o)
	if err := c.Ping(t.Context()).Err(); err != nil {
		c.Close()
		testenv.Missing(t, "Redis at %s: %v", session.Redact(raw), err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	prefix = "agcoretest:serve_" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() {
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var keys []string
		it := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for it.Next(ctx) {
			keys = append(keys, it.Val())
		}
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	return raw, prefix
}

// limitReplica is one server over store whose turns stream until gate
// closes, with at most max background turns per principal.
func limitReplica(t *testing.T, store session.Store, gate <-chan struct{}, max int) *env {
	t.Helper()
	e := &env{t: t}
	a, err := agent.New(paced(gate), agent.Config{Name: "echo", Store: store, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "echo", Agent: a, Store: store})
	if err != nil {
		t.Fatal(err)
	}
	e.h, err = serve.New(serve.Options{Agents: set, MaxBackground: max})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.h)
	testwait.CloseOnCleanup(t, e.srv)
	return e
}

// TestBackgroundLimitAcrossReplicas: many background turns of one
// principal sent at once to two servers over one store (two handles on
// PostgreSQL, on Redis, one memory store) are admitted MaxBackground at
// most, together: the others get 429 too_many_background_responses.
// Once the admitted ones ended, the principal's next turns are admitted
// again, on either server.
func TestBackgroundLimitAcrossReplicas(t *testing.T) {
	const max, tries = 3, 16
	for _, kind := range []string{"memory", "postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			stores := sharedStores(t, kind)
			gate := make(chan struct{})
			replicas := [2]*env{limitReplica(t, stores[0], gate, max), limitReplica(t, stores[1], gate, max)}
			var (
				mu       sync.Mutex
				admitted []string
				refused  int
				wg       sync.WaitGroup
				start    = make(chan struct{})
			)
			for i := range tries {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					resp := replicas[i%2].do("POST", "/v1/responses", map[string]any{"model": "echo", "input": fmt.Sprint("turn ", i), "background": true,
						"conversation": fmt.Sprint("c", i)})
					if resp.StatusCode == http.StatusTooManyRequests {
						if code, _ := errCode(t, resp); code != "too_many_background_responses" {
							t.Errorf("429 %s", code)
						}
						mu.Lock()
						refused++
						mu.Unlock()
						return
					}
					got := decode(t, resp)
					if resp.StatusCode != 200 {
						t.Errorf("turn %d: %d %v", i, resp.StatusCode, got)
						return
					}
					mu.Lock()
					admitted = append(admitted, got["id"].(string))
					mu.Unlock()
				}()
			}
			close(start)
			wg.Wait()
			t.Logf("%s: %d background turns at once on 2 servers, limit %d: %d admitted, %d refused", kind, tries, max, len(admitted), refused)
			if len(admitted) > max {
				t.Fatalf("%d background turns admitted, over the limit of %d", len(admitted), max)
			}
			if len(admitted) == 0 || len(admitted)+refused != tries {
				t.Fatalf("%d admitted, %d refused of %d", len(admitted), refused, tries)
			}
			close(gate)
			for i, id := range admitted {
				if got := waitStatus(t, replicas[i%2], id); got["status"] != "completed" {
					t.Fatalf("%s: %v", id, got)
				}
			}
			// Their slots are free again: max more are admitted.
			for i := range max {
				var resp *http.Response
				for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
					resp = replicas[i%2].do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "again", "background": true,
						"conversation": fmt.Sprint("again", i)})
					if resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
						break
					}
					resp.Body.Close()
				}
				got := decode(t, resp)
				if resp.StatusCode != 200 {
					t.Fatalf("after the first turns ended: %d %v", resp.StatusCode, got)
				}
				waitStatus(t, replicas[i%2], got["id"].(string))
			}
		})
	}
}
