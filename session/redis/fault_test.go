package redis_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/redis"
	"github.com/agcore/agcore/session/sessiontest"
)

// killClients kills (CLIENT KILL ID) the connections named name and
// returns how many.
func killClients(ctx context.Context, admin *goredis.Client, name string) int {
	list, err := admin.ClientList(ctx).Result()
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(line, " name="+name+" ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if id, ok := strings.CutPrefix(f, "id="); ok {
				if admin.Do(ctx, "CLIENT", "KILL", "ID", id).Err() == nil {
					n++
				}
			}
		}
	}
	return n
}

// Connections killed at random moments while 4 writers append to one
// session: every append either returns nil or an error, retrying the
// failed ones stores every turn exactly once, whole, and the session
// stays valid.
func TestFaultClientKill(t *testing.T) {
	p := newPrefix(t)
	name := fmt.Sprintf("agcore-chaos-%d", rand.Uint32())
	u := serverURL(t)
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	s, err := redis.Open(t.Context(), u+sep+"client_name="+name+"&pool_size=4", redis.WithPrefix(p))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	admin := client(t)
	stop := make(chan struct{})
	var killer sync.WaitGroup
	kills := 0
	killer.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(rand.IntN(2000)) * time.Microsecond):
			}
			kills += killClients(context.Background(), admin, name)
		}
	})
	const writers, per = 4, 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed, tags []string
	for w := range writers {
		wg.Go(func() {
			for n := range per {
				tag := fmt.Sprintf("w%d-%d", w, n)
				mu.Lock()
				tags = append(tags, tag)
				mu.Unlock()
				if err := s.Append(ctx, "chaos", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)}); err != nil {
					mu.Lock()
					failed = append(failed, tag)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	killer.Wait()
	for _, tag := range failed {
		for s.Append(ctx, "chaos", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)}) != nil {
		}
	}
	t.Logf("%d connections killed, %d appends failed and were retried", kills, len(failed))
	got, err := s.Load(ctx, "chaos")
	if err != nil {
		t.Fatal(err)
	}
	if got.Turns != writers*per || len(got.Messages) != 4*writers*per {
		t.Fatalf("%d turns, %d messages; want %d, %d", got.Turns, len(got.Messages), writers*per, 4*writers*per)
	}
	seen := map[string]int{}
	for i := 0; i < len(got.Messages); i += 4 {
		tag, _, _ := strings.Cut(strings.TrimPrefix(got.Messages[i].Text(), "["), " ")
		seen[tag]++
	}
	for _, tag := range tags {
		if seen[tag] != 1 {
			t.Errorf("turn %s stored %d times", tag, seen[tag])
		}
	}
}

// A context deadline shorter than the server's answer: Append fails with
// the deadline and the turn is either stored once or not at all; a retry
// settles it.
func TestFaultDeadline(t *testing.T) {
	s := open(t, newPrefix(t))
	ctx := t.Context()
	for i := range 50 {
		tag := fmt.Sprint("d", i)
		short, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(400))*time.Microsecond)
		_ = s.Append(short, "dl", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)})
		cancel()
		if err := s.Append(ctx, "dl", session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Load(ctx, "dl")
	if err != nil || got.Turns != 50 || len(got.Messages) != 200 {
		t.Fatalf("Load = %v, %d turns, %d messages; want 50, 200", err, got.Turns, len(got.Messages))
	}
}
