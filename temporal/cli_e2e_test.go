package agtemporal_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/internal/testkit/testenv"

	agtemporal "github.com/agcore/agcore/temporal"
)

// testRedis returns the URL of the Redis the live-output tests use
// ($AGCORE_TEST_REDIS, as the session stores' tests), after checking it
// answers.
func testRedis(t *testing.T) (string, *redis.Client) {
	t.Helper()
	u := os.Getenv("AGCORE_TEST_REDIS")
	if u == "" {
		testenv.Missing(t, "AGCORE_TEST_REDIS is unset (e.g. redis://127.0.0.1:6379/15): the live-output tests need Redis")
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		testenv.Missing(t, "Redis at %s does not answer: %v", u, err)
	}
	return u, rdb
}

func TestRedisLiveOutputDropsARetriedAttempt(t *testing.T) {
	_, rdb := testRedis(t)
	ctx := context.Background()
	key := agtemporal.StreamKey("live-test-" + time.Now().Format("150405.000000000"))
	t.Cleanup(func() { rdb.Del(ctx, key) })
	live := &agtemporal.RedisLive{Client: rdb}
	for _, ev := range []agtemporal.LiveEvent{
		{Kind: agtemporal.LiveText, Step: 1, Attempt: 1, Text: "Hel"},
		{Kind: agtemporal.LiveReset, Step: 1, Attempt: 2},
		{Kind: agtemporal.LiveText, Step: 1, Attempt: 2, Text: "Hello"},
		{Kind: agtemporal.LiveText, Step: 1, Attempt: 1, Text: "p (late)"},
		{Kind: agtemporal.LiveText, Step: 2, Attempt: 1, Text: " world"},
		{Kind: agtemporal.LiveDone, Step: 2, Attempt: 1},
	} {
		if err := live.Publish(ctx, key, ev); err != nil {
			t.Fatal(err)
		}
	}
	var tr agtemporal.Transcript
	resets := 0
	err := agtemporal.Watch(ctx, rdb, key, 50*time.Millisecond, nil, func(ev agtemporal.LiveEvent) bool {
		if tr.Add(ev) {
			resets++
		}
		return ev.Kind != agtemporal.LiveDone
	})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Text() != "Hello world" || resets != 1 {
		t.Fatalf("assembled %q with %d resets", tr.Text(), resets)
	}
}

// TestE2ECommandRunStreamsAndWaitsForApproval drives the built command:
// a worker, `run` streaming through Redis, and `approve` listing and
// approving the write_file call the turn parks on.
func TestE2ECommandRunStreamsAndWaitsForApproval(t *testing.T) {
	redisURL, _ := testRedis(t)
	root := t.TempDir()
	w, _ := newWorld(t,
		sseReply("I will write it. ", fakeCall{"call_w", "write_file", `{"path":"note.txt","content":"durable"}`}),
		sseReply("The note is written."))
	common := []string{"--temporal", w.addr, "--redis", redisURL}
	worker := start(t, []string{"OPENAI_API_KEY=test-key"}, append([]string{"worker", "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", "sqlite:" + w.db, "--root", root, "--tools", "write_file,read_file"}, common...)...)
	run := start(t, nil, append([]string{"run", "--session", "cli", "--turn", "t1", "write a note"}, common...)...)
	try := func(args ...string) (string, error) {
		out, err := exec.Command(agcoreTemporal(t), append(append([]string{"approve", "--session", "cli", "--turn", "t1"}, common...), args...)...).CombinedOutput()
		return string(out), err
	}
	approve := func(args ...string) string {
		t.Helper()
		out, err := try(args...)
		if err != nil {
			t.Fatalf("approve %v: %v\n%s", args, err, out)
		}
		return out
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var pending []agtemporal.PendingApproval
		out, _ := try("--json") // fails until run has started the turn
		announced := strings.Contains(run.out.String(), "waits for approval")
		if err := json.Unmarshal([]byte(out), &pending); err == nil && len(pending) == 1 && announced {
			if pending[0].CallID != "call_w" || pending[0].Tool != "write_file" {
				t.Fatalf("pending %+v", pending)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending approval; approve said %q\nworker:\n%s\nrun:\n%s", out, worker.out, run.out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(root, "note.txt")); err == nil {
		t.Fatal("the file was written before the approval")
	}
	if out := approve("call_w"); !strings.Contains(out, "approved call_w") {
		t.Fatalf("approve said %q", out)
	}
	select {
	case <-run.done:
	case <-time.After(time.Minute):
		t.Fatalf("run did not end\n%s", run.out)
	}
	if code := run.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("run exited %d\n%s", code, run.out)
	}
	out := run.out.String()
	for _, want := range []string{"I will write it.", "The note is written.", "waits for approval", "stored turn t1 in session cli"} {
		if !strings.Contains(out, want) {
			t.Errorf("run's output lacks %q:\n%s", want, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "note.txt")); err != nil || string(b) != "durable" {
		t.Fatalf("note.txt: %q, %v", b, err)
	}
	worker.stop()
}

// TestE2EAgcoreCommandRunsDurableTurns builds agcore and agcore-temporal
// side by side, as `go install` puts them, and runs a turn through the
// agcore command: `agcore worker` and `agcore run --temporal` find
// agcore-temporal next to agcore.
func TestE2EAgcoreCommandRunsDurableTurns(t *testing.T) {
	w, _ := newWorld(t, sseReply("Recorded, durably.", fakeCall{"c1", "record", `{"text":"via-agcore"}`}), sseReply("Done via agcore."))
	agcore := agcoreBinary(t) // agcore-temporal is beside it
	dir := t.TempDir()
	env := append(os.Environ(), "OPENAI_API_KEY=test-key", "AGCORE_TEMPORAL_BIN=", "AGCORE_HOME="+dir)
	worker := exec.Command(agcore, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", "sqlite:"+w.db, "--tools", "none", "--test-record", w.record)
	var wout lockedBuffer
	worker.Env, worker.Stdout, worker.Stderr = env, &wout, &wout
	// agcore runs agcore-temporal as its child: both go with the group.
	worker.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	worker.WaitDelay = 5 * time.Second
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-worker.Process.Pid, syscall.SIGKILL); _ = worker.Wait() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, agcore, "run", "--temporal", w.addr, "--session", "via", "record it")
	run.Env, run.WaitDelay = env, 5*time.Second
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("agcore run --temporal: %v\n%s\nworker:\n%s", err, out, wout.String())
	}
	if !strings.Contains(string(out), "Done via agcore.") {
		t.Fatalf("agcore run --temporal printed:\n%s", out)
	}
	if got := w.recorded(t); strings.Join(got, ",") != "via-agcore" {
		t.Fatalf("recorded %v", got)
	}
	if turns, _ := w.turns(t, "via"); turns != 1 {
		t.Fatalf("the session holds %d turns", turns)
	}
}
