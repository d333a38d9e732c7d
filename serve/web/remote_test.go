package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// fakeRemote is a web.Remote that runs each turn on a goroutine as a
// durable runner's worker does: its own agent, the page's events made by
// web.ChatEvents and written to the store's event log, the turn ended by
// web.FinishChat; approvals wait in it (web.RemoteApprovals).
type fakeRemote struct {
	t     *testing.T
	store *memstore.Store
	agent *agent.Agent

	mu       sync.Mutex
	started  []web.RemoteChat
	cancels  map[string]context.CancelFunc
	pending  map[string][]web.RemoteApproval // by turn id
	decided  map[string]chan tool.Decision   // by turn id + "/" + call id
	finished chan string                     // each ended turn's id
}

type fakeTurnKey struct{}

// fakeTurn is a running turn's state, in its context for Approve.
type fakeTurn struct {
	mu  sync.Mutex
	l   web.ChatLog
	ev  *web.ChatEvents
	log *runlog.Log
}

func (ft *fakeTurn) flush(ctx context.Context) {
	if evs := ft.ev.Take(); len(evs) > 0 {
		_ = ft.log.AppendBatch(ctx, ft.l.EventLog(), evs, false)
	}
}

func newFakeRemote(t *testing.T) *fakeRemote {
	return &fakeRemote{t: t, cancels: map[string]context.CancelFunc{}, pending: map[string][]web.RemoteApproval{},
		decided: map[string]chan tool.Decision{}, finished: make(chan string, 10)}
}

// bind builds the fake's agent on f's store, model and tools.
func (r *fakeRemote) bind(t *testing.T, f *fixture, tools ...tool.Tool) {
	r.store = f.store
	a, err := agent.New(f.model, agent.Config{Name: "helper", Tools: tools, Store: f.store, Approver: r,
		Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	r.agent = a
}

func (r *fakeRemote) StartChat(_ context.Context, c web.RemoteChat) error {
	if c.Agent != "helper" || c.Log.Seq != 2 || len(c.Input) != 1 || c.Log.ID() != c.Log.Key+"/"+c.Log.Run {
		return fmt.Errorf("a turn of %+v", c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	id := c.Log.ID()
	r.mu.Lock()
	r.started = append(r.started, c)
	r.cancels[id] = cancel
	r.mu.Unlock()
	ft := &fakeTurn{l: c.Log, ev: web.NewChatEvents(c.Log), log: &runlog.Log{Records: r.store}}
	go func() {
		defer cancel()
		rctx := context.WithValue(ctx, fakeTurnKey{}, ft)
		resp, err := r.agent.RunStream(rctx, c.Input, &agent.RunOptions{SessionID: c.Log.Session, Store: session.Scoped(r.store, c.Log.Owner)}).Each(func(u agent.Update) bool {
			ft.mu.Lock()
			defer ft.mu.Unlock()
			ft.ev.Update(u)
			ft.flush(context.Background())
			return true
		})
		ft.mu.Lock()
		last, _ := ft.ev.End(resp, err, ctx.Err() != nil)
		ft.mu.Unlock()
		if err := web.FinishChat(context.Background(), r.store, c.Log, last); err != nil {
			r.t.Errorf("FinishChat: %v", err)
		}
		r.finished <- id
	}()
	return nil
}

func (r *fakeRemote) CancelChat(_ context.Context, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.cancels[id]; c != nil {
		c()
	}
	return nil
}

func (r *fakeRemote) PendingChat(_ context.Context, id string) ([]web.RemoteApproval, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]web.RemoteApproval(nil), r.pending[id]...), nil
}

func (r *fakeRemote) DecideChat(_ context.Context, id, callID string, d tool.Decision) error {
	r.mu.Lock()
	ch := r.decided[id+"/"+callID]
	delete(r.decided, id+"/"+callID)
	r.mu.Unlock()
	if ch == nil {
		return fmt.Errorf("%w: %s", approval.ErrUnknown, callID)
	}
	ch <- d
	return nil
}

// Approve is the fake's agent's approver: the call waits in the fake,
// shown by the page's approval event.
func (r *fakeRemote) Approve(ctx context.Context, call tool.Call) (tool.Decision, error) {
	ft := ctx.Value(fakeTurnKey{}).(*fakeTurn)
	id := ft.l.ID()
	ch := make(chan tool.Decision, 1)
	r.mu.Lock()
	r.pending[id] = append(r.pending[id], web.RemoteApproval{CallID: call.ID, Tool: call.Name, Input: call.Input, Since: time.Now()})
	r.decided[id+"/"+call.ID] = ch
	r.mu.Unlock()
	ft.mu.Lock()
	ft.ev.ApprovalRequired(call.ID, call.Name, call.Input)
	ft.flush(ctx)
	ft.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.pending[id] = nil
		r.mu.Unlock()
	}()
	select {
	case d := <-ch:
		return d, nil
	case <-ctx.Done():
		return tool.Decision{}, ctx.Err()
	}
}

// strip drops what differs between two turns of the same script: the
// session and run ids.
func strip(evs []event) []event {
	out := make([]event, len(evs))
	for i, ev := range evs {
		ev.Session, ev.ID, ev.Run = "", "", ""
		out[i] = ev
	}
	return out
}

// TestRemoteChatStreamsTheLocalEvents: a turn a Remote runs streams to the
// page the events a turn of this process streams (same script, same
// events), its finish with the session's totals; nothing is left running.
func TestRemoteChatStreamsTheLocalEvents(t *testing.T) {
	script := func() *llmtest.Model {
		return llmtest.New(
			llmtest.Reply(llm.Thinking{Text: "The user wants the weather."}, llm.Text{Text: "Let me look."},
				llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)).WithUsage(llm.Usage{InputTokens: 100, OutputTokens: 20}),
			llmtest.Text("It is sunny in Paris.").WithUsage(llm.Usage{InputTokens: 150, OutputTokens: 10}),
		).WithInfo(llm.ModelInfo{Provider: "llmtest", Name: "scripted", Price: &llm.Price{Input: 1, Output: 2}})
	}
	local := newFixture(t, script(), weather())
	want := collect(t, events(t, local.do(t, context.Background(), "POST", "/api/chat", "alice", map[string]string{"agent": "helper", "message": "Weather in Paris?"})))

	rm := newFakeRemote(t)
	f := newFixtureOpts(t, web.Options{Remote: rm}, script(), weather())
	rm.bind(t, f, weather())
	got := collect(t, events(t, f.do(t, context.Background(), "POST", "/api/chat", "alice", map[string]string{"agent": "helper", "message": "Weather in Paris?"})))
	a, b := strip(want), strip(got)
	if len(a) != len(b) {
		t.Fatalf("remote events %q\nlocal events  %q", kinds(got), kinds(want))
	}
	for i := range a {
		x, _ := json.Marshal(a[i])
		y, _ := json.Marshal(b[i])
		if string(x) != string(y) {
			t.Fatalf("event %d: remote %s\nlocal %s", i, y, x)
		}
	}
	if fin := got[len(got)-1]; fin.Type != "finish" || fin.SessionTurns != 1 || fin.Session != got[0].Session {
		t.Fatalf("finish %+v", fin)
	}
	if len(rm.started) != 1 || rm.started[0].Log.Owner != "alice" || rm.started[0].Log.Session != got[0].Session {
		t.Fatalf("started %+v", rm.started)
	}
	// The page's model is the remote one's: the fixture's own agent never ran.
	var listed struct{ Runs []any }
	resp := f.do(t, context.Background(), "GET", "/api/runs?agent=helper", "alice", nil)
	if err := json.NewDecoder(resp.Body).Decode(&listed); err != nil || len(listed.Runs) != 0 {
		t.Fatalf("running after the end: %+v %v", listed, err)
	}
	resp.Body.Close()
}

// TestRemoteChatApprovalsAndStop: a remote turn's call waiting for
// approval is shown by the approval event, listed by GET /api/approvals
// and decided by POST /api/approvals/{id} for its principal only (another
// is told 404); GET /api/runs lists the turn and a page that reattaches
// follows it to its end. A second turn is stopped through POST
// /api/sessions/{id}/cancel: the Remote is asked, the turn ends with the
// error of a stopped turn, its open call answered, nothing stored.
func TestRemoteChatApprovalsAndStop(t *testing.T) {
	var ran bool
	rm := newFakeRemote(t)
	model := llmtest.New(
		llmtest.Reply(llmtest.Call("call_1", "delete_file", `{"path":"x"}`)),
		llmtest.Text("Deleted."),
	)
	f := newFixtureOpts(t, web.Options{Remote: rm}, model, deleteFile(&ran))
	rm.bind(t, f, deleteFile(&ran))
	ctx, leave := context.WithCancel(context.Background())
	ch := events(t, f.do(t, ctx, "POST", "/api/chat", "alice", map[string]string{"message": "delete x"}))
	sess := until(t, ch, "session")
	ap := until(t, ch, "approval")
	if ap.ID != sess.Run+"/call_1" || ap.ToolCallID != "call_1" || ap.Name != "delete_file" || string(ap.Input) != `{"path":"x"}` {
		t.Fatalf("approval %+v (run %s)", ap, sess.Run)
	}
	leave() // the page goes away; the turn waits on

	var list struct {
		Approvals []struct {
			ID, Tool, Session string
			CallID            string `json:"tool_call_id"`
		}
	}
	resp := f.do(t, context.Background(), "GET", "/api/approvals", "alice", nil)
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Approvals) != 1 || list.Approvals[0].ID != ap.ID ||
		list.Approvals[0].Session != sess.Session || list.Approvals[0].CallID != "call_1" {
		t.Fatalf("alice's approvals %+v %v", list, err)
	}
	resp.Body.Close()
	if v := decode(t, f.do(t, context.Background(), "GET", "/api/approvals", "bob", nil), 200); len(v["approvals"].([]any)) != 0 {
		t.Fatalf("bob sees %v", v)
	}
	var runs struct {
		Runs []struct{ Session, Run string }
	}
	resp = f.do(t, context.Background(), "GET", "/api/runs?agent=helper", "alice", nil)
	if err := json.NewDecoder(resp.Body).Decode(&runs); err != nil || len(runs.Runs) != 1 || runs.Runs[0].Session != sess.Session || runs.Runs[0].Run != sess.Run {
		t.Fatalf("runs %+v %v", runs, err)
	}
	resp.Body.Close()
	decode(t, f.do(t, context.Background(), "POST", "/api/approvals/"+ap.ID, "bob", map[string]any{"approved": true}), 404)
	again := events(t, f.do(t, context.Background(), "GET", "/api/sessions/"+sess.Session+"/run?agent=helper", "alice", nil))
	decode(t, f.do(t, context.Background(), "POST", "/api/approvals/"+ap.ID, "alice", map[string]any{"approved": true}), 200)
	evs := collect(t, again)
	if got := kinds(evs); got != "user session tool_call usage approval tool_result text usage finish" || !ran {
		t.Fatalf("the reattached stream: %q (ran %v)", got, ran)
	}
	decode(t, f.do(t, context.Background(), "POST", "/api/approvals/"+ap.ID, "alice", map[string]any{"approved": true}), 404)

	// A second turn, stopped while its call waits.
	ran = false
	model.Add(llmtest.Reply(llmtest.Call("call_2", "delete_file", `{"path":"y"}`)))
	ch = events(t, f.do(t, context.Background(), "POST", "/api/chat", "alice", map[string]string{"session": sess.Session, "message": "delete y"}))
	until(t, ch, "approval")
	decode(t, f.do(t, context.Background(), "POST", "/api/sessions/"+sess.Session+"/cancel?agent=helper", "bob", map[string]any{}), 404)
	decode(t, f.do(t, context.Background(), "POST", "/api/sessions/"+sess.Session+"/cancel?agent=helper", "alice", map[string]any{}), 200)
	var rest []event
	for ev := range ch {
		rest = append(rest, ev)
	}
	if got := kinds(rest); got != "tool_result error" || !rest[0].IsError || rest[0].ToolCallID != "call_2" || !strings.Contains(rest[1].Message, "stopped") || ran {
		t.Fatalf("the stopped turn ended with %+v (ran %v)", rest, ran)
	}
	s := decode(t, f.do(t, context.Background(), "GET", "/api/sessions/"+sess.Session+"?agent=helper", "alice", nil), 200)
	if s["turns"].(float64) != 1 {
		t.Fatalf("the stopped turn was stored: %v", s)
	}
}

// TestChatEventsEnd: how ChatEvents ends a turn: a failure answers its
// open calls then says why; a spending limit that stopped a stored turn
// comes after its finish; the bound keeps the final events.
func TestChatEventsEnd(t *testing.T) {
	l := web.ChatLog{Key: "alice/s1", Session: "s1", Run: "r1", Seq: 2, MaxBytes: 400}
	call := agent.Update{Kind: agent.UpdateToolCall, ToolCall: llm.ToolUse{ID: "c1", Name: "t", Input: json.RawMessage(`{}`)}}

	e := web.NewChatEvents(l)
	e.Update(call)
	evs, failed := e.End(nil, errors.New("the model failed"), false)
	if failed == nil || len(evs) != 3 || evs[0].Type != "tool_call" || evs[0].Seq != 2 || evs[1].Type != "tool_result" || evs[2].Type != "error" ||
		!strings.Contains(string(evs[2].Data), "the model failed") || evs[2].Seq != 4 {
		t.Fatalf("a failed turn: %v %+v", failed, evs)
	}

	e = web.NewChatEvents(l)
	resp := &agent.Response{SessionID: "s1", Model: "m", Usage: llm.Usage{InputTokens: 3}}
	e.Update(agent.Update{Kind: agent.UpdateFinish, Response: resp})
	evs, failed = e.End(resp, fmt.Errorf("stopped: %w", llm.ErrBudgetExceeded), false)
	if failed == nil || len(evs) != 2 || evs[0].Type != "finish" || evs[1].Type != "error" {
		t.Fatalf("a turn a limit stopped: %+v", evs)
	}

	// An error before the finish fails the turn, whatever response the
	// run had.
	e = web.NewChatEvents(l)
	evs, _ = e.End(resp, errors.New("the guardrail tripped"), false)
	if len(evs) != 1 || evs[0].Type != "error" {
		t.Fatalf("an error before the finish: %+v", evs)
	}

	// Past MaxBytes only the final events are kept.
	e = web.NewChatEvents(l)
	for range 20 {
		e.Update(agent.Update{Kind: agent.UpdateText, Text: strings.Repeat("x", 50)})
	}
	kept := len(e.Take())
	evs, _ = e.End(resp, nil, false)
	if kept == 0 || kept >= 20 || len(evs) != 1 || evs[0].Type != "finish" || evs[0].Seq != int64(2+kept) {
		t.Fatalf("kept %d deltas, then %+v", kept, evs)
	}
}

// TestFinishChat: FinishChat ends the log and deletes the run record it
// names, written twice changes nothing, and leaves a later turn's record
// alone.
func TestFinishChat(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	l := web.ChatLog{Key: "alice/s1", Owner: "alice", Session: "s1", Run: "r1", Seq: 2}
	put := func(run string) {
		v, _ := json.Marshal(map[string]any{"run": run, "agent": "helper", "remote": true})
		if _, err := store.PutRecord(ctx, "agcore.web.runs", session.Record{Key: l.Key, Value: v, Expires: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	put("r1")
	e := web.NewChatEvents(l)
	e.Update(agent.Update{Kind: agent.UpdateText, Text: "hi"})
	evs, _ := e.End(&agent.Response{SessionID: "s1", Model: "m"}, nil, false)
	evs = append(e.Take(), evs...)
	for range 2 {
		if err := web.FinishChat(ctx, store, l, evs); err != nil {
			t.Fatal(err)
		}
	}
	got, final, err := (&runlog.Log{Records: store}).Read(ctx, l.EventLog(), -1)
	if err != nil || !final || len(got) != 2 || got[1].Type != "finish" {
		t.Fatalf("the log: %+v %v %v", got, final, err)
	}
	if _, err := store.GetRecord(ctx, "agcore.web.runs", l.Key); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("the run record: %v", err)
	}
	put("r2") // the session's next turn
	if err := web.FinishChat(ctx, store, l, evs); err != nil {
		t.Fatal(err)
	}
	if _, err := store.GetRecord(ctx, "agcore.web.runs", l.Key); err != nil {
		t.Fatalf("the next turn's record: %v", err)
	}
}

// TestRemoteChatHeartbeat: the stream of a remote turn that waits for an
// approval (read from the event log) sends SSE comments too.
func TestRemoteChatHeartbeat(t *testing.T) {
	var ran bool
	rm := newFakeRemote(t)
	model := llmtest.New(llmtest.Reply(llmtest.Call("call_1", "delete_file", `{"path":"x"}`)))
	f := newFixtureOpts(t, web.Options{Remote: rm, Heartbeat: 5 * time.Millisecond}, model, deleteFile(&ran))
	rm.bind(t, f, deleteFile(&ran))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := f.do(t, ctx, "POST", "/api/chat", "alice", map[string]string{"message": "delete x"})
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var sawApproval bool
	sid := ""
	for sc.Scan() {
		line := sc.Text()
		if s, ok := strings.CutPrefix(line, "data: "); ok && sid == "" {
			var ev struct{ Session string }
			_ = json.Unmarshal([]byte(s), &ev)
			sid = ev.Session
		}
		if strings.HasPrefix(line, "event: approval") {
			sawApproval = true
		}
		if sawApproval && line == ": ping" {
			f.do(t, context.Background(), "POST", "/api/sessions/"+sid+"/cancel", "alice", map[string]any{}).Body.Close()
			select {
			case <-rm.finished:
			case <-time.After(10 * time.Second):
				t.Fatal("the stopped turn did not end")
			}
			return
		}
	}
	t.Fatalf("no heartbeat after the approval event (%v)", sc.Err())
}
