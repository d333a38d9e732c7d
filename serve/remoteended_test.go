package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

// vanished is a serve.RemoteWatcher whose turns never run: as a durable
// runner's workflow terminated before it wrote anything. RemoteEnded says
// a turn ended once end holds its response id; with finish set, it first
// writes the turn's outcome itself (the worker's own end racing the
// question).
type vanished struct {
	elsewhere
	mu      sync.Mutex
	ended   map[string]bool
	missing map[string]bool // the runner has no run for these turns
	asked   int
	askedOf map[string]int
	finish  bool
}

// miss makes the runner have no run for the turn id (response id or
// AG-UI key), or have one again.
func (v *vanished) miss(id string, missing bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.missing == nil {
		v.missing = map[string]bool{}
	}
	v.missing[id] = missing
}

// timesAsked returns how often the runner was asked about the turn id.
func (v *vanished) timesAsked(id string) int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.askedOf[id]
}

func (v *vanished) StartRemote(_ context.Context, t serve.RemoteTurn) error {
	v.elsewhere.mu.Lock()
	defer v.elsewhere.mu.Unlock()
	v.turns = append(v.turns, t)
	return nil
}

func (v *vanished) end(id string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.ended == nil {
		v.ended = map[string]bool{}
	}
	v.ended[id] = true
}

func (v *vanished) RemoteEnded(ctx context.Context, responseID, aguiKey string) (bool, string, error) {
	v.mu.Lock()
	v.asked++
	if v.askedOf == nil {
		v.askedOf = map[string]int{}
	}
	v.askedOf[responseID+aguiKey]++
	ended, finish, missing := v.ended[responseID+aguiKey], v.finish, v.missing[responseID+aguiKey]
	v.mu.Unlock()
	if missing {
		return false, "", fmt.Errorf("the test's runner: %w", serve.ErrRemoteNotFound)
	}
	if ended && finish {
		v.elsewhere.mu.Lock()
		var l serve.ResponseLog
		for _, t := range v.turns {
			if t.Log.ResponseID == responseID {
				l = t.Log
			}
		}
		v.elsewhere.mu.Unlock()
		var obj map[string]any
		_ = json.Unmarshal(l.Response, &obj)
		obj["status"] = "completed"
		body, _ := json.Marshal(obj)
		data, _ := json.Marshal(map[string]any{"type": "response.completed", "sequence_number": l.Seq, "response": obj})
		if err := serve.FinishResponse(ctx, v.store, l, serve.ResponseOutcome{Status: "completed", Response: body,
			Events: []runlog.Event{{Seq: l.Seq, Type: "response.completed", Data: data}}}); err != nil {
			return false, "", err
		}
	}
	return ended, "the test's workflow ended without its outcome (workflow status Terminated)", nil
}

// TestRemoteTurnWhoseRunEndedEndsFailed: a remote background response
// whose run ended without writing its outcome reads "failed" on another
// server (code run_ended, the runner's reason), its stream there ends with
// response.failed, and its background slot is freed; a runner that wrote
// the outcome meanwhile keeps it.
func TestRemoteTurnWhoseRunEndedEndsFailed(t *testing.T) {
	store := memstore.New()
	v := &vanished{elsewhere: elsewhere{t: t, store: store, model: paced(nil)}}
	accept, b := watchedReplica(t, v), watchedReplica(t, v)

	got := decode(t, accept.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "hi", "background": true}))
	id, _ := got["id"].(string)
	if got["status"] != "in_progress" {
		t.Fatalf("started: %v", got)
	}
	v.end(id)
	var polled map[string]any
	testwait.For(t, "the response to read failed", func() bool {
		polled = decode(t, b.do("GET", "/v1/responses/"+id, nil))
		return polled["status"] != "in_progress"
	})
	e, _ := polled["error"].(map[string]any)
	if polled["status"] != "failed" || e["code"] != "run_ended" || !strings.Contains(e["message"].(string), "Terminated") {
		t.Fatalf("polled: %v", polled)
	}
	evs := sseEvents(t, b.do("GET", "/v1/responses/"+id+"?stream=true", nil), nil)
	if last := evs[len(evs)-1]; last["type"] != "response.failed" {
		t.Fatalf("the stream ended with %v", last)
	}
	if held, err := store.ListRecords(context.Background(), "agcore.background", ""); err != nil || len(held) != 0 {
		t.Fatalf("background slots still held: %v, %v", held, err)
	}

	// The runner's own end, written meanwhile, stays.
	v.mu.Lock()
	v.finish = true
	v.mu.Unlock()
	got = decode(t, accept.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "again", "background": true}))
	id2, _ := got["id"].(string)
	v.end(id2)
	var status string
	testwait.For(t, "the second response to end", func() bool {
		polled = decode(t, b.do("GET", "/v1/responses/"+id2, nil))
		rec, err := store.GetRecord(context.Background(), "agcore.responses", id2)
		var sr struct{ Status string }
		if err != nil || json.Unmarshal(rec.Value, &sr) != nil {
			t.Fatalf("the record: %v", err)
		}
		status = sr.Status
		return status != "in_progress"
	})
	if status != "completed" || polled["status"] == "failed" {
		t.Fatalf("the runner's outcome was replaced: %s, %v", status, polled)
	}
}

// watchedReplica is a server whose background turns v takes.
func watchedReplica(t *testing.T, v *vanished) *env {
	t.Helper()
	e := &env{t: t, store: v.store, broker: &approval.Broker{}}
	a, err := agent.New(v.model, agent.Config{Name: "echo", Store: v.store, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "echo", Agent: a, Store: v.store})
	if err != nil {
		t.Fatal(err)
	}
	if e.h, err = serve.New(serve.Options{Agents: set, Broker: e.broker, Runner: v}); err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.h)
	testwait.CloseOnCleanup(t, e.srv)
	return e
}

// TestRemoteTurnTheRunnerHasNoRunFor: a remote background response or
// AG-UI run the runner has no run for (never handed over, or forgotten)
// goes on while its record is young (a hand-over may be under way), and
// ends failed (run_ended) once it is older than serve.RemoteLostAfter.
func TestRemoteTurnTheRunnerHasNoRunFor(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	v := &vanished{elsewhere: elsewhere{t: t, store: store, model: paced(nil)}}
	accept, b := watchedReplica(t, v), watchedReplica(t, v)

	// Responses: young, then old (its record's created_at moved back).
	got := decode(t, accept.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "hi", "background": true}))
	id, _ := got["id"].(string)
	v.miss(id, true)
	testwait.For(t, "the runner to be asked", func() bool {
		if polled := decode(t, b.do("GET", "/v1/responses/"+id, nil)); polled["status"] != "in_progress" {
			t.Fatalf("a young response the runner has no run for ended: %v", polled)
		}
		return v.timesAsked(id) > 0
	})
	rec, err := store.GetRecord(ctx, "agcore.responses", id)
	if err != nil {
		t.Fatal(err)
	}
	var sr map[string]json.RawMessage
	var obj map[string]any
	if json.Unmarshal(rec.Value, &sr) != nil || json.Unmarshal(sr["response"], &obj) != nil {
		t.Fatalf("the record: %s", rec.Value)
	}
	obj["created_at"] = time.Now().Add(-serve.RemoteLostAfter - time.Minute).Unix()
	sr["response"], _ = json.Marshal(obj)
	rec.Value, _ = json.Marshal(sr)
	if _, err := store.UpdateRecord(ctx, "agcore.responses", rec); err != nil {
		t.Fatal(err)
	}
	var polled map[string]any
	testwait.For(t, "the old response to end", func() bool {
		polled = decode(t, b.do("GET", "/v1/responses/"+id, nil))
		return polled["status"] != "in_progress"
	})
	if e, _ := polled["error"].(map[string]any); polled["status"] != "failed" || e["code"] != "run_ended" || !strings.Contains(e["message"].(string), "no workflow") {
		t.Fatalf("polled: %v", polled)
	}

	// AG-UI runs: the accepting replica follows each. A young one goes
	// on (then its run ends: it ends so); an old one (its lease's
	// expiry, which tells its age, moved back) ends.
	for _, c := range []struct {
		run    string
		old    bool
		reason string
	}{{"young-run", false, "Terminated"}, {"old-run", true, "no workflow"}} {
		key := "local/" + c.run
		v.miss(key, true)
		done := make(chan []map[string]any, 1)
		go func() {
			done <- sseEvents(t, accept.do("POST", "/agui/echo", aguiInput(c.run, "hi")), nil)
		}()
		var lease session.Record
		testwait.For(t, "the run's lease", func() bool {
			lease, err = store.GetRecord(ctx, "agcore.agui.runs", key)
			return err == nil
		})
		if c.old {
			lease.Expires = lease.Expires.Add(-serve.RemoteLostAfter - time.Minute)
			if _, err := store.UpdateRecord(ctx, "agcore.agui.runs", lease); err != nil {
				t.Fatal(err)
			}
		} else {
			testwait.For(t, "the runner to be asked", func() bool { return v.timesAsked(key) > 0 })
			if _, err := store.GetRecord(ctx, "agcore.agui.runs", key); err != nil {
				t.Fatalf("a young run the runner has no run for ended: %v", err)
			}
			v.miss(key, false)
			v.end(key)
		}
		var evs []map[string]any
		select {
		case evs = <-done:
		case <-time.After(testwait.Timeout):
			t.Fatalf("%s: the run's stream did not end", c.run)
		}
		last := evs[len(evs)-1]
		if last["type"] != "RUN_ERROR" || last["code"] != "run_ended" || !strings.Contains(last["message"].(string), c.reason) {
			t.Fatalf("%s ended with %v", c.run, last)
		}
		if _, err := store.GetRecord(ctx, "agcore.agui.runs", key); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("%s: its lease: %v", c.run, err)
		}
	}
}
