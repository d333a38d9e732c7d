package serve_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// elsewhere is a serve.RemoteRunner that runs each turn as a durable
// runner's worker does, in no serving process: an agent of its own over
// the store, its updates through serve.ResponseEvents, its events and
// outcome written with runlog.Log.AppendBatch and serve.FinishResponse.
type elsewhere struct {
	serve.InProcess
	t     *testing.T
	store *memstore.Store
	model llm.Model
	tools []tool.Tool

	mu      sync.Mutex
	turns   []serve.RemoteTurn
	cancels map[string]context.CancelFunc
	wg      sync.WaitGroup
}

func (r *elsewhere) StartRemote(_ context.Context, t serve.RemoteTurn) error {
	a, err := agent.New(r.model, agent.Config{Name: t.Agent, Tools: r.tools, Store: session.Scoped(r.store, t.Owner),
		Retry: middleware.RetryConfig{MaxAttempts: 1}, NewID: func() string { return t.TurnID }})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	r.turns = append(r.turns, t)
	if r.cancels == nil {
		r.cancels = map[string]context.CancelFunc{}
	}
	r.cancels[t.Log.ResponseID] = cancel
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer cancel()
		n := 0
		ev, err := serve.NewResponseEvents(t.Log, func(p string) string { n++; return p + t.TurnID + "_" + string(rune('a'+n)) })
		if err != nil {
			r.t.Error(err)
			return
		}
		log := &runlog.Log{Records: r.store}
		resp, runErr := a.RunStream(ctx, t.Input, &agent.RunOptions{SessionID: t.SessionID, Instructions: t.Instructions}).Each(func(u agent.Update) bool {
			if ev.Update(u) == nil {
				if err := log.AppendBatch(context.Background(), t.Log.Run, ev.Take(), false); err != nil {
					r.t.Error(err)
				}
			}
			return true
		})
		out, _ := ev.End(resp, runErr, ctx.Err() != nil)
		if err := serve.FinishResponse(context.Background(), r.store, t.Log, out); err != nil {
			r.t.Error(err)
		}
		// Written again (a retried activity), it changes nothing.
		if err := serve.FinishResponse(context.Background(), r.store, t.Log, out); err != nil {
			r.t.Errorf("FinishResponse again: %v", err)
		}
	}()
	return nil
}

func (r *elsewhere) CancelRemote(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.cancels[id]; c != nil {
		c()
	}
	return nil
}

// remoteReplica is a server whose background turns r runs.
func remoteReplica(t *testing.T, r *elsewhere) *env {
	t.Helper()
	e := &env{t: t, store: r.store, broker: &approval.Broker{}}
	a, err := agent.New(r.model, agent.Config{Name: "echo", Store: r.store, Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "echo", Agent: a, Store: r.store})
	if err != nil {
		t.Fatal(err)
	}
	if e.h, err = serve.New(serve.Options{Agents: set, Broker: e.broker, Runner: r}); err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.h)
	testwait.CloseOnCleanup(t, e.srv)
	return e
}

// TestRemoteRunnerTurnsOutliveTheirServer: with a RemoteRunner, a
// background turn runs in no serving process: the one that accepted it
// streams it from the log to its client, another resumes it after any
// event and polls its outcome, and a cancellation through another ends it
// "cancelled". The events are those of an in-process turn: the same
// types in the same order.
func TestRemoteRunnerTurnsOutliveTheirServer(t *testing.T) {
	store := memstore.New()
	gate := make(chan struct{})
	r := &elsewhere{t: t, store: store, model: paced(gate)}
	a, b := remoteReplica(t, r), remoteReplica(t, r)
	local := replica(t, memstore.New(), agentSpec{name: "echo", model: paced(gate)})
	close(gate)

	resp := a.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "hi", "background": true, "stream": true, "instructions": "Be brief."})
	evs := sseEvents(t, resp, nil)
	resp.Body.Close()
	if len(evs) < 4 || evs[0]["type"] != "response.created" || evs[len(evs)-1]["type"] != "response.completed" {
		t.Fatalf("the accepting server streamed %v", evs)
	}
	for i, ev := range evs {
		if ev["sequence_number"] != float64(i) {
			t.Fatalf("event %d has the number %v", i, ev["sequence_number"])
		}
	}
	id := evs[0]["response"].(map[string]any)["id"].(string)
	final := evs[len(evs)-1]["response"].(map[string]any)
	if outputText(t, final) != "echo: hi and some more words to stream" {
		t.Fatalf("final %v", final)
	}
	r.mu.Lock()
	turn := r.turns[0]
	r.mu.Unlock()
	if turn.Instructions != "Be brief." || turn.TurnID != strings.TrimPrefix(id, "resp_") || turn.Log.Seq != 2 || turn.Log.ResponseID != id {
		t.Fatalf("the remote turn %+v", turn)
	}

	// The same turn in a process of its own: the same events.
	lresp := local.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "hi", "background": true, "stream": true})
	levs := sseEvents(t, lresp, nil)
	lresp.Body.Close()
	if len(levs) != len(evs) {
		t.Fatalf("%d events remote, %d in process", len(evs), len(levs))
	}
	for i := range evs {
		if evs[i]["type"] != levs[i]["type"] {
			t.Fatalf("event %d: %v remote, %v in process", i, evs[i]["type"], levs[i]["type"])
		}
	}

	// Resumed on the other server, polled there.
	rs := b.do("GET", "/v1/responses/"+id+"?stream=true&starting_after=3", nil)
	rest := sseEvents(t, rs, nil)
	rs.Body.Close()
	if len(rest) != len(evs)-4 || rest[0]["sequence_number"] != float64(4) {
		t.Fatalf("resumed after 3: %v", rest)
	}
	if got := decode(t, b.do("GET", "/v1/responses/"+id, nil)); got["status"] != "completed" {
		t.Fatalf("polled on the other: %v", got)
	}
	if s := a.session(strings.TrimSuffix(strings.TrimPrefix(id, "resp_"), "_1")); s.Turns != 1 {
		t.Fatalf("the session has %d turns", s.Turns)
	}

	// Cancelled through the other server while it waits in its model call.
	hold := make(chan struct{})
	defer close(hold)
	r.model = paced(hold)
	got := decode(t, a.do("POST", "/v1/responses", map[string]any{"model": "echo", "input": "wait", "background": true}))
	id2 := got["id"].(string)
	time.Sleep(50 * time.Millisecond)
	got = decode(t, b.do("POST", "/v1/responses/"+id2+"/cancel", nil))
	if got["status"] != "cancelled" {
		t.Fatalf("cancel: %v", got)
	}
	stream := b.do("GET", "/v1/responses/"+id2+"?stream=true", nil)
	all := sseEvents(t, stream, nil)
	stream.Body.Close()
	if last := all[len(all)-1]; last["type"] != "response.cancelled" {
		t.Fatalf("the cancelled turn's stream ended with %v", last)
	}
	r.wg.Wait()
	// Their ends freed the principal's background slots (Options.MaxBackground).
	if held, err := store.ListRecords(context.Background(), "agcore.background", ""); err != nil || len(held) != 0 {
		t.Fatalf("background slots still held: %v, %v", held, err)
	}
}

// TestResponseEventsAreDeterministic: the same updates and ids make the
// same events, byte for byte (what a workflow replaying a turn relies
// on), numbered from the log's Seq, the final one last.
func TestResponseEventsAreDeterministic(t *testing.T) {
	l := serve.ResponseLog{ResponseID: "resp_s_1", Run: "resp_s_1.x", Seq: 2,
		Response: []byte(`{"id":"resp_s_1","object":"response","status":"in_progress","model":"echo","output":[]}`)}
	updates := []agent.Update{
		{Kind: agent.UpdateText, Text: "Calling."},
		{Kind: agent.UpdateToolCall, ToolCall: llm.ToolUse{ID: "c1", Name: "record", Input: []byte(`{"text":"x"}`)}},
	}
	run := func() []runlog.Event {
		n := 0
		ev, err := serve.NewResponseEvents(l, func(p string) string { n++; return p + string(rune('a'+n)) })
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range updates {
			if err := ev.Update(u); err != nil {
				t.Fatal(err)
			}
		}
		out, failed := ev.End(nil, context.Canceled, true)
		if out.Status != "cancelled" || failed != nil {
			t.Fatalf("outcome %s, %v", out.Status, failed)
		}
		if !bytes.Contains(out.Response, []byte(`"function_call_output"`)) {
			t.Fatalf("the call is not answered: %s", out.Response)
		}
		return append(ev.Take(), out.Events...)
	}
	a, b := run(), run()
	if len(a) != len(b) || a[0].Seq != 2 || a[len(a)-1].Type != "response.cancelled" {
		t.Fatalf("events %v", a)
	}
	for i := range a {
		if a[i].Seq != int64(i)+2 || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Fatalf("event %d: %s / %s", i, a[i].Data, b[i].Data)
		}
	}
}

// TestResponseEventsTimeout: a remote turn whose time ran out (an error
// wrapping context.DeadlineExceeded) fails with the code "timeout", as a
// turn of the serving process past Options.TurnTimeout.
func TestResponseEventsTimeout(t *testing.T) {
	l := serve.ResponseLog{ResponseID: "resp_s_1", Run: "resp_s_1.x", Seq: 2,
		Response: []byte(`{"id":"resp_s_1","object":"response","status":"in_progress","model":"echo","output":[]}`)}
	ev, err := serve.NewResponseEvents(l, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, failed := ev.End(nil, fmt.Errorf("the turn took too long: %w", context.DeadlineExceeded), false)
	if out.Status != "failed" || failed == nil || !bytes.Contains(out.Response, []byte(`"code":"timeout"`)) {
		t.Fatalf("outcome %s %s, %v", out.Status, out.Response, failed)
	}
	if last := out.Events[len(out.Events)-1]; last.Type != "response.failed" || last.Seq != 2 {
		t.Fatalf("final event %s %d", last.Type, last.Seq)
	}
}
