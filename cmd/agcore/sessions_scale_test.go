package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sessiontest"
	"github.com/agcore/agcore/session/sqlite"
)

// sessions list of 1,000 sessions of 100 messages, through the built
// binary over the default SQLite store: it reads only the sessions' stored
// metadata, so it costs about what starting the program costs. The test
// prints the wall time and the process's peak resident memory (it asserts
// the listing, never a timing). Under the race detector the store is smaller.
func TestSessionsListThousandSessions(t *testing.T) {
	skipShort(t, "fills a store of 100,000 messages")
	t.Parallel()
	c := newCLI(t)
	st, err := sqlite.Open(t.Context(), filepath.Join(c.home, "agcore.db"))
	if err != nil {
		t.Fatal(err)
	}
	// Filling the store is this process's work (1,000 transactions in the
	// pure-Go SQLite), which the race detector slows tenfold (30 s); the
	// listing runs in the agcore binary, built without it. Under the
	// detector the store is smaller, and .ci/run runs the test whole
	// without it.
	sessions, messages := sessiontest.ListSessions, sessiontest.ListMessages
	if raceEnabled {
		sessions, messages = 200, 10
	}
	for i := range sessions {
		id := fmt.Sprintf("s%04d", i)
		if err := st.Append(t.Context(), id, session.Turn{ID: "t", Model: "gpt-4o-mini",
			Messages: sessiontest.Conversation(id, messages)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	measure := func(args ...string) (string, time.Duration, int64) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := c.command(ctx, args...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errOut.String())
		}
		wall := time.Since(start)
		var rss int64
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = int64(ru.Maxrss) * 1024 // kilobytes on Linux
		}
		return out.String(), wall, rss
	}
	measure("version") // the binary in the page cache
	_, baseWall, baseRSS := measure("version")
	for _, args := range [][]string{{"sessions", "list"}, {"sessions", "list", "--json"}, {"sessions", "list", "-n", "20"}} {
		out, wall, rss := measure(args...)
		want := sessions
		if len(args) > 2 && args[2] == "-n" {
			want = 20
		}
		if args[len(args)-1] == "--json" {
			var listed struct{ Sessions []session.Info }
			if err := json.Unmarshal([]byte(out), &listed); err != nil {
				t.Fatal(err)
			}
			if len(listed.Sessions) != want || listed.Sessions[0].Messages != messages || listed.Sessions[0].Title == "" {
				t.Fatalf("%v: %d sessions, first %+v", args, len(listed.Sessions), listed.Sessions[0])
			}
		} else if n := strings.Count(out, "\n") - 1; n != want {
			t.Fatalf("%v: %d lines, want %d", args, n, want)
		}
		t.Logf("agcore %s over %d sessions of %d messages: %v wall, %.1f MB peak RSS (agcore version: %v, %.1f MB)",
			strings.Join(args, " "), sessions, messages, wall.Round(time.Millisecond),
			float64(rss)/(1<<20), baseWall.Round(time.Millisecond), float64(baseRSS)/(1<<20))
	}
}
