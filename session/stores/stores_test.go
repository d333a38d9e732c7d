package stores_test

import (
	"context"
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	_ "github.com/agcore/agcore/session/stores"
)

func TestSchemes(t *testing.T) {
	want := []string{"file", "memory", "postgres", "postgresql", "redis", "rediss", "sqlite"}
	if got := session.Schemes(); !slices.Equal(got, want) {
		t.Errorf("Schemes() = %q, want %q", got, want)
	}
}

func TestSyntaxes(t *testing.T) {
	want := []string{"sqlite:PATH", "file:DIR", "memory:", "postgres://…", "redis://…"}
	if got := session.Syntaxes(); !slices.Equal(got, want) {
		t.Errorf("Syntaxes() = %q, want %q", got, want)
	}
}

// TestREADMEListsEveryStore holds the README's --store row to the
// registered stores: each kind as its URL is written, and each scheme.
func TestREADMEListsEveryStore(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| `--store URL`") {
			row = l
		}
	}
	if row == "" {
		t.Fatal("the README has no --store URL row in its flags table")
	}
	for _, syn := range session.Syntaxes() {
		if !strings.Contains(row, "`"+syn+"`") {
			t.Errorf("the README's --store row does not show `%s`", syn)
		}
	}
	for _, sc := range session.Schemes() {
		if !strings.Contains(row, "`"+sc+":") {
			t.Errorf("the README's --store row does not name the scheme %s:", sc)
		}
	}
}

// nopOpener opens nothing.
type nopOpener struct{}

func (nopOpener) Open(context.Context, string, session.OpenOptions) (*session.Opened, error) {
	return nil, errors.New("nop")
}
func (nopOpener) Check(string) error { return nil }
func (nopOpener) Syntax() string     { return "nop:" }

func TestRegisterPanics(t *testing.T) {
	for _, tc := range []struct {
		scheme string
		o      session.Opener
	}{{"SQLite", nopOpener{}}, {"nop-test", nil}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q, %v) did not panic", tc.scheme, tc.o)
				}
			}()
			session.Register(tc.scheme, tc.o)
		}()
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct{ url, err string }{
		{"", ""},
		{"sqlite", ""},
		{"sqlite:", ""},
		{"sqlite:./a.db", ""},
		{"file:./sessions", ""},
		{"memory:", ""},
		{"memory", ""},
		{"postgres://root@127.0.0.1:5432/test?sslmode=disable", ""},
		{"postgresql://root@127.0.0.1/test", ""},
		{"redis://127.0.0.1:6379/13", ""},
		{"rediss://:pw@127.0.0.1:6379/13", ""},
		{"file:", "names no directory: give one, such as file:./sessions"},
		{"memory:x", "memory: takes nothing after the colon"},
		{"./agcore.db", "is not a store: give sqlite:PATH, file:DIR, memory:, postgres://… or redis://… (the default is sqlite:$AGCORE_HOME/agcore.db)"},
		{"mysql://u:s3cret@db/x", "is not a store: give sqlite:PATH"},
		{"redis://127.0.0.1:6379/notadb", "invalid database number"},
		{"postgres://u:s3cret@127.0.0.1:5432/x?pool_max_conns=notanumber", "pool_max_conns"},
	} {
		err := session.Check(tc.url)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("Check(%q) = %v", tc.url, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Check(%q) = %v, want %q", tc.url, err, tc.err)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("Check(%q) shows the password: %v", tc.url, err)
		}
	}
	if err := session.Check("mysql://db"); !errors.Is(err, session.ErrUnknownStore) {
		t.Errorf("Check(mysql://db) = %v, want ErrUnknownStore", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"redis://:s3cret@127.0.0.1:6379/13":              "redis://:xxxxx@127.0.0.1:6379/13",
		"postgres://root:s3cret@db/test?sslmode=disable": "postgres://root:xxxxx@db/test?sslmode=disable",
		"postgres://root@db/test?password=s3cret":        "postgres://root@db/test?password=xxxxx",
		"postgres://root:s3cret@db:port/x":               "postgres://…",
		"sqlite:/tmp/a.db":                               "sqlite:/tmp/a.db",
		"memory:":                                        "memory:",
	} {
		if got := session.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A sqlite path in a directory that does not exist is refused (a typo
// must not make a directory tree); the default database's directory is
// made.
func TestOpenSQLiteMissingDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "tpyo", "a.db")
	if _, err := session.Open(t.Context(), "sqlite:"+missing); !errors.Is(err, session.ErrNoStore) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("Open(sqlite:%s) = %v, want ErrNoStore", missing, err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the directory was made: %v", err)
	}
}

// Each local kind of store opens, describes itself and keeps a turn.
func TestOpenLocal(t *testing.T) {
	home := t.TempDir()
	t.Setenv("AGCORE_HOME", filepath.Join(home, "env-home"))
	dir := t.TempDir()
	for _, tc := range []struct {
		url, desc string
		durable   bool
		opts      []session.OpenOption
	}{
		{"", "sqlite:" + filepath.Join(home, "agcore.db"), true, []session.OpenOption{session.WithHome(home)}},
		{"sqlite", "sqlite:" + filepath.Join(home, "env-home", "agcore.db"), true, nil},
		{"sqlite:" + filepath.Join(dir, "a.db"), "sqlite:" + filepath.Join(dir, "a.db"), true, nil},
		{"file:" + filepath.Join(dir, "jsonl"), "file:" + filepath.Join(dir, "jsonl"), true, nil},
		{"memory:", "memory:", false, nil},
	} {
		st, err := session.Open(t.Context(), tc.url, tc.opts...)
		if err != nil {
			t.Fatalf("Open(%q): %v", tc.url, err)
		}
		if st.Description != tc.desc || st.Durable != tc.durable || st.String() != tc.desc {
			t.Errorf("Open(%q): %q durable %v, want %q %v", tc.url, st.Description, st.Durable, tc.desc, tc.durable)
		}
		if err := st.Append(t.Context(), "s1", session.Turn{ID: "t1", Messages: []llm.Message{llm.UserText("hi")}}); err != nil {
			t.Errorf("%s: Append: %v", tc.url, err)
		}
		if s, err := st.Load(t.Context(), "s1"); err != nil || len(s.Messages) != 1 {
			t.Errorf("%s: Load: %v", tc.url, err)
		}
		if err := st.Close(); err != nil {
			t.Errorf("%s: Close: %v", tc.url, err)
		}
	}
}

// ReadOnly creates nothing: the default database that is not there yet is
// an empty store, a store named explicitly that is not there is
// ErrNoStore, and a database that is there is opened read-only.
func TestOpenReadOnly(t *testing.T) {
	home := t.TempDir()
	st, err := session.Open(t.Context(), "", session.WithHome(home), session.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	if page, err := st.List(t.Context(), session.ListOptions{}); err != nil || len(page.Sessions) != 0 {
		t.Errorf("the empty default store lists %v, %v", page, err)
	}
	if _, err := st.Load(t.Context(), "x"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Load from the empty default store: %v", err)
	}
	if err := st.Append(t.Context(), "x", session.Turn{ID: "t"}); err == nil {
		t.Error("the read-only store took an Append")
	}
	st.Close()
	for _, url := range []string{"sqlite:" + filepath.Join(home, "typo.db"), "file:" + filepath.Join(home, "typo")} {
		_, err := session.Open(t.Context(), url, session.ReadOnly())
		if !errors.Is(err, session.ErrNoStore) || !strings.Contains(err.Error(), "store "+url+": ") {
			t.Errorf("Open(%q, ReadOnly) = %v, want ErrNoStore naming the store", url, err)
		}
	}
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Errorf("a read-only Open created %v", ents)
	}
	db := "sqlite:" + filepath.Join(home, "kept.db")
	rw, err := session.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	rw.Append(t.Context(), "kept", session.Turn{ID: "t1", Messages: []llm.Message{llm.UserText("hi")}})
	rw.Close()
	ro, err := session.Open(t.Context(), db, session.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Load(t.Context(), "kept"); err != nil {
		t.Errorf("Load read-only: %v", err)
	}
	if err := ro.Append(t.Context(), "kept", session.Turn{ID: "t2", Messages: []llm.Message{llm.UserText("more")}}); err == nil {
		t.Error("the read-only database took an Append")
	}
}

// An error of Open is one line naming the store without its password,
// whatever the driver says, and a server that cannot be reached is
// ErrUnavailable.
func TestOpenErrorsHideThePassword(t *testing.T) {
	t.Parallel()
	const pw = "hunter2-s3cret"
	for _, tc := range []struct {
		url         string
		unavailable bool
	}{
		{"postgres://agcore:" + pw + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", true},
		{"postgres://agcore:" + url.QueryEscape(pw+"/@x") + "@127.0.0.1:1/db?sslmode=disable", true},
		{"postgres://agcore@127.0.0.1:1/db?sslmode=disable&password=" + pw, true},
		{"redis://agcore:" + pw + "@127.0.0.1:1/0?dial_timeout=1s", true},
		{"redis://:" + pw + "@127.0.0.1:1/13", true},
		{"postgres://agcore:" + pw + "@127.0.0.1:1/db?pool_max_conns=notanumber", false},
		{"redis://agcore:" + pw + "@127.0.0.1:1/notadb", false},
		{"postgres://agcore:" + pw + "@127.0.0.1:notaport/db", false},
		{"mysql://agcore:" + pw + "@127.0.0.1:1/db", false},
	} {
		// At once: the Redis client retries a refused connection for
		// about 2 s.
		t.Run("", func(t *testing.T) {
			t.Parallel()
			st, err := session.Open(t.Context(), tc.url)
			if err == nil {
				st.Close()
				t.Errorf("%s: opened a store on a closed port", session.Redact(tc.url))
				return
			}
			msg := err.Error()
			if strings.Contains(msg, pw) || strings.Contains(msg, url.QueryEscape(pw+"/@x")) || strings.Contains(msg, "\n") {
				t.Errorf("the error is not one line without the password: %q", msg)
			}
			if !strings.Contains(msg, session.Redact(tc.url)) {
				t.Errorf("the error does not name the store %s: %q", session.Redact(tc.url), msg)
			}
			if got := errors.Is(err, session.ErrUnavailable); got != tc.unavailable {
				t.Errorf("%s: errors.Is(ErrUnavailable) = %v: %v", session.Redact(tc.url), got, err)
			}
		})
	}
}

// With the test servers there, postgres:// and redis:// URLs open working
// stores described without their password.
func TestOpenRemote(t *testing.T) {
	for _, env := range []string{"AGCORE_TEST_POSTGRES", "AGCORE_TEST_REDIS"} {
		raw := os.Getenv(env)
		if raw == "" {
			testenv.Missing(t, "%s is not set: set it to run the remote stores' Open test", env)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		switch u.Scheme {
		case "postgres", "postgresql":
			// A schema of the test's own, dropped after: the public one is
			// every other run's, whatever its schema version.
			schema := "stores_" + strconv.Itoa(os.Getpid())
			conn, err := pgx.Connect(t.Context(), raw)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(t.Context(), "CREATE SCHEMA IF NOT EXISTS "+schema); err != nil {
				t.Fatal(err)
			}
			defer conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
		case "redis":
			// A key prefix of the test's own in the database it is given;
			// the one key the store makes (its layout version) is deleted
			// after.
			prefix := "agcoretest:stores-" + strconv.Itoa(os.Getpid()) + ":"
			q := u.Query()
			q.Set("prefix", prefix)
			u.RawQuery = q.Encode()
			o, err := goredis.ParseURL(raw)
			if err != nil {
				t.Fatal(err)
			}
			c := goredis.NewClient(o)
			defer c.Close()
			defer c.Del(context.Background(), prefix+"version")
		}
		if u.User == nil {
			u.User = url.User("")
		}
		if _, has := u.User.Password(); !has && u.Scheme == "postgres" {
			u.User = url.UserPassword(u.User.Username(), "ignored-by-trust-auth") // a password never shown
		}
		st, err := session.Open(t.Context(), u.String())
		if err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		if _, err := st.List(t.Context(), session.ListOptions{Limit: 1}); err != nil {
			t.Errorf("%s: List: %v", env, err)
		}
		if !st.Durable || st.Description != session.Redact(u.String()) || strings.Contains(st.Description, "ignored-by") {
			t.Errorf("%s: description %q durable %v", env, st.Description, st.Durable)
		}
		st.Close()
	}
}
