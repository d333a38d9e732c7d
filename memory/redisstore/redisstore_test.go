package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/memory"
	"github.com/agcore/agcore/memory/redisstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// store returns a store on the test server (AGCORE_TEST_REDIS) under a
// prefix of its own, whose keys are deleted when the test ends.
func store(t *testing.T) *redisstore.Store {
	t.Helper()
	u := os.Getenv("AGCORE_TEST_REDIS")
	if u == "" {
		testenv.Missing(t, "AGCORE_TEST_REDIS is not set: set it to a Redis URL (e.g. redis://127.0.0.1:6379/15) to run the Redis memory store's tests")
	}
	o, err := goredis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(o)
	prefix := fmt.Sprintf("agcoretest:mem:%d:%s:", os.Getpid(), t.Name())
	t.Cleanup(func() {
		c.Del(context.Background(), prefix+"values", prefix+"keys")
		c.Close()
	})
	return redisstore.New(c, prefix)
}

func TestStore(t *testing.T) {
	ctx := t.Context()
	s := store(t)
	if _, err := s.Get(ctx, "x"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("Get missing = %v", err)
	}
	v := []byte("one")
	for _, k := range []string{"conv:b:2", "conv:a:1", "conv:b:1", "other", "conv:b;", "conv:b:\xff"} {
		if err := s.Put(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
	v[0] = 'X'
	items, err := s.List(ctx, "conv:b:")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || items[0].Key != "conv:b:1" || items[1].Key != "conv:b:2" || items[2].Key != "conv:b:\xff" || string(items[0].Value) != "one" {
		t.Errorf("List = %+v, want the prefix's keys in order with copied values", items)
	}
	if err := s.Put(ctx, "conv:b:1", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "conv:b:1"); err != nil || string(got) != "two" {
		t.Errorf("Get after overwrite = %q, %v", got, err)
	}
	if err := s.Delete(ctx, "conv:b:1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "never"); err != nil {
		t.Errorf("deleting a missing key: %v", err)
	}
	if items, _ := s.List(ctx, "conv:"); len(items) != 4 {
		t.Errorf("after delete: %+v", items)
	}
	if items, _ := s.List(ctx, ""); len(items) != 5 {
		t.Errorf("List of everything: %d items, want 5", len(items))
	}
}

// A conversation kept in Redis comes back whole and in order.
func TestConversation(t *testing.T) {
	ctx := t.Context()
	st := store(t)
	c, err := memory.Open(ctx, st, "sess", memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var want []llm.Message
	for i := range 12 {
		m := llm.UserText(fmt.Sprint("message ", i))
		want = append(want, m)
		if err := c.Add(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	again, err := memory.Open(ctx, st, "sess", memory.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := again.Messages()
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Text() != want[i].Text() {
			t.Fatalf("message %d = %q, want %q", i, got[i].Text(), want[i].Text())
		}
	}
}
