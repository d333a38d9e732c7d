package agtemporal_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
)

// agcoreBin is the agcore command built once, next to a copy of
// agcore-temporal, as `go install` puts them (see TestMain).
var agcoreBin struct {
	once sync.Once
	dir  string
	err  error
}

// agcoreBinary returns the built agcore; agcore-temporal is beside it.
func agcoreBinary(t testing.TB) string {
	t.Helper()
	at := agcoreTemporal(t)
	agcoreBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "agcore-bin")
		if err != nil {
			agcoreBin.err = err
			return
		}
		agcoreBin.dir = dir
		if out, err := exec.Command("go", "build", "-C", "..", "-o", filepath.Join(dir, "agcore"), "./cmd/agcore").CombinedOutput(); err != nil {
			agcoreBin.err = fmt.Errorf("building agcore: %v\n%s", err, out)
			return
		}
		b, err := os.ReadFile(at)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "agcore-temporal"), b, 0o755)
		}
		agcoreBin.err = err
	})
	if agcoreBin.err != nil {
		t.Fatal(agcoreBin.err)
	}
	return filepath.Join(agcoreBin.dir, "agcore")
}

// agcoreEnv is the environment the agcore processes run in: the fake
// model's key, agcore-temporal found next to agcore, and agcore on PATH
// (so that a printed `agcore approve …` runs as printed).
func agcoreEnv(t testing.TB) []string {
	dir := filepath.Dir(agcoreBinary(t))
	return append(os.Environ(), "OPENAI_API_KEY=test-key", "AGCORE_TEMPORAL_BIN=", "AGCORE_HOME="+t.TempDir(),
		"PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// agcoreProc is a running agcore command in a process group of its own
// (agcore and its agcore-temporal child).
type agcoreProc struct {
	cmd       *exec.Cmd
	out, errw *lockedBuffer
	done      chan struct{}
}

func startAgcore(t *testing.T, args ...string) *agcoreProc {
	t.Helper()
	p := &agcoreProc{cmd: exec.Command(agcoreBinary(t), args...), out: &lockedBuffer{}, errw: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Env, p.cmd.Stdout, p.cmd.Stderr = agcoreEnv(t), p.out, p.errw
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(p.kill)
	return p
}

// kill SIGKILLs the group (agcore and its child) and waits for agcore.
func (p *agcoreProc) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// stop sends sig to agcore alone (not its group) and checks that agcore
// and its agcore-temporal child both end.
func (p *agcoreProc) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	pid := p.cmd.Process.Pid
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		t.Fatal(err)
	}
	var children []string // of every thread of agcore
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		children = append(children, strings.Fields(string(b))...)
	}
	if len(children) != 1 {
		t.Fatalf("agcore has children %v, want its agcore-temporal", children)
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("agcore did not end after %s\n%s", sig, p.errw)
	}
	for deadline := time.Now().Add(15 * time.Second); exists(children[0]); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("agcore-temporal (pid %s) outlived agcore stopped with %s", children[0], sig)
		}
	}
}

// exists reports whether the process pid exists and has not exited (a
// zombie has).
func exists(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// wait waits for the command to end and returns its exit status.
func (p *agcoreProc) wait(t *testing.T, what string) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not end\nstdout:\n%s\nstderr:\n%s", what, p.out, p.errw)
	}
	return p.cmd.ProcessState.ExitCode()
}

// agcoreWorker starts `agcore worker` against w's fake model and store,
// with extra flags.
func agcoreWorker(t *testing.T, w *e2eWorld, extra ...string) *agcoreProc {
	t.Helper()
	return startAgcore(t, append([]string{"worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", "sqlite:" + w.db}, extra...)...)
}

func uniqueSession(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
}

var flagLine = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z][a-z0-9-]*)`)

// TestE2EAgcoreRunTakesEveryDurableFlag: every flag agcore-temporal run
// documents is one agcore run takes (and forwards with --temporal).
func TestE2EAgcoreRunTakesEveryDurableFlag(t *testing.T) {
	help := func(bin string) map[string]bool {
		out, err := exec.Command(bin, "run", "--help").CombinedOutput()
		if err != nil {
			t.Fatalf("%s run --help: %v\n%s", bin, err, out)
		}
		names := map[string]bool{}
		for _, m := range flagLine.FindAllStringSubmatch(string(out), -1) {
			names[m[1]] = true
		}
		return names
	}
	durable, local := help(agcoreTemporal(t)), help(agcoreBinary(t))
	if len(durable) < 10 {
		t.Fatalf("read only %v from agcore-temporal run --help", durable)
	}
	for name := range durable {
		if !local[name] && name != "help" {
			t.Errorf("agcore-temporal run --%s is not a flag of agcore run", name)
		}
	}
}

// TestE2EReadmeDurableRunCompletesAToolTurn runs the README's commands:
// `agcore worker … --redis URL` and `agcore run --temporal ADDR --redis
// URL --session S` (with --turn and --blobs): the tool turn completes,
// each model call's text streams on a line of its own, and running the
// same --turn again attaches to the ended turn instead of running it
// again.
func TestE2EReadmeDurableRunCompletesAToolTurn(t *testing.T) {
	redisURL, _ := testRedis(t)
	w, _ := newWorld(t,
		sseReply("I will record twelve.", fakeCall{"c1", "record", `{"text":"twelve"}`}),
		sseReply("Both recorded."))
	blobs := t.TempDir()
	worker := agcoreWorker(t, w, "--redis", redisURL, "--blobs", blobs, "--tools", "none", "--test-record", w.record)
	sessionID := uniqueSession("readme")
	args := []string{"run", "--temporal", w.addr, "--redis", redisURL, "--session", sessionID, "--turn", "t1", "--blobs", blobs, "record twelve"}
	run := startAgcore(t, args...)
	if code := run.wait(t, "agcore run --temporal"); code != 0 {
		t.Fatalf("agcore run --temporal exited %d\nstdout:\n%s\nstderr:\n%s\nworker:\n%s", code, run.out, run.errw, worker.errw)
	}
	if out := run.out.String(); !strings.Contains(out, "I will record twelve.\nBoth recorded.") {
		t.Fatalf("stdout %q: want each model call's text on its own line", out)
	}
	if e := run.errw.String(); !strings.Contains(e, "→ record (c1)") || !strings.Contains(e, "stored turn t1 in session "+sessionID) {
		t.Fatalf("stderr:\n%s", e)
	}
	if got := w.recorded(t); strings.Join(got, ",") != "twelve" {
		t.Fatalf("recorded %v", got)
	}

	again := startAgcore(t, args...)
	if code := again.wait(t, "the repeated agcore run --temporal"); code != 0 {
		t.Fatalf("the repeated run exited %d\n%s\n%s", code, again.out, again.errw)
	}
	if !strings.Contains(again.out.String(), "Both recorded.") {
		t.Fatalf("the repeated run printed %q", again.out)
	}
	if got := w.recorded(t); strings.Join(got, ",") != "twelve" || w.fake.requests() != 2 {
		t.Fatalf("the repeated run ran the turn again: recorded %v, %d model requests", got, w.fake.requests())
	}
	if turns, _ := w.turns(t, sessionID); turns != 1 {
		t.Fatalf("the session holds %d turns", turns)
	}
	worker.stop(t, syscall.SIGINT) // as Ctrl-C: agcore-temporal stops too
}

// TestE2EPrintedApproveCommandRuns: the approve command `agcore run
// --temporal` prints for a call waiting for approval runs as printed (a
// shell runs the line copied from the output), on a server at a port of
// its own and a task queue not the default.
func TestE2EPrintedApproveCommandRuns(t *testing.T) {
	w, _ := newWorld(t,
		sseReply("Writing.", fakeCall{"call_w", "write_file", `{"path":"note.txt","content":"durable"}`}),
		sseReply("Written."))
	root := t.TempDir()
	worker := agcoreWorker(t, w, "--task-queue", "notes", "--root", root, "--tools", "write_file")
	run := startAgcore(t, "run", "--temporal", w.addr, "--task-queue", "notes", "--session", uniqueSession("approve"), "write a note")
	line := regexp.MustCompile(`waits for approval: (.*) \(or --deny\)`)
	var printed string
	deadline := time.Now().Add(time.Minute)
	for printed == "" {
		if m := line.FindStringSubmatch(run.errw.String()); m != nil {
			printed = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no approval was announced\nstderr:\n%s", run.errw)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.HasPrefix(printed, "agcore approve --temporal "+w.addr+" --task-queue notes ") {
		t.Fatalf("printed %q", printed)
	}
	sh := exec.Command("sh", "-c", printed)
	sh.Env = agcoreEnv(t)
	if out, err := sh.CombinedOutput(); err != nil || !strings.Contains(string(out), "approved call_w") {
		t.Fatalf("%s: %v\n%s", printed, err, out)
	}
	if code := run.wait(t, "agcore run --temporal"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, run.out, run.errw)
	}
	if b, err := os.ReadFile(filepath.Join(root, "note.txt")); err != nil || string(b) != "durable" {
		t.Fatalf("note.txt: %q, %v", b, err)
	}
	worker.stop(t, syscall.SIGTERM)
}

// TestE2EDurableRunSurvivesAKilledWorker: `agcore run --temporal` with
// the README's flags goes on while the `agcore worker` running its turn
// is SIGKILLed (agcore and its child) in a model call; a second worker
// takes the turn over, the tool call that completed is not run again, and
// the retried call's void text is flagged.
func TestE2EDurableRunSurvivesAKilledWorker(t *testing.T) {
	redisURL, _ := testRedis(t)
	arrived := make(chan struct{})
	w, _ := newWorld(t,
		sseReply("Recording.", fakeCall{"c1", "record", `{"text":"once"}`}),
		hangReply(arrived),
		sseReply("Recorded, despite the crash."))
	workerArgs := []string{"--redis", redisURL, "--tools", "none", "--test-record", w.record}
	a := agcoreWorker(t, w, workerArgs...)
	sessionID := uniqueSession("crash")
	run := startAgcore(t, "run", "--temporal", w.addr, "--redis", redisURL, "--session", sessionID, "--turn", "t1",
		"--model-heartbeat", "2s", "record once")
	waitFor(t, "the second model call", time.Minute, arrived)
	for deadline := time.Now().Add(time.Minute); !strings.Contains(run.out.String(), "Partial"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the partial text never streamed\nstdout %q", run.out)
		}
	}
	a.kill()
	b := agcoreWorker(t, w, workerArgs...)
	if code := run.wait(t, "agcore run --temporal"); code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s\nworker b:\n%s", code, run.out, run.errw, b.errw)
	}
	if out := run.out.String(); !strings.HasSuffix(out, "Partial \nRecorded, despite the crash.\n") {
		t.Fatalf("stdout %q", out)
	}
	if !strings.Contains(run.errw.String(), "retried") {
		t.Fatalf("the retried model call was not flagged:\n%s\nstdout %q", run.errw, run.out)
	}
	if got := w.recorded(t); strings.Join(got, ",") != "once" {
		t.Fatalf("the tool ran %v, want once", got)
	}
	if turns, _ := w.turns(t, sessionID); turns != 1 {
		t.Fatalf("the session holds %d turns", turns)
	}
}

// TestE2EBigReadKeepsHistorySmall: a 630 KiB read_file through `agcore
// worker --max-result-bytes -1 --blobs DIR` and `agcore run --temporal
// --blobs DIR` reaches the model whole and leaves under 16 KB of workflow
// history.
func TestE2EBigReadKeepsHistorySmall(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("a long line of the file being read\n", 18432) + "END-OF-THE-BIG-FILE\n" // ~630 KiB
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	w, _ := newWorld(t,
		sseReply("", fakeCall{"c1", "read_file", `{"path":"big.txt"}`}),
		sseReply("Read it all."))
	blobs := t.TempDir()
	agcoreWorker(t, w, "--root", root, "--tools", "read_file", "--max-result-bytes", "-1", "--blobs", blobs)
	sessionID := uniqueSession("big")
	run := startAgcore(t, "run", "--temporal", w.addr, "--blobs", blobs, "--session", sessionID, "--turn", "t1", "read big.txt")
	if code := run.wait(t, "agcore run --temporal"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, run.out, run.errw)
	}
	w.fake.mu.Lock()
	second := w.fake.bodies[1]
	w.fake.mu.Unlock()
	if !strings.Contains(second, "END-OF-THE-BIG-FILE") || len(second) < len(big) {
		t.Fatalf("the model read %d bytes, not the whole %d-byte file", len(second), len(big))
	}
	_, cl := devServerClient(t, w.addr)
	size := proto.Size(history(t, cl, "agcore-turn/"+sessionID+"/t1"))
	if size >= 16000 {
		t.Fatalf("the workflow history holds %d bytes", size)
	}
	t.Logf("a %d-byte read left %d bytes of workflow history", len(big), size)
}
