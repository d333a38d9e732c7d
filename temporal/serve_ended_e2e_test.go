package agtemporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestE2EServeTemporalTerminatedWorkflowEndsItsResponse: two `agcore
// serve --temporal` replicas (a background limit of one each) and one
// `agcore worker` over one PostgreSQL store. A background response
// accepted by A hangs in its model call; A is SIGKILLed, and an operator
// terminates the response's workflow (TerminateWorkflow, as `temporal
// workflow terminate` does), so nothing of the turn writes its outcome.
// On B, GET /v1/responses/{id} reads "failed" (code run_ended, its message
// naming the workflow's status), a stream resumed there ends with
// response.failed, and the principal's background slot is free again (a
// second background response, refused 429 while the first ran, is
// accepted). Then an AG-UI run whose workflow is terminated the same way
// ends, reconnected on B, with RUN_ERROR.
func TestE2EServeTemporalTerminatedWorkflowEndsItsResponse(t *testing.T) {
	store := serveStore(t, "postgres")
	hung, hungAGUI := make(chan struct{}), make(chan struct{})
	w, _ := newWorld(t, hangReply(hung), sseReply("The second one."), hangReply(hungAGUI))
	worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", store, "--tools", "none")
	serveArgs := []string{"--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL,
		"--background-limit", "1"}
	a, baseA := startServeReplica(t, serveArgs...)
	_, baseB := startServeReplica(t, serveArgs...)
	_, cl := devServerClient(t, w.addr)
	ctx := context.Background()
	get := func(u string) (int, map[string]any) {
		t.Helper()
		r, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(r.Body).Decode(&out)
		return r.StatusCode, out
	}

	resp := postJSON(t, baseA+"/v1/responses", map[string]any{"model": "agcore", "input": "hang", "background": true})
	var started map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	id, _ := started["id"].(string)
	if resp.StatusCode != 200 || started["status"] != "in_progress" {
		t.Fatalf("POST /v1/responses on A: %d %v\n%s", resp.StatusCode, started, a.errw)
	}
	waitFor(t, "the hanging model call", time.Minute, hung)
	// The principal's one background slot is held.
	resp = postJSON(t, baseB+"/v1/responses", map[string]any{"model": "agcore", "input": "another", "background": true})
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a second background response while the first runs: %d %s", resp.StatusCode, b)
	}
	a.kill() // the accepting replica is gone: B must end the response
	start := time.Now()
	if err := cl.TerminateWorkflow(ctx, agtemporal.ResponseWorkflowID(id), "", "terminated by the test"); err != nil {
		t.Fatal(err)
	}

	// A stream resumed on B, from the start, ends with response.failed.
	streamed := make(chan sseEvent, 1)
	go func() {
		var final sseEvent
		r, err := http.Get(fmt.Sprintf("%s/v1/responses/%s?stream=true", baseB, id))
		if err == nil {
			readEvents(t, r.Body, func(ev sseEvent) bool { final = ev; return true })
			r.Body.Close()
		}
		streamed <- final
	}()
	var polled map[string]any
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		code, body := get(baseB + "/v1/responses/" + id)
		if code != 200 {
			t.Fatalf("GET on B: %d %v", code, body)
		}
		if body["status"] != "in_progress" {
			polled = body
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the response is still in progress %s after its workflow was terminated\nworker: %s", time.Since(start), worker.errw)
		}
	}
	t.Logf("GET on B read %q %s after the termination", polled["status"], time.Since(start).Round(time.Millisecond))
	e, _ := polled["error"].(map[string]any)
	if polled["status"] != "failed" || e["code"] != "run_ended" || !strings.Contains(fmt.Sprint(e["message"]), "ended without its outcome") ||
		!strings.Contains(fmt.Sprint(e["message"]), "Terminated") {
		t.Fatalf("GET on B: %v", polled)
	}
	var final sseEvent
	select {
	case final = <-streamed:
	case <-time.After(2 * time.Minute):
		t.Fatal("the resumed stream did not end")
	}
	if final.Type != "response.failed" || final.Resp["status"] != "failed" {
		t.Fatalf("the resumed stream ended with %s %v", final.Type, final.Resp)
	}

	// The slot was freed: another background response is accepted, and
	// completes.
	resp = postJSON(t, baseB+"/v1/responses", map[string]any{"model": "agcore", "input": "another", "background": true})
	started = nil
	_ = json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("a background response after the first failed: %d %v", resp.StatusCode, started)
	}
	id2, _ := started["id"].(string)
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		_, body := get(baseB + "/v1/responses/" + id2)
		if body["status"] == "completed" {
			break
		}
		if body["status"] != "in_progress" || time.Now().After(deadline) {
			t.Fatalf("the second response: %v\nworker: %s", body, worker.errw)
		}
	}

	// An AG-UI run whose workflow is terminated ends with RUN_ERROR.
	run := fmt.Sprintf("run-ended-%d", time.Now().UnixNano())
	input := map[string]any{"threadId": "thread-" + run, "runId": run, "state": map[string]any{},
		"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "hang"}}, "tools": []any{}, "context": []any{}}
	resp = postJSON(t, baseB+"/agui/agcore", input)
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /agui/agcore on B: %d %s", resp.StatusCode, b)
	}
	resp.Body.Close() // the run goes on without its client
	waitFor(t, "the AG-UI run's hanging model call", time.Minute, hungAGUI)
	start = time.Now()
	if err := cl.TerminateWorkflow(ctx, agtemporal.AGUIWorkflowID("local/"+run), "", "terminated by the test"); err != nil {
		t.Fatal(err)
	}
	r, err := http.Get(fmt.Sprintf("%s/agui/agcore/runs/%s", baseB, run))
	if err != nil {
		t.Fatal(err)
	}
	var last aguiEvent
	readAGUI(t, r.Body, func(ev aguiEvent) bool { last = ev; return true })
	r.Body.Close()
	if last.Type != "RUN_ERROR" || last.Code != "run_ended" || !strings.Contains(last.Message, "Terminated") {
		t.Fatalf("the reconnected AG-UI run ended with %+v", last)
	}
	t.Logf("the AG-UI run ended with RUN_ERROR %s after the termination", time.Since(start).Round(time.Millisecond))
}
