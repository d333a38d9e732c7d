package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/internal/testenv"
	"github.com/agcore/agcore/session"
)

// A password in a --store URL never appears in what the CLI prints: not in
// the error of a server that cannot be reached, not in the description.
func TestRemoteStorePasswordRedacted(t *testing.T) {
	t.Parallel()
	const pw = "hunter2-s3cret"
	for _, dsn := range []string{
		"postgres://agcore:" + pw + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"redis://agcore:" + pw + "@127.0.0.1:1/0?dial_timeout=1s&max_retries=-1",
		"postgres://agcore:" + pw + "@127.0.0.1:1/db?pool_max_conns=notanumber",
		"redis://agcore:" + pw + "@127.0.0.1:1/notadb",
		"mysql://agcore:" + pw + "@127.0.0.1:1/db",
	} {
		st, err := openStore(t.Context(), dsn, t.TempDir(), slog.New(slog.DiscardHandler))
		if err == nil {
			st.close()
			t.Errorf("%s: opened a store on a closed port", redactURL(dsn))
			continue
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	if got := redactURL("redis://u:" + pw + "@h:6379/0"); strings.Contains(got, pw) || !strings.Contains(got, "h:6379") {
		t.Errorf("redactURL = %q", got)
	}
}

// With the test servers configured, --store postgres://… and redis://…
// open a working store.
func TestRemoteStores(t *testing.T) {
	t.Parallel()
	for _, env := range []string{"AGCORE_TEST_POSTGRES", "AGCORE_TEST_REDIS"} {
		dsn := os.Getenv(env)
		if dsn == "" {
			testenv.Missing(t, "%s is not set: set it to run the CLI's remote store test", env)
		}
		if env == "AGCORE_TEST_POSTGRES" {
			dsn = ownSchema(t, dsn)
		} else {
			t.Cleanup(func() { // the version key Open records under the default prefix
				if o, err := goredis.ParseURL(dsn); err == nil {
					c := goredis.NewClient(o)
					c.Del(context.Background(), "agcore:version", "agcore:index")
					c.Close()
				}
			})
		}
		st, err := openStore(context.Background(), dsn, t.TempDir(), slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		if _, err := st.List(t.Context(), sessionListOpts()); err != nil {
			t.Errorf("%s: List: %v", env, err)
		}
		if !st.durable || st.desc == "" {
			t.Errorf("%s: desc %q durable %v", env, st.desc, st.durable)
		}
		st.close()
	}
}

func sessionListOpts() session.ListOptions { return session.ListOptions{Limit: 1} }

// ownSchema makes a schema for the test, dropped when it ends, and returns
// dsn using it.
func ownSchema(t *testing.T, dsn string) string {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("cli_test_%d", os.Getpid())
	if _, err := conn.Exec(t.Context(), "CREATE SCHEMA IF NOT EXISTS "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+name+" CASCADE")
		conn.Close(context.Background())
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + name
}
