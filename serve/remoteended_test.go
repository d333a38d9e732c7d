package serve_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session/memstore"
)

// vanished is a serve.RemoteWatcher whose turns never run: as a durable
// runner's workflow terminated before it wrote anything. RemoteEnded says
// a turn ended once end holds its response id; with finish set, it first
// writes the turn's outcome itself (the worker's own end racing the
// question).
type vanished struct {
	elsewhere
	mu     sync.Mutex
	ended  map[string]bool
	asked  int
	finish bool
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
	ended, finish := v.ended[responseID], v.finish
	v.mu.Unlock()
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
