package agtemporal_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pageEvent is one event of the web page's chat stream.
type pageEvent struct {
	Type         string `json:"type"`
	Session      string `json:"session"`
	Run          string `json:"run"`
	Text         string `json:"text"`
	ID           string `json:"id"`
	Name         string `json:"name"`
	ToolCallID   string `json:"tool_call_id"`
	IsError      bool   `json:"is_error"`
	Message      string `json:"message"`
	SessionTurns int    `json:"session_turns"`
}

// pageRequest sends a request as the web page sends it: its bearer token,
// and for a POST the CSRF header, a JSON body and the page's own origin.
func pageRequest(t *testing.T, method, base, path, token string, body any) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	if method != http.MethodGet {
		req.Header.Set("X-Agcore-CSRF", "1")
		req.Header.Set("Origin", base)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readPage reads the page's events of a stream ("event: T", "data: {...}"),
// calling fn with each until it returns false or the stream ends.
func readPage(t *testing.T, resp *http.Response, fn func(pageEvent) bool) {
	t.Helper()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("the stream answered %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			name = n
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var ev pageEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.Type != name {
			t.Fatalf("event %q (%q): %v", data, name, err)
		}
		if !fn(ev) {
			return
		}
	}
}

// pageJSON decodes a JSON answer of the page's API, checking its status.
func pageJSON(t *testing.T, resp *http.Response, status int, v any) {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%v: %s", err, b)
		}
	}
}

// TestE2EServeTemporalWebChatSurvivesTheAcceptingReplica: two `agcore
// serve --temporal` replicas and one `agcore worker` over one store
// (PostgreSQL, Redis). A chat turn of the web page (POST /api/chat as the
// page sends it: bearer token, CSRF header, its origin) is accepted by A
// and runs as a workflow; A is SIGKILLed mid-turn (after its tool call's result,
// during its second model call). On B, as the page reloaded there does,
// GET /api/runs lists the turn and GET /api/sessions/{id}/run follows it
// from its first event to its finish: the answer whole, the tool run
// once, the turn stored in the session. A second turn, sent to B, is
// stopped by POST /api/sessions/{id}/cancel on B: its stream ends with
// the error of a stopped turn, its calls answered, the session left with
// its first turn only; bob sees none of alice's turns.
func TestE2EServeTemporalWebChatSurvivesTheAcceptingReplica(t *testing.T) {
	t.Setenv("AGCORE_SERVE_TOKENS", "alice=alice-secret,bob=bob-secret")
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) { webChatSurvives(t, kind) })
	}
}

// webChatSurvives is TestE2EServeTemporalWebChatSurvivesTheAcceptingReplica
// over a store of kind.
func webChatSurvives(t *testing.T, kind string) {
	const alice, bob = "alice-secret", "bob-secret"
	store := serveStore(t, kind)
	arrived, release := make(chan struct{}), make(chan struct{})
	hung := make(chan struct{})
	w, _ := newWorld(t,
		sseReply("Recording.", fakeCall{"c1", "record", `{"text":"once"}`}),
		gateReply(arrived, release, "Done after the crash."),
		sseReply("Recording again.", fakeCall{"c2", "record", `{"text":"again"}`}),
		hangReply(hung))
	worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", store, "--tools", "none", "--test-record", w.record)
	serveArgs := []string{"--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL}
	a, baseA := startServeReplica(t, serveArgs...)
	_, baseB := startServeReplica(t, serveArgs...)

	// Sent to A, read from A until the tool call's result.
	resp := pageRequest(t, "POST", baseA, "/api/chat", alice, map[string]string{"agent": "agcore", "session": "", "message": "record once"})
	var before []pageEvent
	readPage(t, resp, func(ev pageEvent) bool {
		before = append(before, ev)
		return ev.Type != "tool_result"
	})
	if len(before) < 3 || before[0].Type != "session" || before[len(before)-1].Type != "tool_result" {
		t.Fatalf("A streamed %+v\nA: %s\nworker: %s", before, a.errw, worker.errw)
	}
	sid, run := before[0].Session, before[0].Run
	waitFor(t, "the second model call", time.Minute, arrived)
	a.kill() // the accepting replica and its serve-runner, mid-turn
	resp.Body.Close()

	// The page reloaded on B lists the running turn (bob sees none).
	var runs struct {
		Runs []struct{ Session, Agent, Run string }
	}
	pageJSON(t, pageRequest(t, "GET", baseB, "/api/runs?agent=agcore", alice, nil), 200, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].Session != sid || runs.Runs[0].Run != run {
		t.Fatalf("alice's running turns on B: %+v", runs)
	}
	var his struct{ Runs []any }
	pageJSON(t, pageRequest(t, "GET", baseB, "/api/runs?agent=agcore", bob, nil), 200, &his)
	if len(his.Runs) != 0 {
		t.Fatalf("bob sees %+v", his)
	}
	close(release)

	// ... and follows it from its first event to its end.
	start := time.Now()
	var all []pageEvent
	readPage(t, pageRequest(t, "GET", baseB, "/api/sessions/"+sid+"/run?agent=agcore", alice, nil), func(ev pageEvent) bool {
		all = append(all, ev)
		return true
	})
	text, types := "", []string{}
	for _, ev := range all {
		if ev.Type == "text" {
			text += ev.Text
		}
		if len(types) == 0 || types[len(types)-1] != ev.Type {
			types = append(types, ev.Type)
		}
	}
	last := all[len(all)-1]
	if all[0].Type != "user" || all[0].Text != "record once" || last.Type != "finish" || last.SessionTurns != 1 || text != "Recording.Done after the crash." {
		t.Fatalf("followed on B: %q %s\n%+v\nworker: %s", text, strings.Join(types, " "), last, worker.errw)
	}
	for i, ev := range before {
		if all[i+1] != ev {
			t.Fatalf("event %d on B: %+v, on A %+v", i+1, all[i+1], ev)
		}
	}
	t.Logf("%s: followed on B to its finish %s after its held model call was let go, A dead (%d events: %s)", kind, time.Since(start).Round(time.Millisecond), len(all), strings.Join(types, " "))
	if got := w.recorded(t); strings.Join(got, ",") != "once" {
		t.Fatalf("the tool ran %v, want once", got)
	}
	var sess struct {
		Turns int
		Items []pageEvent
	}
	pageJSON(t, pageRequest(t, "GET", baseB, "/api/sessions/"+sid+"?agent=agcore", alice, nil), 200, &sess)
	if sess.Turns != 1 || len(sess.Items) == 0 || sess.Items[0].Type != "user" || sess.Items[len(sess.Items)-1].Text != "Done after the crash." {
		t.Fatalf("the stored session: %+v", sess)
	}
	pageJSON(t, pageRequest(t, "GET", baseB, "/api/sessions/"+sid+"?agent=agcore", bob, nil), 404, nil)

	// A second turn, sent to B and stopped on B while its model call hangs.
	resp = pageRequest(t, "POST", baseB, "/api/chat", alice, map[string]string{"agent": "agcore", "session": sid, "message": "record again"})
	stopped := make(chan []pageEvent, 1)
	go func() {
		var evs []pageEvent
		readPage(t, resp, func(ev pageEvent) bool { evs = append(evs, ev); return true })
		resp.Body.Close()
		stopped <- evs
	}()
	waitFor(t, "the hanging model call", time.Minute, hung)
	pageJSON(t, pageRequest(t, "POST", baseB, "/api/sessions/"+sid+"/cancel?agent=agcore", bob, map[string]any{}), 404, nil)
	pageJSON(t, pageRequest(t, "POST", baseB, "/api/sessions/"+sid+"/cancel?agent=agcore", alice, map[string]any{}), 200, nil)
	var evs []pageEvent
	select {
	case evs = <-stopped:
	case <-time.After(time.Minute):
		t.Fatalf("the stopped turn's stream did not end\nworker: %s", worker.errw)
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
	if end.Type != "error" || !strings.Contains(end.Message, "stopped") || len(calls) == 0 {
		t.Fatalf("the stopped turn: %+v", evs)
	}
	for c := range calls {
		if !results[c] {
			t.Fatalf("call %s of the stopped turn has no result: %+v", c, evs)
		}
	}
	pageJSON(t, pageRequest(t, "GET", baseB, "/api/sessions/"+sid+"?agent=agcore", alice, nil), 200, &sess)
	if sess.Turns != 1 {
		t.Fatalf("the session after the stopped turn: %+v", sess)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		pageJSON(t, pageRequest(t, "GET", baseB, "/api/runs?agent=agcore", alice, nil), 200, &runs)
		if len(runs.Runs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running: %+v", runs)
		}
	}
}

// webApproval is one call of the page's GET /api/approvals.
type webApproval struct {
	ID      string `json:"id"`
	CallID  string `json:"tool_call_id"`
	Tool    string `json:"tool"`
	Agent   string `json:"agent"`
	Session string `json:"session"`
	Input   json.RawMessage
}

// TestE2EServeTemporalWebChatApprovals: a web page chat turn accepted by
// replica A waits in its workflow for the approval of a write_file call
// (its approval event on A's stream); A is SIGKILLed. The page on B lists
// the call (GET /api/approvals: alice's only, bob sees none), bob's
// decision is 404, as is one for a call the turn does not wait on;
// alice's approval on B lets the turn write the file and finish, followed
// on B, and a second decision of the call is 404.
func TestE2EServeTemporalWebChatApprovals(t *testing.T) {
	t.Setenv("AGCORE_SERVE_TOKENS", "alice=alice-secret,bob=bob-secret")
	const alice, bob = "alice-secret", "bob-secret"
	store := serveStore(t, "postgres")
	root := t.TempDir()
	w, _ := newWorld(t,
		sseReply("I will write it. ", fakeCall{"call_w", "write_file", `{"path":"note.txt","content":"approved"}`}),
		sseReply("The note is written."))
	worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", store, "--root", root, "--tools", "write_file")
	serveArgs := []string{"--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL}
	a, baseA := startServeReplica(t, serveArgs...)
	b, baseB := startServeReplica(t, serveArgs...)

	resp := pageRequest(t, "POST", baseA, "/api/chat", alice, map[string]string{"agent": "agcore", "message": "write a note"})
	var before []pageEvent
	readPage(t, resp, func(ev pageEvent) bool {
		before = append(before, ev)
		return ev.Type != "approval"
	})
	sid, run := before[0].Session, before[0].Run
	ap := before[len(before)-1]
	if ap.Type != "approval" || ap.ID != run+"/call_w" || ap.ToolCallID != "call_w" || ap.Name != "write_file" {
		t.Fatalf("A streamed %+v\nA: %s\nworker: %s", before, a.errw, worker.errw)
	}
	a.kill()
	resp.Body.Close()

	var list struct{ Approvals []webApproval }
	pageJSON(t, pageRequest(t, "GET", baseB, "/api/approvals", alice, nil), 200, &list)
	if len(list.Approvals) != 1 || list.Approvals[0].ID != ap.ID || list.Approvals[0].Tool != "write_file" || list.Approvals[0].Session != sid ||
		list.Approvals[0].Agent != "agcore" || !strings.Contains(string(list.Approvals[0].Input), "note.txt") {
		t.Fatalf("alice's approvals on B: %+v\nB: %s", list, b.errw)
	}
	pageJSON(t, pageRequest(t, "GET", baseB, "/api/approvals", bob, nil), 200, &list)
	if len(list.Approvals) != 0 {
		t.Fatalf("bob sees %+v", list)
	}
	pageJSON(t, pageRequest(t, "POST", baseB, "/api/approvals/"+ap.ID, bob, map[string]any{"approved": true}), 404, nil)
	pageJSON(t, pageRequest(t, "POST", baseB, "/api/approvals/"+run+"/call_nope", alice, map[string]any{"approved": true}), 404, nil)
	if _, err := os.Stat(filepath.Join(root, "note.txt")); err == nil {
		t.Fatal("the file was written before the approval")
	}
	start := time.Now()
	pageJSON(t, pageRequest(t, "POST", baseB, "/api/approvals/"+ap.ID, alice, map[string]any{"approved": true}), 200, nil)
	decided := time.Since(start)
	var after []pageEvent
	readPage(t, pageRequest(t, "GET", baseB, "/api/sessions/"+sid+"/run?agent=agcore&after="+strconv.Itoa(len(before)), alice, nil), func(ev pageEvent) bool {
		after = append(after, ev)
		return true
	})
	text := ""
	for _, ev := range append(before, after...) {
		if ev.Type == "text" {
			text += ev.Text
		}
	}
	if last := after[len(after)-1]; last.Type != "finish" || text != "I will write it. The note is written." {
		t.Fatalf("followed on B after the approval: %q %+v\nworker: %s", text, after, worker.errw)
	}
	t.Logf("approved on B in %s (the workflow's update through serve-runner), finished %s after", decided.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if got, err := os.ReadFile(filepath.Join(root, "note.txt")); err != nil || string(got) != "approved" {
		t.Fatalf("note.txt: %q, %v", got, err)
	}
	pageJSON(t, pageRequest(t, "POST", baseB, "/api/approvals/"+ap.ID, alice, map[string]any{"approved": true}), 404, nil)
}
