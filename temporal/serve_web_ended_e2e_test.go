package agtemporal_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestE2EServeTemporalTerminatedWebChatEnds: two `agcore serve
// --temporal` replicas and one `agcore worker` over one PostgreSQL store.
// A chat turn of the web page accepted by A (its tool call answered) hangs
// in its second model call; A is SIGKILLed and an operator terminates the
// turn's workflow (TerminateWorkflow), so nothing of the turn writes its
// end. On B, the page following the turn (GET /api/sessions/{id}/run)
// gets the error event naming the workflow's status, every tool call
// answered, and GET /api/runs no longer lists the turn.
func TestE2EServeTemporalTerminatedWebChatEnds(t *testing.T) {
	t.Setenv("AGCORE_SERVE_TOKENS", "alice=alice-secret")
	const alice = "alice-secret"
	store := serveStore(t, "postgres")
	hung := make(chan struct{})
	w, _ := newWorld(t, sseReply("Recording.", fakeCall{"c1", "record", `{"text":"once"}`}), hangReply(hung))
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

	// The page reloaded on B follows the turn (its first event read while
	// the turn is still listed) ...
	first := make(chan struct{})
	followed := make(chan []pageEvent, 1)
	go func() {
		var evs []pageEvent
		r := pageRequest(t, "GET", baseB, "/api/sessions/"+sid+"/run?agent=agcore", alice, nil)
		defer r.Body.Close()
		if r.StatusCode != http.StatusOK {
			close(first)
			followed <- nil
			return
		}
		readPage(t, r, func(ev pageEvent) bool {
			if len(evs) == 0 {
				close(first)
			}
			evs = append(evs, ev)
			return true
		})
		followed <- evs
	}()
	waitFor(t, "the follower's first event", time.Minute, first)

	// ... and lists it no more once B found its workflow ended.
	var runs struct {
		Runs []struct{ Session, Run string }
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		pageJSON(t, pageRequest(t, "GET", baseB, "/api/runs?agent=agcore", alice, nil), 200, &runs)
		if len(runs.Runs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still listed %s after its workflow was terminated: %+v\nB: %s", time.Since(start), runs, b.errw)
		}
	}
	t.Logf("GET /api/runs on B no longer lists the turn %s after the termination", time.Since(start).Round(time.Millisecond))
	var evs []pageEvent
	select {
	case evs = <-followed:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the follower on B did not end\nB: %s", b.errw)
	}
	t.Logf("the follower on B ended %s after the termination", time.Since(start).Round(time.Millisecond))
	if len(evs) == 0 {
		t.Fatalf("the follower on B got nothing\nB: %s", b.errw)
	}
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
	if end.Type != "error" || !strings.Contains(end.Message, "ended without its outcome") || !strings.Contains(end.Message, "Terminated") || len(calls) == 0 {
		t.Fatalf("followed on B: %+v", evs)
	}
	for c := range calls {
		if !results[c] {
			t.Fatalf("call %s has no result: %+v", c, evs)
		}
	}
}
