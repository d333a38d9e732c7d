package main_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/internal/testkit/pgtest"
	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/session"
	_ "github.com/agcore/agcore/session/stores"
)

// The shared stores through the built binary: --store postgres://… and
// redis://… (and AGCORE_STORE) for run, chat, serve and sessions, with a
// password in the URL that nothing prints.

// remoteStore is a PostgreSQL or Redis store of one test.
type remoteStore struct {
	kind   string // "postgres" or "redis"
	url    string // with pw in it
	pw     string // a password no output may show
	prefix string // of the test's session ids, unique to the test
}

// forEachRemoteStore runs f in a parallel subtest for each test server: PostgreSQL
// in a schema of the test's own (dropped after it), Redis in database 13
// (the test's sessions deleted after it). The URLs carry a password: the
// local PostgreSQL (trust authentication) and Redis (no requirepass)
// accept it. A server not configured (AGCORE_TEST_POSTGRES,
// AGCORE_TEST_REDIS) skips its subtest outside CI.
func forEachRemoteStore(t *testing.T, f func(t *testing.T, rs remoteStore)) {
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			rs := newRemoteStore(t, kind)
			f(t, rs)
		})
	}
}

func newRemoteStore(t *testing.T, kind string) remoteStore {
	t.Helper()
	env := map[string]string{"postgres": "AGCORE_TEST_POSTGRES", "redis": "AGCORE_TEST_REDIS"}[kind]
	raw := os.Getenv(env)
	if raw == "" {
		testenv.Missing(t, "%s is not set: set it to run the CLI's %s store tests", env, kind)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	rs := remoteStore{kind: kind, pw: "s3cret-" + kind + "-PW", prefix: "cli" + randomHex(4) + "-"}
	user := ""
	if u.User != nil {
		user = u.User.Username()
	}
	u.User = url.UserPassword(user, rs.pw)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch kind {
	case "postgres":
		schema := pgtest.Schema(t, raw, "cli_store_")
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
	case "redis":
		// The test's own key prefix: what it stored goes when it ends.
		if u, err = url.Parse(redisPrefix(t, ctx, raw, "cli_store_")); err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(user, rs.pw)
	}
	rs.url = u.String()
	st, err := session.Open(ctx, rs.url)
	if err != nil {
		testenv.Missing(t, "%s store: %v", kind, err)
	}
	st.Close()
	return rs
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// noSecret fails the test if any of texts shows the password.
func noSecret(t *testing.T, pw string, what string, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, pw) || strings.Contains(s, url.QueryEscape(pw)) {
			t.Errorf("%s shows the password:\n%s", what, s)
		}
	}
}

// TestRemoteStoresThroughTheCLI: run, AGCORE_STORE, chat, serve, sessions
// list/show/rm and config, each with a PostgreSQL or Redis --store.
func TestRemoteStoresThroughTheCLI(t *testing.T) {
	t.Parallel()
	forEachRemoteStore(t, func(t *testing.T, rs remoteStore) {
		c := newCLI(t)
		c.env["AGCORE_PROVIDER"] = "demo"
		id := func(s string) string { return rs.prefix + s }
		check := func(what string, r result) {
			t.Helper()
			if r.code != 0 {
				t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", what, r.code, r.stdout, r.stderr)
			}
			noSecret(t, rs.pw, what, r.stdout, r.stderr)
		}

		check("run --store", c.run("", "run", "--store", rs.url, "--session", id("run"), "What is here?"))
		c.env["AGCORE_STORE"] = rs.url
		check("AGCORE_STORE= run", c.run("", "run", "--session", id("env"), "And now?"))
		delete(c.env, "AGCORE_STORE")
		check("chat --store", c.run("Hello from a pipe.\n", "chat", "--store", rs.url, "--session", id("chat")))

		// serve: one Responses turn into the conversation id("serve").
		base, cmd, lines := c.startServe(t, "--store", rs.url)
		var serveErr strings.Builder
		done := make(chan struct{})
		go func() {
			defer close(done)
			for l := range lines {
				serveErr.WriteString(l + "\n")
			}
		}()
		body := `{"model":"agcore","input":"Served turn.","conversation":"` + id("serve") + `"}`
		resp, err := http.Post(base+"/v1/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(out), `"resp_`+id("serve")+`_1"`) {
			t.Fatalf("POST /v1/responses: %d %s", resp.StatusCode, out)
		}
		cmd.Process.Signal(os.Interrupt)
		waitOrKill(t, cmd, 15*time.Second)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("serve's stderr never closed")
		}
		noSecret(t, rs.pw, "serve", serveErr.String(), string(out))

		// Every turn is there, read back by another process.
		list := c.run("", "sessions", "list", "--json", "--store", rs.url)
		check("sessions list", list)
		var listed struct {
			Sessions []struct {
				ID       string `json:"id"`
				Messages int    `json:"messages"`
				Turns    int    `json:"turns"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(list.stdout), &listed); err != nil {
			t.Fatalf("sessions list --json: %v\n%s", err, list.stdout)
		}
		turns := map[string]int{}
		for _, s := range listed.Sessions {
			if strings.HasPrefix(s.ID, rs.prefix) {
				turns[strings.TrimPrefix(s.ID, rs.prefix)] = s.Turns
			}
		}
		for _, name := range []string{"run", "env", "chat", "serve"} {
			if turns[name] != 1 {
				t.Errorf("sessions list: %s has %d turns, want 1 (listed %v)", id(name), turns[name], turns)
			}
		}
		show := c.run("", "sessions", "show", id("serve"), "--store", rs.url)
		check("sessions show", show)
		if !strings.Contains(show.stdout, "Served turn.") {
			t.Errorf("sessions show %s lacks the served turn:\n%s", id("serve"), show.stdout)
		}
		showJSON := c.show(id("chat"), "--store", rs.url)
		if len(showJSON.Messages) < 2 || !strings.Contains(string(showJSON.Messages[0]), "Hello from a pipe.") {
			t.Errorf("sessions show --json %s: %d messages", id("chat"), len(showJSON.Messages))
		}
		rm := c.run("", "sessions", "rm", id("env"), "--store", rs.url)
		check("sessions rm", rm)
		if r := c.run("", "sessions", "show", id("env"), "--store", rs.url); r.code != 1 || !strings.Contains(r.stderr, "no session") {
			t.Errorf("show after rm: exit %d, %q", r.code, r.stderr)
		}

		for _, args := range [][]string{{"config", "--store", rs.url}, {"config", "--json", "--store", rs.url}} {
			r := c.run("", args...)
			check(strings.Join(args[:len(args)-1], " "), r)
			if !strings.Contains(r.stdout, session.Redact(rs.url)) && !strings.Contains(r.stdout, strings.ReplaceAll(session.Redact(rs.url), "&", `\u0026`)) {
				t.Errorf("%v does not show the store redacted (%s):\n%s", args[:2], session.Redact(rs.url), r.stdout)
			}
		}
	})
}

// waitOrKill waits for cmd to exit, killing it after d.
func waitOrKill(t *testing.T, cmd *exec.Cmd, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s exited: %v", cmd.Args[1], err)
		}
	case <-time.After(d):
		cmd.Process.Kill()
		t.Errorf("%s did not exit within %v of SIGINT", cmd.Args[1], d)
		<-done
	}
}

// A store that cannot be reached is one line of stderr naming it without
// its password, and a failed exit, whichever command opens it.
func TestUnreachableStoreIsOneLine(t *testing.T) {
	t.Parallel()
	const pw = "s3cret-unreachable-PW"
	// Each command in its own process and environment, at once: the Redis
	// client retries a refused connection for about 2 s before it gives up.
	for _, store := range []string{
		"postgres://agcore:" + pw + "@127.0.0.1:1/db?sslmode=disable",
		"redis://:" + pw + "@127.0.0.1:1/13",
	} {
		redacted := session.Redact(store)
		kind, _, _ := strings.Cut(store, ":")
		for _, args := range [][]string{
			{"run", "--store", store, "hi"},
			{"chat", "--store", store},
			{"sessions", "list", "--store", store},
			{"sessions", "show", "x", "--store", store},
			{"sessions", "rm", "x", "--store", store},
			{"serve", "--addr", "127.0.0.1:0", "--store", store},
		} {
			cmd := strings.Join(args[:len(args)-2], " ")
			what := cmd + " " + redacted
			t.Run(kind+" "+cmd, func(t *testing.T) {
				t.Parallel()
				c := newCLI(t)
				c.env["AGCORE_PROVIDER"] = "demo"
				r := c.run("hi\n", args...)
				lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
				if r.code == 0 || len(lines) != 1 || !strings.Contains(lines[0], "store "+redacted+": ") {
					t.Errorf("%s: exit %d, want a failure and one line of stderr naming the store:\n%s", what, r.code, r.stderr)
				}
				noSecret(t, pw, what, r.stdout, r.stderr)
			})
		}
		t.Run(kind+" AGCORE_STORE", func(t *testing.T) {
			t.Parallel()
			c := newCLI(t)
			c.env["AGCORE_PROVIDER"] = "demo"
			c.env["AGCORE_STORE"] = store
			r := c.run("", "run", "hi")
			if lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n"); r.code == 0 || len(lines) != 1 {
				t.Errorf("AGCORE_STORE=%s run: exit %d:\n%s", redacted, r.code, r.stderr)
			}
			noSecret(t, pw, "AGCORE_STORE run", r.stdout, r.stderr)
			for _, args := range [][]string{{"config"}, {"config", "--json"}} {
				r := c.run("", args...)
				if r.code != 0 {
					t.Errorf("%v: exit %d: %s", args, r.code, r.stderr)
				}
				noSecret(t, pw, strings.Join(args, " "), r.stdout, r.stderr)
			}
		})
	}
}

// A --store of no known kind is a usage error naming every kind, the URL
// without its password.
func TestUnknownStoreNamesEveryKind(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	for _, args := range [][]string{{"run", "hi"}, {"sessions", "list"}} {
		r := c.run("", append(args, "--store", "mysql://u:s3cret@db/x")...)
		if r.code != 2 || !strings.Contains(r.stderr, `"mysql://u:xxxxx@db/x" is not a store: give sqlite:PATH, file:DIR, memory:, postgres://… or redis://…`) {
			t.Errorf("%v: exit %d, %q", args, r.code, r.stderr)
		}
		noSecret(t, "s3cret", args[0], r.stdout, r.stderr)
	}
}

// redisPrefix returns raw (the AGCORE_TEST_REDIS URL: the database these
// tests are given) with a key prefix (prefix=) made of name and random
// hex, whose keys are deleted when the test ends: tests and packages
// using the database at once never see each other's keys.
func redisPrefix(t *testing.T, ctx context.Context, raw, name string) string {
	t.Helper()
	o, err := goredis.ParseURL(raw)
	if err != nil {
		t.Fatalf("AGCORE_TEST_REDIS: %v", err)
	}
	c := goredis.NewClient(o)
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		testenv.Missing(t, "Redis at %s: %v", session.Redact(raw), err)
	}
	prefix := "agcoretest:" + name + randomHex(6) + ":"
	t.Cleanup(func() {
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var keys []string
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		err := iter.Err()
		if err == nil && len(keys) > 0 {
			err = c.Del(ctx, keys...).Err()
		}
		if err != nil {
			t.Errorf("deleting the keys under %s: %v", prefix, err)
		}
	})
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("prefix", prefix)
	u.RawQuery = q.Encode()
	return u.String()
}
