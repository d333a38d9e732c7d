package agtemporal_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session"
	_ "github.com/agcore/agcore/session/stores"
	agtemporal "github.com/agcore/agcore/temporal"
)

// TestE2EServeTemporalTerminatedWebChatEnds: two `agcore serve
// --temporal` replicas and one `agcore worker` over one PostgreSQL store.
// A chat turn of the web page accepted by A (its tool call answered) hangs
// in its second model call; A is SIGKILLed and an operator terminates the
// turn's workflow (TerminateWorkflow), so nothing of the turn writes its
// end. On B, the page following the turn (GET /api/sessions/{id}/run)
// gets, once it was quiet for a while, the error event naming the
// workflow's status, every tool call answered, and GET /api/runs no
// longer lists the turn. A second turn, sent to B and left by its page,
// whose workflow is terminated, is ended by GET /api/runs on B, which
// then no longer lists it; so is a turn recorded three minutes before by
// a replica that died before handing it over (its record and first
// event written to the store by the test): Temporal has no workflow for
// it (serve-runner's status NotFound), and its log ends with the error
// "the durable runner has no workflow for the turn".
func TestE2EServeTemporalTerminatedWebChatEnds(t *testing.T) {
	t.Setenv("AGCORE_SERVE_TOKENS", "alice=alice-secret")
	const alice = "alice-secret"
	store := serveStore(t, "postgres")
	hung, hung2 := make(chan struct{}), make(chan struct{})
	w, _ := newWorld(t, sseReply("Recording.", fakeCall{"c1", "record", `{"text":"once"}`}), hangReply(hung), hangReply(hung2))
	worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", store, "--tools", "none", "--test-record", w.record)
	serveArgs := []string{"--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL}
	a, baseA := startServeReplica(t, serveArgs...)
	b, baseB := startServeReplica(t, serveArgs...)
	_, cl := devServerClient(t, w.addr)

	resp := pageRequest(t, "POST", baseA, "/api/chat", alice, map[string]string{"agent": "agcore", "message": "record once"})
	var before []pageEvent
	readPage(t, resp, func(ev pageEvent) bool {
		before = append(before, ev)
		return ev.Type != "tool_result"
	})
	if len(before) < 3 || before[0].Type != "session" {
		t.Fatalf("A streamed %+v\nA: %s\nworker: %s", before, a.errw, worker.errw)
	}
	sid, run := before[0].Session, before[0].Run
	waitFor(t, "the hanging model call", time.Minute, hung)
	a.kill()
	resp.Body.Close()
	start := time.Now()
	if err := cl.TerminateWorkflow(context.Background(), agtemporal.WebWorkflowID("alice/"+sid+"/"+run), "", "terminated by the test"); err != nil {
		t.Fatal(err)
	}

	// The page reloaded on B follows the turn to its end: quiet, it asks
	// about the turn's workflow, and ends the turn.
	var evs []pageEvent
	readPage(t, pageRequest(t, "GET", baseB, "/api/sessions/"+sid+"/run?agent=agcore", alice, nil), func(ev pageEvent) bool {
		evs = append(evs, ev)
		return true
	})
	t.Logf("the follower on B ended %s after the termination", time.Since(start).Round(time.Millisecond))
	calls, results := map[string]bool{}, map[string]bool{}
	for _, ev := range evs {
		switch ev.Type {
		case "tool_call":
			calls[ev.ID] = true
		case "tool_result":
			results[ev.ToolCallID] = true
		}
	}
	end := evs[len(evs)-1]
	if evs[0].Type != "user" || end.Type != "error" || !strings.Contains(end.Message, "ended without its outcome") || !strings.Contains(end.Message, "Terminated") || len(calls) == 0 {
		t.Fatalf("followed on B: %+v\nB: %s", evs, b.errw)
	}
	for c := range calls {
		if !results[c] {
			t.Fatalf("call %s has no result: %+v", c, evs)
		}
	}
	var runs struct {
		Runs []struct{ Session, Run string }
	}
	pageJSON(t, pageRequest(t, "GET", baseB, "/api/runs?agent=agcore", alice, nil), 200, &runs)
	if len(runs.Runs) != 0 {
		t.Fatalf("still listed: %+v", runs)
	}

	// A second turn, sent to B, its page gone, its workflow terminated:
	// the page's list of running turns, asking, ends it.
	resp = pageRequest(t, "POST", baseB, "/api/chat", alice, map[string]string{"agent": "agcore", "message": "hang again"})
	var second []pageEvent
	readPage(t, resp, func(ev pageEvent) bool {
		second = append(second, ev)
		return ev.Type != "session"
	})
	resp.Body.Close()
	sid2, run2 := second[len(second)-1].Session, second[len(second)-1].Run
	waitFor(t, "the second hanging model call", time.Minute, hung2)
	start = time.Now()
	if err := cl.TerminateWorkflow(context.Background(), agtemporal.WebWorkflowID("alice/"+sid2+"/"+run2), "", "terminated by the test"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		pageJSON(t, pageRequest(t, "GET", baseB, "/api/runs?agent=agcore", alice, nil), 200, &runs)
		if len(runs.Runs) == 0 {
			break
		}
		if len(runs.Runs) != 1 || runs.Runs[0].Run != run2 || time.Now().After(deadline) {
			t.Fatalf("listed %s after its workflow was terminated: %+v\nB: %s", time.Since(start), runs, b.errw)
		}
	}
	t.Logf("GET /api/runs on B no longer lists the second turn %s after the termination", time.Since(start).Round(time.Millisecond))
	// Over, it is no longer followed either.
	pageJSON(t, pageRequest(t, "GET", baseB, "/api/sessions/"+sid2+"/run?agent=agcore", alice, nil), 404, nil)

	// A turn recorded three minutes ago by a replica that died before
	// handing it over (its run record and first events, no workflow):
	// Temporal does not know it, so B's list ends it.
	ctx := context.Background()
	recs := storeRecords(t, store)
	lost := web.ChatLog{Key: "alice/sess_lost", Owner: "alice", Session: "sess_lost", Run: "run_lost"}
	v, _ := json.Marshal(map[string]any{"run": lost.Run, "agent": "agcore", "started": time.Now().Add(-3 * time.Minute).UnixMilli(), "remote": true})
	if _, err := recs.PutRecord(ctx, "agcore.web.runs", session.Record{Key: lost.Key, Value: v, Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	log := &runlog.Log{Records: recs}
	if err := log.AppendBatch(ctx, lost.EventLog(), []runlog.Event{{Seq: 0, Type: "user", Data: json.RawMessage(`{"type":"user","text":"lost"}`)}}, false); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		pageJSON(t, pageRequest(t, "GET", baseB, "/api/runs?agent=agcore", alice, nil), 200, &runs)
		if len(runs.Runs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the turn Temporal does not know is still listed: %+v\nB: %s", runs, b.errw)
		}
	}
	t.Logf("GET /api/runs on B ended the turn Temporal does not know in %s", time.Since(start).Round(time.Millisecond))
	stored, final, err := log.Read(ctx, lost.EventLog(), -1)
	if err != nil || !final || len(stored) != 2 || stored[1].Type != "error" || !strings.Contains(string(stored[1].Data), "no workflow for the turn") {
		t.Fatalf("the lost turn's log: %+v %v %v", stored, final, err)
	}
}

// storeRecords opens the store at URL store for the test (closed at its
// end) and returns its records.
func storeRecords(t *testing.T, store string) session.Records {
	t.Helper()
	st, err := session.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	if st.Closer != nil {
		t.Cleanup(func() { _ = st.Closer() })
	}
	recs, ok := session.RecordsOf(st.Store)
	if !ok {
		t.Fatalf("the store %s has no records", store)
	}
	return recs
}
