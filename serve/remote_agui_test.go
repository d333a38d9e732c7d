package serve_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"sync"
	"testing"

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
)

// aguiElsewhere is a serve.RemoteRunner that runs AG-UI runs as a
// durable runner's worker does, in no serving process: an agent of its
// own over the store, its updates through serve.AGUIEvents, its events
// written with runlog.Log.AppendBatch and its end with serve.FinishAGUI.
type aguiElsewhere struct {
	serve.InProcess
	t     *testing.T
	store *memstore.Store
	model llm.Model

	mu    sync.Mutex
	turns []serve.RemoteTurn
	fail  error
	wg    sync.WaitGroup
}

func (r *aguiElsewhere) StartRemote(_ context.Context, t serve.RemoteTurn) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	if t.AGUI == nil {
		return errors.New("not an AG-UI run")
	}
	r.turns = append(r.turns, t)
	a, err := agent.New(r.model, agent.Config{Name: t.Agent, Store: session.Scoped(r.store, t.Owner),
		Retry: middleware.RetryConfig{MaxAttempts: 1}, NewID: func() string { return t.TurnID }})
	if err != nil {
		return err
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		n := 0
		ev := serve.NewAGUIEvents(*t.AGUI, func(p string) string { n++; return fmt.Sprintf("%s%s_%d", p, t.TurnID, n) })
		log := &runlog.Log{Records: r.store}
		resp, runErr := a.RunStream(context.Background(), t.Input, &agent.RunOptions{SessionID: t.SessionID, Instructions: t.Instructions}).Each(func(u agent.Update) bool {
			if ev.Update(u) == nil {
				if err := log.AppendBatch(context.Background(), t.AGUI.Run, ev.Take(), false); err != nil {
					r.t.Error(err)
				}
			}
			return true
		})
		last, _ := ev.End(resp, runErr, false)
		for range 2 { // written again (a retried activity), it changes nothing
			if err := serve.FinishAGUI(context.Background(), r.store, *t.AGUI, last); err != nil {
				r.t.Error(err)
			}
		}
	}()
	return nil
}

func (r *aguiElsewhere) CancelRemote(context.Context, string) error { return nil }

// aguiRemoteReplica is a server whose AG-UI runs r runs.
func aguiRemoteReplica(t *testing.T, r *aguiElsewhere) *env {
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

func aguiInput(run, text string, tools ...any) map[string]any {
	if tools == nil {
		tools = []any{}
	}
	return map[string]any{"threadId": "th1", "runId": run, "state": map[string]any{"k": 1},
		"messages": []any{map[string]any{"id": "m1", "role": "user", "content": text}}, "tools": tools}
}

// TestAGUIRemoteRun: with a RemoteRunner, an AG-UI run runs in no
// serving process: the accepting one streams it from the log, numbered
// as a run of its own, to RUN_FINISHED; another replays it, and the same
// run in a process of its own makes the same events. A run the runner
// refuses ends its log with RUN_ERROR (the client gets a 503); a run id
// that is running is refused (409); a run with the client's declared
// tools runs in the serving process.
func TestAGUIRemoteRun(t *testing.T) {
	store := memstore.New()
	gate := make(chan struct{})
	close(gate)
	r := &aguiElsewhere{t: t, store: store, model: paced(gate)}
	a, b := aguiRemoteReplica(t, r), aguiRemoteReplica(t, r)
	local := replica(t, memstore.New(), agentSpec{name: "echo", model: paced(gate)})

	resp := a.do("POST", "/agui/echo", aguiInput("run-1", "hi"))
	evs := sseEvents(t, resp, nil)
	resp.Body.Close()
	types := func(evs []map[string]any) []any {
		var out []any
		for _, ev := range evs {
			out = append(out, ev["type"])
		}
		return out
	}
	text := ""
	for _, ev := range evs {
		if ev["type"] == "TEXT_MESSAGE_CONTENT" {
			text += ev["delta"].(string)
		}
	}
	if len(evs) < 6 || evs[0]["type"] != "RUN_STARTED" || evs[len(evs)-1]["type"] != "RUN_FINISHED" || text != "echo: hi and some more words to stream" {
		t.Fatalf("the accepting server streamed %q: %v", text, types(evs))
	}
	if fin := evs[len(evs)-1]; fin["threadId"] != "th1" || fin["runId"] != "run-1" {
		t.Fatalf("RUN_FINISHED %v", fin)
	}
	r.mu.Lock()
	turn := r.turns[0]
	r.mu.Unlock()
	if turn.AGUI.Seq != 3 || turn.AGUI.Run != "agui.run-1" || turn.AGUI.Key != "local/run-1" || turn.TurnID != "run-1" || turn.SessionID != "th1" {
		t.Fatalf("the remote turn %+v, its log %+v", turn, turn.AGUI)
	}
	lresp := local.do("POST", "/agui/echo", aguiInput("run-1", "hi"))
	levs := sseEvents(t, lresp, nil)
	lresp.Body.Close()
	if fmt.Sprint(types(levs)) != fmt.Sprint(types(evs)) {
		t.Fatalf("remote %v, in process %v", types(evs), types(levs))
	}
	r.wg.Wait()
	if recs, err := store.ListRecords(t.Context(), "agcore.agui.runs", ""); err != nil || len(recs) != 0 {
		t.Fatalf("lease records left: %v, %v", recs, err)
	}
	again := b.do("POST", "/agui/echo/runs/run-1", map[string]any{})
	replay := sseEvents(t, again, nil)
	again.Body.Close()
	if fmt.Sprint(types(replay)) != fmt.Sprint(types(evs)) {
		t.Fatalf("replayed on the other: %v", types(replay))
	}

	// A retried end leaves a later run of the same id alone.
	later, err := store.CreateRecord(t.Context(), "agcore.agui.runs", session.Record{Key: "local/run-1", Value: []byte("echo")})
	if err != nil {
		t.Fatal(err)
	}
	if err := serve.FinishAGUI(t.Context(), store, *turn.AGUI, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := store.GetRecord(t.Context(), "agcore.agui.runs", "local/run-1"); err != nil || got.Version != later.Version {
		t.Fatalf("the later run's lease: %v, %v", got, err)
	}
	_ = store.DeleteRecord(t.Context(), "agcore.agui.runs", "local/run-1", 0)

	// A run id that is running is refused.
	if _, err := store.CreateRecord(t.Context(), "agcore.agui.runs", session.Record{Key: "local/busy", Value: []byte("echo")}); err != nil {
		t.Fatal(err)
	}
	if code, _ := errCode(t, a.do("POST", "/agui/echo", aguiInput("busy", "hi"))); code != "run_exists" {
		t.Fatalf("a running run id: %q", code)
	}

	// The runner refuses: 503, and the run's log ends.
	r.mu.Lock()
	r.fail = errors.New("no workers")
	r.mu.Unlock()
	if code, _ := errCode(t, a.do("POST", "/agui/echo", aguiInput("run-2", "hi"))); code != "runner_unavailable" {
		t.Fatalf("a refused run: %q", code)
	}
	logged, final, err := (&runlog.Log{Records: store}).Read(t.Context(), "agui.run-2", -1)
	if err != nil || !final || logged[len(logged)-1].Type != "RUN_ERROR" {
		t.Fatalf("the refused run's log: %v %v %v", logged, final, err)
	}

	// The client's declared tools: the run is this process's.
	resp = a.do("POST", "/agui/echo", aguiInput("run-3", "hi", map[string]any{"name": "client_tool", "description": "d", "parameters": map[string]any{"type": "object"}}))
	evs = sseEvents(t, resp, nil)
	resp.Body.Close()
	if evs[len(evs)-1]["type"] != "RUN_FINISHED" {
		t.Fatalf("a run with declared tools: %v", types(evs))
	}
	r.mu.Lock()
	n := len(r.turns)
	r.mu.Unlock()
	if n != 1 {
		t.Fatalf("the runner got %d runs, want 1", n)
	}
}

// TestAGUIEventsAreDeterministic: the same updates and ids make the same
// AG-UI events, byte for byte, numbered from the log's Seq, the final one
// last; a run whose time ran out ends with RUN_ERROR "timeout".
func TestAGUIEventsAreDeterministic(t *testing.T) {
	l := serve.AGUILog{Key: "/r", Run: "agui.r", ThreadID: "th", RunID: "r", Agent: "echo", Seq: 3}
	updates := []agent.Update{
		{Kind: agent.UpdateText, Text: "Calling."},
		{Kind: agent.UpdateToolCall, ToolCall: llm.ToolUse{ID: "c1", Name: "record", Input: []byte(`{"text":"x"}`)}},
		{Kind: agent.UpdateToolResult, ToolResult: &llm.Message{Role: llm.RoleTool, ToolCallID: "c1", Content: []llm.Block{llm.Text{Text: "ok"}}}},
		{Kind: agent.UpdateText, Text: "Done."},
	}
	for _, tc := range []struct {
		name  string
		err   error
		final string
		code  string
	}{
		{"timeout", fmt.Errorf("took too long: %w", context.DeadlineExceeded), "RUN_ERROR", `"code":"timeout"`},
		{"cancelled", context.Canceled, "RUN_ERROR", `"code":"cancelled"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func() []runlog.Event {
				n := 0
				ev := serve.NewAGUIEvents(l, func(p string) string { n++; return fmt.Sprintf("%s%d", p, n) })
				for _, u := range updates {
					if err := ev.Update(u); err != nil {
						t.Fatal(err)
					}
				}
				out, failed := ev.End(nil, tc.err, tc.name == "cancelled")
				if failed == nil {
					t.Fatal("the run did not fail")
				}
				return out
			}
			a, b := run(), run()
			if len(a) != len(b) || a[0].Seq != 3 || a[len(a)-1].Type != tc.final || !bytes.Contains(a[len(a)-1].Data, []byte(tc.code)) {
				t.Fatalf("events %v", a)
			}
			for i := range a {
				if a[i].Seq != int64(i)+3 || !bytes.Equal(a[i].Data, b[i].Data) {
					t.Fatalf("event %d: %s / %s", i, a[i].Data, b[i].Data)
				}
			}
		})
	}
}
