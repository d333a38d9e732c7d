package agtemporal_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestE2EServeTemporalAGUICancel: an AG-UI run agcore serve --temporal
// accepted on A runs as a workflow; its client leaves and A is
// SIGKILLed while the run's model call hangs on the worker; POST
// /agui/agcore/runs/RUN/cancel on B stops the workflow: B answers
// "cancelled", the run's stream, read on B, ends RUN_ERROR "cancelled"
// after the tool call's result, and cancelling it again is a 404.
func TestE2EServeTemporalAGUICancel(t *testing.T) {
	store := serveStore(t, "postgres")
	hung := make(chan struct{})
	w, _ := newWorld(t,
		sseReply("Recording.", fakeCall{"c1", "record", `{"text":"once"}`}),
		hangReply(hung))
	worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", store, "--tools", "none", "--test-record", w.record)
	serveArgs := []string{"--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL}
	a, baseA := startServeReplica(t, serveArgs...)
	_, baseB := startServeReplica(t, serveArgs...)

	run := fmt.Sprintf("run-cancel-%d", time.Now().UnixNano())
	input := map[string]any{"threadId": "thread-" + run, "runId": run, "state": map[string]any{},
		"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "record once"}}, "tools": []any{}, "context": []any{}}
	resp := postJSON(t, baseA+"/agui/agcore", input)
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /agui/agcore on A: %d %s\n%s", resp.StatusCode, b, a.errw)
	}
	waitFor(t, "the hanging model call", time.Minute, hung)
	resp.Body.Close()
	a.kill()

	start := time.Now()
	cr := postJSON(t, baseB+"/agui/agcore/runs/"+run+"/cancel", nil)
	var got struct {
		RunID, Status string
		Event         aguiEvent
	}
	_ = json.NewDecoder(cr.Body).Decode(&got)
	cr.Body.Close()
	if cr.StatusCode != 200 || got.Status != "cancelled" || got.RunID != run || got.Event.Type != "RUN_ERROR" {
		t.Fatalf("cancel on B: %d %+v\nworker: %s", cr.StatusCode, got, worker.errw)
	}
	t.Logf("cancel on B answered %q in %s", got.Status, time.Since(start).Round(time.Millisecond))

	r, err := http.Get(fmt.Sprintf("%s/agui/agcore/runs/%s", baseB, run))
	if err != nil {
		t.Fatal(err)
	}
	var evs []string
	var last aguiEvent
	readAGUI(t, r.Body, func(ev aguiEvent) bool { evs = append(evs, ev.Type); last = ev; return true })
	r.Body.Close()
	seq := strings.Join(evs, " ")
	if !strings.Contains(seq, "TOOL_CALL_RESULT") || last.Type != "RUN_ERROR" || last.Code != "cancelled" {
		t.Fatalf("the cancelled run's events: %s (last %+v)", seq, last)
	}
	again := postJSON(t, baseB+"/agui/agcore/runs/"+run+"/cancel", nil)
	again.Body.Close()
	if again.StatusCode != 404 {
		t.Fatalf("cancelling the ended run: %d, want 404", again.StatusCode)
	}
}
