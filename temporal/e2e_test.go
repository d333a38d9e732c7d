package agtemporal_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session/sqlite"

	agtemporal "github.com/agcore/agcore/temporal"
)

// e2eWorld is a dev server, a fake model, a session database and a file
// the record tool appends to.
type e2eWorld struct {
	addr   string
	db     string
	record string
	marker string
	fake   *fakeModel
}

func newWorld(t *testing.T, replies ...func(http.ResponseWriter, *http.Request)) (*e2eWorld, func(extra ...string) *proc) {
	t.Helper()
	addr, _ := devServer(t)
	dir := t.TempDir()
	w := &e2eWorld{addr: addr, db: filepath.Join(dir, "agcore.db"), record: filepath.Join(dir, "record.txt"),
		marker: filepath.Join(dir, "persisted"), fake: newFakeModel(t, replies...)}
	worker := func(extra ...string) *proc {
		args := append([]string{"worker", "--temporal", addr, "--provider", "compatible", "--model", "fake",
			"--base-url", w.fake.URL, "--store", "sqlite:" + w.db, "--tools", "none", "--test-record", w.record}, extra...)
		return start(t, []string{"OPENAI_API_KEY=test-key"}, args...)
	}
	return w, worker
}

func (w *e2eWorld) submit(t *testing.T, in agtemporal.TurnInput) func() (*agtemporal.TurnResult, error) {
	t.Helper()
	_, cl := devServerClient(t, w.addr)
	wr, err := agtemporal.StartTurn(context.Background(), cl, "", in)
	if err != nil {
		t.Fatal(err)
	}
	return func() (*agtemporal.TurnResult, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var res agtemporal.TurnResult
		if err := wr.Get(ctx, &res); err != nil {
			return nil, err
		}
		return &res, nil
	}
}

func (w *e2eWorld) recorded(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(w.record)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	lines := strings.Fields(string(b))
	sort.Strings(lines) // the calls of a batch run in parallel
	return lines
}

func (w *e2eWorld) turns(t *testing.T, sessionID string) (int, int) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), w.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := st.Load(context.Background(), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	return s.Turns, len(s.Messages)
}

func waitFor(t *testing.T, what string, d time.Duration, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestE2EWorkerKilledMidToolLoopCompletesOnce(t *testing.T) {
	arrived := make(chan struct{})
	w, worker := newWorld(t,
		sseReply("", fakeCall{"c1", "record", `{"text":"one"}`}, fakeCall{"c2", "record", `{"text":"two"}`}),
		hangReply(arrived), // the second model call: the worker dies in it
		sseReply("", fakeCall{"c3", "record", `{"text":"three"}`}),
		sseReply("All three recorded."))
	a := worker()
	wait := w.submit(t, agtemporal.TurnInput{SessionID: "crash", TurnID: "turn-1",
		Messages: []llm.Message{llm.UserText("record one, two, three")},
		Timeouts: agtemporal.Timeouts{Heartbeat: 2 * time.Second}})
	waitFor(t, "the second model call", time.Minute, arrived)
	a.kill()
	if got := w.recorded(t); strings.Join(got, ",") != "one,two" { // sorted
		t.Fatalf("before the crash the tools recorded %v", got)
	}
	b := worker()
	res, err := wait()
	if err != nil {
		t.Fatalf("turn: %v\nworker a:\n%s\nworker b:\n%s", err, a.out, b.out)
	}
	if res.Text != "All three recorded." || res.Steps != 3 {
		t.Fatalf("result %+v", res)
	}
	if got := w.recorded(t); strings.Join(got, ",") != "one,three,two" {
		t.Fatalf("the tools ran %v, want each once (sorted)", got)
	}
	if turns, msgs := w.turns(t, "crash"); turns != 1 || msgs != 1+3+3 {
		t.Fatalf("the session holds %d turns and %d messages", turns, msgs)
	}
	if n := w.fake.requests(); n != 4 {
		t.Fatalf("%d model requests, want 4 (one retried)", n)
	}
	b.stop()
}

func TestE2EWorkerKilledDuringPersistenceStoresOnce(t *testing.T) {
	w, worker := newWorld(t, sseReply("Nothing to do."))
	a := worker("--test-persist-pause", "10m", "--test-persist-marker", filepath.Join(filepath.Dir(w.db), "persisted"))
	wait := w.submit(t, agtemporal.TurnInput{SessionID: "persist", TurnID: "turn-1",
		Messages: []llm.Message{llm.UserText("hello")}, Timeouts: agtemporal.Timeouts{Persist: 3 * time.Second}})
	marker := make(chan struct{})
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(filepath.Dir(w.db), "persisted")); err == nil {
				close(marker)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	waitFor(t, "the session append", time.Minute, marker)
	a.kill() // the append is done, its activity never reported
	b := worker()
	res, err := wait()
	if err != nil {
		t.Fatalf("turn: %v\n%s", err, b.out)
	}
	if !res.Stored || res.Text != "Nothing to do." {
		t.Fatalf("result %+v", res)
	}
	if turns, msgs := w.turns(t, "persist"); turns != 1 || msgs != 2 {
		t.Fatalf("the session holds %d turns and %d messages, want the turn once", turns, msgs)
	}
	b.stop()
}
