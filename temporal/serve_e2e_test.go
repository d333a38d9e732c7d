package agtemporal_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/internal/testkit/pgtest"
	"github.com/agcore/agcore/internal/testkit/testenv"
)

// serveStore returns a store URL of the test's own over PostgreSQL (a
// schema) or Redis (a key prefix), dropped when the test ends.
func serveStore(t *testing.T, kind string) string {
	t.Helper()
	env := map[string]string{"postgres": "AGCORE_TEST_POSTGRES", "redis": "AGCORE_TEST_REDIS"}[kind]
	raw := os.Getenv(env)
	if raw == "" {
		testenv.Missing(t, "%s is not set: set it to run agcore serve --temporal over %s", env, kind)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	q := u.Query()
	switch kind {
	case "postgres":
		q.Set("search_path", pgtest.Schema(t, raw, "t_serve_"))
	case "redis":
		o, err := redis.ParseURL(raw)
		if err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(o)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Ping(ctx).Err(); err != nil {
			c.Close()
			testenv.Missing(t, "Redis does not answer: %v", err)
		}
		prefix := fmt.Sprintf("agcoretest:serve%d:", time.Now().UnixNano())
		t.Cleanup(func() {
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			keys, _ := c.Keys(ctx, prefix+"*").Result()
			if len(keys) > 0 {
				c.Del(ctx, keys...)
			}
		})
		q.Set("prefix", prefix)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// gateReply streams text once release is closed, after signalling
// arrived.
func gateReply(arrived chan<- struct{}, release <-chan struct{}, text string) func(http.ResponseWriter, *http.Request) {
	reply := sseReply(text)
	return func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		reply(w, r)
	}
}

var listening = regexp.MustCompile(`listening on (http://\S+) `)

// startServeReplica starts `agcore serve --temporal ADDR` and returns its
// base URL.
func startServeReplica(t *testing.T, args ...string) (*agcoreProc, string) {
	t.Helper()
	p := startAgcore(t, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if m := listening.FindStringSubmatch(p.errw.String()); m != nil {
			return p, m[1]
		}
		select {
		case <-p.done:
			t.Fatalf("agcore serve exited: %s", p.errw)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("agcore serve did not listen: %s", p.errw)
		}
	}
}

// sseEvent is one Responses event of a stream.
type sseEvent struct {
	Type string         `json:"type"`
	Seq  int64          `json:"sequence_number"`
	Resp map[string]any `json:"response"`
	Item map[string]any `json:"item"`
}

// readEvents reads the events of an event stream, calling fn with each
// until it returns false or the stream ends.
func readEvents(t *testing.T, body io.Reader, fn func(sseEvent) bool) {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev sseEvent
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		if !fn(ev) {
			return
		}
	}
}

func postJSON(t *testing.T, u string, body any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// outputText is the text of a response object's messages.
func outputText(resp map[string]any) string {
	var b strings.Builder
	items, _ := resp["output"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		parts, _ := m["content"].([]any)
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			s, _ := pm["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// TestE2EServeTemporalSurvivesTheAcceptingReplica: two `agcore serve
// --temporal` replicas and one `agcore worker` over one store
// (PostgreSQL, Redis). A background streamed response is accepted by A,
// which is SIGKILLed mid-turn (after its tool call, during its second
// model call); its stream resumes on B with starting_after and reaches
// response.completed, the tool having run once. Then a response cancelled
// through B (A being gone) ends "cancelled", every tool call answered.
func TestE2EServeTemporalSurvivesTheAcceptingReplica(t *testing.T) {
	for _, kind := range []string{"postgres", "redis"} {
		t.Run(kind, func(t *testing.T) {
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

			// Accepted by A, streamed from A until the tool call's output.
			resp := postJSON(t, baseA+"/v1/responses", map[string]any{"model": "agcore", "input": "record once", "background": true, "stream": true})
			if resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("POST /v1/responses on A: %d %s\n%s", resp.StatusCode, b, a.errw)
			}
			var id string
			last := int64(-1)
			readEvents(t, resp.Body, func(ev sseEvent) bool {
				if ev.Seq != last+1 {
					t.Fatalf("event %d after %d", ev.Seq, last)
				}
				last = ev.Seq
				if ev.Type == "response.created" {
					id, _ = ev.Resp["id"].(string)
				}
				return !(ev.Type == "response.output_item.done" && ev.Item["type"] == "function_call_output")
			})
			if id == "" {
				t.Fatalf("no response.created before event %d\nA: %s\nworker: %s", last, a.errw, worker.errw)
			}
			waitFor(t, "the second model call", time.Minute, arrived)
			a.kill() // the accepting replica and its serve-runner, mid-turn
			resp.Body.Close()
			close(release)

			// Resumed on B after the last event A gave.
			start := time.Now()
			r, err := http.Get(fmt.Sprintf("%s/v1/responses/%s?stream=true&starting_after=%d", baseB, id, last))
			if err != nil {
				t.Fatal(err)
			}
			var final sseEvent
			next := last + 1
			readEvents(t, r.Body, func(ev sseEvent) bool {
				if ev.Seq != next {
					t.Fatalf("resumed: event %d (%s), want %d", ev.Seq, ev.Type, next)
				}
				next++
				final = ev
				return true // the stream ends after the final event
			})
			r.Body.Close()
			if final.Type != "response.completed" || final.Resp["status"] != "completed" || outputText(final.Resp) != "Recording.Done after the crash." {
				t.Fatalf("the resumed stream ended with %s %v\nworker: %s", final.Type, final.Resp, worker.errw)
			}
			t.Logf("%s: resumed on B after event %d, completed %s later (%d events)", kind, last, time.Since(start).Round(time.Millisecond), next)
			if got := w.recorded(t); strings.Join(got, ",") != "once" {
				t.Fatalf("the tool ran %v, want once", got)
			}
			var polled map[string]any
			pr, err := http.Get(baseB + "/v1/responses/" + id)
			if err != nil {
				t.Fatal(err)
			}
			_ = json.NewDecoder(pr.Body).Decode(&polled)
			pr.Body.Close()
			if polled["status"] != "completed" {
				t.Fatalf("GET on B: %v", polled)
			}

			// Cancelled through B while its model call hangs on the worker.
			resp = postJSON(t, baseB+"/v1/responses", map[string]any{"model": "agcore", "input": "record again", "background": true,
				"previous_response_id": id})
			var started map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&started)
			resp.Body.Close()
			id2, _ := started["id"].(string)
			if resp.StatusCode != 200 || started["status"] != "in_progress" {
				t.Fatalf("the second background response: %d %v", resp.StatusCode, started)
			}
			waitFor(t, "the hanging model call", time.Minute, hung)
			cr := postJSON(t, baseB+"/v1/responses/"+id2+"/cancel", map[string]any{})
			var cancelled map[string]any
			_ = json.NewDecoder(cr.Body).Decode(&cancelled)
			cr.Body.Close()
			if cancelled["status"] != "cancelled" {
				t.Fatalf("cancel on B: %d %v\nworker: %s", cr.StatusCode, cancelled, worker.errw)
			}
			calls, outputs := map[string]bool{}, map[string]bool{}
			for _, it := range cancelled["output"].([]any) {
				m := it.(map[string]any)
				switch m["type"] {
				case "function_call":
					calls[m["call_id"].(string)] = true
				case "function_call_output":
					outputs[m["call_id"].(string)] = true
				}
			}
			if len(calls) == 0 {
				t.Fatalf("the cancelled response has no tool call: %v", cancelled)
			}
			for c := range calls {
				if !outputs[c] {
					t.Fatalf("call %s of the cancelled response has no output: %v", c, cancelled)
				}
			}
			// Its stream, read on B from the start, ends "cancelled" too.
			r, err = http.Get(fmt.Sprintf("%s/v1/responses/%s?stream=true", baseB, id2))
			if err != nil {
				t.Fatal(err)
			}
			final = sseEvent{}
			readEvents(t, r.Body, func(ev sseEvent) bool { final = ev; return true })
			r.Body.Close()
			if final.Type != "response.cancelled" {
				t.Fatalf("the cancelled response's stream ended with %q", final.Type)
			}
		})
	}
}

// TestE2EServeTemporalSurvivesAWorkerRestart: the accepting replica and
// the only worker are both SIGKILLed while the turn's second model call
// streams; a new worker takes the turn over (the call runs again, the
// completed tool call does not), and the stream resumed on the other
// replica reaches response.completed.
func TestE2EServeTemporalSurvivesAWorkerRestart(t *testing.T) {
	store := serveStore(t, "postgres")
	arrived := make(chan struct{})
	w, _ := newWorld(t,
		sseReply("Recording.", fakeCall{"c1", "record", `{"text":"once"}`}),
		hangReply(arrived),
		sseReply("Done after the restart."))
	workerArgs := []string{"worker", "--temporal", w.addr, "--provider", "compatible", "--model", "fake",
		"--base-url", w.fake.URL, "--store", store, "--tools", "none", "--test-record", w.record}
	worker := startAgcore(t, workerArgs...)
	serveArgs := []string{"--temporal", w.addr, "--model-heartbeat", "2s", "--store", store, "--provider", "compatible", "--model", "fake", "--base-url", w.fake.URL}
	a, baseA := startServeReplica(t, serveArgs...)
	_, baseB := startServeReplica(t, serveArgs...)

	resp := postJSON(t, baseA+"/v1/responses", map[string]any{"model": "agcore", "input": "record once", "background": true, "stream": true})
	var id string
	last := int64(-1)
	read := make(chan struct{})
	go func() { // A's stream, until A dies (its last line may be cut)
		defer close(read)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			var ev sseEvent
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok || json.Unmarshal([]byte(data), &ev) != nil {
				continue
			}
			if ev.Type == "response.created" {
				id, _ = ev.Resp["id"].(string)
			}
			last = ev.Seq
		}
	}()
	waitFor(t, "the second model call", time.Minute, arrived)
	a.kill()
	worker.kill()
	resp.Body.Close()
	<-read
	if id == "" {
		t.Fatal("A streamed no response.created")
	}
	start := time.Now()
	worker = startAgcore(t, workerArgs...)
	r, err := http.Get(fmt.Sprintf("%s/v1/responses/%s?stream=true&starting_after=%d", baseB, id, last))
	if err != nil {
		t.Fatal(err)
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
	r.Body.Close()
	if final.Type != "response.completed" || outputText(final.Resp) != "Recording.Done after the restart." {
		t.Fatalf("the resumed stream ended with %s %v\nworker: %s", final.Type, final.Resp, worker.errw)
	}
	if got := w.recorded(t); strings.Join(got, ",") != "once" {
		t.Fatalf("the tool ran %v, want once", got)
	}
	t.Logf("completed %s after the new worker started (model heartbeat 2s)", time.Since(start).Round(time.Millisecond))
}
