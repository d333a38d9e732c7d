package scaleout_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/internal/testkit/scaleout"
	"github.com/agcore/agcore/internal/testkit/testenv"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/postgres"
	sredis "github.com/agcore/agcore/session/redis"
	"github.com/agcore/agcore/tool"
)

const (
	procs    = 4
	sessions = 50
	turns    = 1000 // in all, over the processes
	perProc  = turns / procs
	workers  = 4 // concurrent runs in each process

	envChild = "AGCORE_SCALEOUT_CHILD" // the child's number
	envKind  = "AGCORE_SCALEOUT_KIND"  // postgres or redis
	envDSN   = "AGCORE_SCALEOUT_DSN"   // where the store is
	envOpt   = "AGCORE_SCALEOUT_OPT"   // the schema or key prefix
	envTurns = "AGCORE_SCALEOUT_TURNS" // how many turns the child runs
)

func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		os.Exit(child())
	}
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil { // every pool and client was closed
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func openStore(ctx context.Context, kind, dsn, opt string) (session.Store, func(), error) {
	switch kind {
	case "postgres":
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		s, err := postgres.Open(ctx, dsn+sep+"search_path="+opt+"&pool_max_conns=8")
		if err != nil {
			return nil, nil, err
		}
		return s, func() { s.Close() }, nil
	default:
		s, err := sredis.Open(ctx, dsn, sredis.WithPrefix(opt))
		if err != nil {
			return nil, nil, err
		}
		return s, func() { s.Close() }, nil
	}
}

// model answers a turn's user message "[tag] ..." with a call of the echo
// tool, and the tool's result with "done tag": two model calls a turn,
// computed from the request, so any number of runs can share it.
func model(n int) llm.Model {
	steps := make([]llmtest.Step, n)
	for i := range steps {
		steps[i] = llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
			last := req.Messages[len(req.Messages)-1]
			tag := ""
			for i := len(req.Messages) - 1; i >= 0; i-- {
				if m := req.Messages[i]; m.Role == llm.RoleUser {
					tag, _, _ = strings.Cut(strings.TrimPrefix(m.Text(), "["), "]")
					break
				}
			}
			if last.Role == llm.RoleTool {
				return &llm.Response{Message: llm.AssistantText("done " + tag), FinishReason: llm.FinishStop}, nil
			}
			return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				llmtest.Call("call-"+tag, "echo", map[string]string{"text": tag}),
			}}, FinishReason: llm.FinishToolUse}, nil
		})
	}
	return llmtest.New(steps...)
}

// child runs perProc turns on random sessions, workers at a time, and
// prints "acked TAG" for each run that returned.
func child() int {
	ctx := context.Background()
	me := os.Getenv(envChild)
	store, closeStore, err := openStore(ctx, os.Getenv(envKind), os.Getenv(envDSN), os.Getenv(envOpt))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open:", err)
		return 2
	}
	defer closeStore()
	echo := tool.MustFunc("echo", "Echo the text", func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return "echo " + in.Text, nil
	})
	count, err := strconv.Atoi(os.Getenv(envTurns))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	a, err := agent.New(model(2*count), agent.Config{Tools: []tool.Tool{echo}, Store: store})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: agent:", err)
		return 2
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var next int
	var wg sync.WaitGroup
	failed := false
	for range workers {
		wg.Go(func() {
			for {
				mu.Lock()
				n := next
				next++
				mu.Unlock()
				if n >= count {
					return
				}
				tag := fmt.Sprintf("p%s-%d", me, n)
				sid := fmt.Sprintf("s%02d", mrand.IntN(sessions))
				if _, err := a.Run(ctx, []llm.Message{llm.UserText("[" + tag + "] hello")}, &agent.RunOptions{SessionID: sid}); err != nil {
					fmt.Fprintln(os.Stderr, "child: run:", err)
					mu.Lock()
					failed = true
					mu.Unlock()
					return
				}
				mu.Lock()
				fmt.Fprintf(out, "acked %s %s\n", tag, sid)
				out.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if failed {
		return 1
	}
	return 0
}

func TestScaleOutPostgres(t *testing.T) {
	dsn := os.Getenv("AGCORE_TEST_POSTGRES")
	if dsn == "" {
		testenv.Missing(t, "AGCORE_TEST_POSTGRES is not set: set it to a PostgreSQL URL to run the scale-out test")
	}
	schema := "scaleout_" + randHex()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) }) // after the schemas are dropped
	for _, name := range []string{schema + "_a", schema + "_b"} {
		if _, err := conn.Exec(t.Context(), "CREATE SCHEMA "+name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+name+" CASCADE") })
	}
	t.Run("steady", func(t *testing.T) { scaleOut(t, "postgres", dsn, schema+"_a", false) })
	t.Run("SIGKILL", func(t *testing.T) { scaleOut(t, "postgres", dsn, schema+"_b", true) })
}

func TestScaleOutRedis(t *testing.T) {
	dsn := os.Getenv("AGCORE_TEST_REDIS")
	if dsn == "" {
		testenv.Missing(t, "AGCORE_TEST_REDIS is not set: set it to a Redis URL to run the scale-out test")
	}
	prefix := "agcoretest:scaleout-" + randHex() + ":"
	t.Cleanup(func() {
		o, err := goredis.ParseURL(dsn)
		if err != nil {
			return
		}
		c := goredis.NewClient(o)
		defer c.Close()
		ctx := context.Background()
		iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
	})
	t.Run("steady", func(t *testing.T) { scaleOut(t, "redis", dsn, prefix+"a:", false) })
	t.Run("SIGKILL", func(t *testing.T) { scaleOut(t, "redis", dsn, prefix+"b:", true) })
}

func randHex() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// scaleOut runs procs children of perProc turns each over one store and
// checks the store. With kill, child 0 is SIGKILLed once it has
// acknowledged a fifth of its turns and started again for the rest; a run
// in flight when it died may have stored its turn or not, but never half
// of it.
func scaleOut(t *testing.T, kind, dsn, opt string, kill bool) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	acked := map[string]string{} // tag -> session
	var mu sync.Mutex
	// run runs child name for n turns; with killAfter > 0 it SIGKILLs it
	// after that many acknowledgements. It returns how many it acknowledged.
	run := func(name string, n, killAfter int) (int, error) {
		cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envChild+"="+name, envKind+"="+kind, envDSN+"="+dsn, envOpt+"="+opt, envTurns+"="+strconv.Itoa(n))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			return 0, err
		}
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		got := 0
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 3 && f[0] == "acked" {
				mu.Lock()
				acked[f[1]] = f[2]
				mu.Unlock()
				got++
				if killAfter > 0 && got == killAfter {
					cmd.Process.Kill()
				}
			}
		}
		err = cmd.Wait()
		if killAfter > 0 && got >= killAfter {
			return got, nil // killed, as meant
		}
		return got, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*procs)
	for p := range procs {
		wg.Go(func() {
			if !kill || p != 0 {
				if _, err := run(strconv.Itoa(p), perProc, 0); err != nil {
					errs <- fmt.Errorf("child %d: %w", p, err)
				}
				return
			}
			got, err := run("0", perProc, perProc/5)
			if err != nil {
				errs <- fmt.Errorf("child 0: %w", err)
				return
			}
			t.Logf("child 0 SIGKILLed after %d acknowledged turns; restarted for %d more", got, perProc-got)
			if _, err := run("0r", perProc-got, 0); err != nil {
				errs <- fmt.Errorf("child 0 restarted: %w", err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	elapsed := time.Since(start)
	store, closeStore, err := openStore(t.Context(), kind, dsn, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	seen := map[string]int{}
	total, msgs := 0, 0
	for i := range sessions {
		sid := fmt.Sprintf("s%02d", i)
		sess, err := store.Load(t.Context(), sid)
		if err != nil {
			continue // no turn chose it
		}
		total += sess.Turns
		msgs += len(sess.Messages)
		if err := scaleout.CheckTurns(sess, sid, acked, seen); err != nil {
			t.Errorf("session %s: %v", sid, err)
		}
	}
	lost, dups := 0, 0
	for tag := range acked {
		if seen[tag] == 0 {
			lost++
		}
	}
	for _, n := range seen {
		if n > 1 {
			dups++
		}
	}
	t.Logf("%s: %d processes, %d turns acknowledged, %d stored (%d messages) over %d sessions in %v; %d lost, %d duplicated",
		kind, procs, len(acked), total, msgs, sessions, elapsed.Round(time.Millisecond), lost, dups)
	if len(acked) != turns || lost != 0 || dups != 0 || total < turns || !kill && total != turns {
		t.Fatalf("want %d turns acknowledged and each stored once", turns)
	}
}
