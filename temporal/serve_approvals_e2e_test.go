package agtemporal_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// authed sends a request with principal token's bearer and returns the
// response (its body to close).
func authed(t *testing.T, method, u, token string, body any) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// approvalItem is one call of GET /v1/approvals.
type approvalItem struct {
	ID        string `json:"id"`
	Object    string `json:"object"`
	Tool      string `json:"tool"`
	CallID    string `json:"call_id"`
	Arguments string `json:"arguments"`
	Agent     string `json:"agent"`
	Session   string `json:"session"`
	Run       string `json:"run"`
	Created   int64  `json:"created"`
}

// listApprovals is GET /v1/approvals as token's principal.
func listApprovals(t *testing.T, base, token string) []approvalItem {
	t.Helper()
	r := authed(t, "GET", base+"/v1/approvals", token, nil)
	defer r.Body.Close()
	var out struct {
		Object string         `json:"object"`
		Data   []approvalItem `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&out); err != nil || r.StatusCode != 200 || out.Object != "list" {
		t.Fatalf("GET /v1/approvals: %d %v %+v", r.StatusCode, err, out)
	}
	return out.Data
}

// decideApproval is POST /v1/approvals/{id} as token's principal: its
// status.
func decideApproval(t *testing.T, base, token, id string, approved bool, reason string) int {
	t.Helper()
	r := authed(t, "POST", base+"/v1/approvals/"+id, token, map[string]any{"approved": approved, "reason": reason})
	defer r.Body.Close()
	var out struct {
		ID       string `json:"id"`
		Object   string `json:"object"`
		Approved bool   `json:"approved"`
	}
	_ = json.NewDecoder(r.Body).Decode(&out)
	if r.StatusCode == 200 && (out.ID != id || out.Object != "approval.decision" || out.Approved != approved) {
		t.Fatalf("POST /v1/approvals/%s: %+v", id, out)
	}
	return r.StatusCode
}

// waitApproval polls GET /v1/approvals until it lists one call.
func waitApproval(t *testing.T, base, token string, within time.Duration) approvalItem {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if got := listApprovals(t, base, token); len(got) > 0 {
			if len(got) != 1 {
				t.Fatalf("GET /v1/approvals: %+v, want one call", got)
			}
			return got[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/approvals listed no call within %s", within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// streamUntilCall reads a background response's stream until the
// function_call item of the call is done, checking the numbering, and
// returns the response id, the last event's number and the events' types.
func streamUntilCall(t *testing.T, body io.Reader, from int64) (id string, last int64, types []string) {
	t.Helper()
	last = from
	readEvents(t, body, func(ev sseEvent) bool {
		if ev.Seq != last+1 {
			t.Fatalf("event %d (%s) after %d", ev.Seq, ev.Type, last)
		}
		last = ev.Seq
		types = append(types, ev.Type)
		if ev.Type == "response.created" {
			id, _ = ev.Resp["id"].(string)
		}
		if ev.Item["type"] == "function_call_output" || strings.HasPrefix(ev.Type, "response.completed") {
			t.Fatalf("event %s before the call was decided", ev.Type)
		}
		return !(ev.Type == "response.output_item.done" && ev.Item["type"] == "function_call")
	})
	return id, last, types
}

// streamToEnd resumes a background response's stream after event last on
// base and returns its final event.
func streamToEnd(t *testing.T, base, token, id string, last int64) sseEvent {
	t.Helper()
	r := authed(t, "GET", fmt.Sprintf("%s/v1/responses/%s?stream=true&starting_after=%d", base, id, last), token, nil)
	defer r.Body.Close()
	if r.StatusCode != 200 {
		b, _ := io.ReadAll(r.Body)
		t.Fatalf("resuming %s: %d %s", id, r.StatusCode, b)
	}
	var final sseEvent
	next := last + 1
	readEvents(t, r.Body, func(ev sseEvent) bool {
		if ev.Seq != next {
			t.Fatalf("resumed: event %d (%s), want %d", ev.Seq, ev.Type, next)
		}
		next++
		final = ev
		return true
	})
	return final
}

// callOutput is the output of the function_call_output item of call in a
// response object.
func callOutput(resp map[string]any, call string) (string, bool) {
	items, _ := resp["output"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["type"] == "function_call_output" && m["call_id"] == call {
			s, _ := m["output"].(string)
			return s, true
		}
	}
	return "", false
}

// TestE2EServeTemporalApprovals: two `agcore serve --temporal` replicas
// with two principals (alice, bob) and one `agcore worker` offering
// write_file (which needs approval), over one store (PostgreSQL, Redis).
// Alice's background response, accepted and streamed by A, shows the
// call as an in-process turn does (its function_call item, no output)
// and waits in the workflow. A is SIGKILLed; on B, GET /v1/approvals
// lists the call for alice and nothing for bob, bob's decision is a 404,
// alice approves it, and the stream resumed on B reaches
// response.completed with the file written. A second response's call is
// listed by `agcore approve --response` too, denied on B with a reason
// the model reads, and the file is not written.
func TestE2EServeTemporalApprovals(t *testing.T) {
	t.Setenv("AGCORE_SERVE_TOKENS", "alice=alice-secret,bob=bob-secret")
	const alice, bob = "alice-secret", "bob-secret"
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
			store := serveStore(t, kind)
			root := t.TempDir()
			w, _ := newWorld(t,
				sseReply("I will write it. ", fakeCall{"call_w", "write_file", `{"path":"note.txt","content":"approved"}`}),
				sseReply("The note is written."),
				sseReply("Trying another. ", fakeCall{"call_x", "write_file", `{"path":"denied.txt","content":"no"}`}),
				sseReply("I did not write it."))
			worker := startAgcore(t, "worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
				"--base-url", w.fake.URL, "--store", store, "--root", root, "--tools", "write_file")
			serveArgs := []string{"--temporal", w.addr, "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL}
			a, baseA := startServeReplica(t, serveArgs...)
			b, baseB := startServeReplica(t, serveArgs...)

			// Accepted and streamed by A until the call waits.
			resp := authed(t, "POST", baseA+"/v1/responses", alice, map[string]any{"model": "agcore", "input": "write a note", "background": true, "stream": true})
			if resp.StatusCode != 200 {
				body, _ := io.ReadAll(resp.Body)
				t.Fatalf("POST /v1/responses on A: %d %s\n%s", resp.StatusCode, body, a.errw)
			}
			id, last, types := streamUntilCall(t, resp.Body, -1)
			if id == "" {
				t.Fatalf("no response.created\nA: %s\nworker: %s", a.errw, worker.errw)
			}
			// The pending call as an in-process turn shows it: its item
			// added, its arguments, its item done; no output.
			tail := strings.Join(types[len(types)-3:], ",")
			if tail != "response.output_item.added,response.function_call_arguments.done,response.output_item.done" {
				t.Fatalf("the events before the decision end with %s", tail)
			}
			a.kill()
			resp.Body.Close()

			// Listed on B, for alice only.
			p := waitApproval(t, baseB, alice, time.Minute)
			run := strings.TrimPrefix(id, "resp_")
			if p.ID != run+"/call_w" || p.Object != "approval" || p.Tool != "write_file" || p.CallID != "call_w" || p.Run != run ||
				p.Agent != "agcore" || p.Created == 0 || !strings.Contains(p.Arguments, `"note.txt"`) {
				t.Fatalf("alice's pending call: %+v (response %s)", p, id)
			}
			listed := time.Now()
			if got := listApprovals(t, baseB, alice); len(got) != 1 {
				t.Fatalf("alice's list again: %+v", got)
			}
			t.Logf("%s: GET /v1/approvals on B (the workflow queried through serve-runner) took %s", kind, time.Since(listed).Round(time.Millisecond))
			if got := listApprovals(t, baseB, bob); len(got) != 0 {
				t.Fatalf("bob sees %+v", got)
			}
			if code := decideApproval(t, baseB, bob, p.ID, true, ""); code != 404 {
				t.Fatalf("bob's decision: %d, want 404", code)
			}
			if _, err := os.Stat(filepath.Join(root, "note.txt")); err == nil {
				t.Fatal("the file was written before the approval")
			}
			// A call the workflow does not wait on: its update's validator
			// refuses it, a 404 too.
			if code := decideApproval(t, baseB, alice, run+"/call_nope", true, ""); code != 404 {
				t.Fatalf("deciding a call the turn does not wait on: %d, want 404\nB: %s", code, b.errw)
			}
			start := time.Now()
			if code := decideApproval(t, baseB, alice, p.ID, true, ""); code != 200 {
				t.Fatalf("alice's approval on B: %d\nB: %s", code, b.errw)
			}
			decided := time.Since(start)
			final := streamToEnd(t, baseB, alice, id, last)
			if final.Type != "response.completed" || outputText(final.Resp) != "I will write it. The note is written." {
				t.Fatalf("the resumed stream ended with %s %v\nworker: %s", final.Type, final.Resp, worker.errw)
			}
			if out, ok := callOutput(final.Resp, "call_w"); !ok || strings.Contains(out, "denied") {
				t.Fatalf("call_w's output: %q, %v", out, ok)
			}
			t.Logf("%s: approved on B in %s, completed %s after the decision", kind, decided.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
			if got, err := os.ReadFile(filepath.Join(root, "note.txt")); err != nil || string(got) != "approved" {
				t.Fatalf("note.txt: %q, %v", got, err)
			}
			if code := decideApproval(t, baseB, alice, p.ID, true, ""); code != 404 {
				t.Fatalf("a second decision of the call: %d, want 404", code)
			}
			if got := listApprovals(t, baseB, alice); len(got) != 0 {
				t.Fatalf("after the turn alice sees %+v", got)
			}

			// A denial, on B; the call listed by agcore approve --response too.
			resp = authed(t, "POST", baseB+"/v1/responses", alice, map[string]any{"model": "agcore", "input": "write another",
				"background": true, "stream": true, "previous_response_id": id})
			id2, last2, _ := streamUntilCall(t, resp.Body, -1)
			resp.Body.Close()
			p = waitApproval(t, baseB, alice, time.Minute)
			if p.CallID != "call_x" || p.Run != strings.TrimPrefix(id2, "resp_") {
				t.Fatalf("alice's second pending call: %+v (response %s)", p, id2)
			}
			out, err := exec.Command(agcoreBinary(t), "approve", "--temporal", w.addr, "--response", id2, "--json").CombinedOutput()
			if err != nil || !strings.Contains(string(out), `"CallID":"call_x"`) {
				t.Fatalf("agcore approve --response %s --json: %v\n%s", id2, err, out)
			}
			if code := decideApproval(t, baseB, alice, p.ID, false, "not that file"); code != 200 {
				t.Fatalf("alice's denial on B: %d", code)
			}
			final = streamToEnd(t, baseB, alice, id2, last2)
			if final.Type != "response.completed" || !strings.HasSuffix(outputText(final.Resp), "I did not write it.") {
				t.Fatalf("the denied response ended with %s %v", final.Type, final.Resp)
			}
			if out, ok := callOutput(final.Resp, "call_x"); !ok || !strings.Contains(out, "not that file") {
				t.Fatalf("call_x's output: %q, %v", out, ok)
			}
			if _, err := os.Stat(filepath.Join(root, "denied.txt")); err == nil {
				t.Fatal("the denied call wrote its file")
			}
		})
	}
}
