package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

// watchedRun is what a fake runner says of a remote chat turn.
type watchedRun int

const (
	runRunning  watchedRun = iota // its workflow runs
	runEnded                      // its workflow ended without its end
	runNotFound                   // the runner has no workflow for it
	runFinished                   // its worker writes its end as it is asked, then it ended
)

// watcher is a web.Remote and web.RemoteWatcher whose turns are the
// test's, each answered as runs says.
type watcher struct {
	store *memstore.Store
	mu    sync.Mutex
	runs  map[string]watchedRun // by turn id
	asked map[string]int
}

func (w *watcher) StartChat(context.Context, web.RemoteChat) error {
	return errors.New("not in this test")
}
func (w *watcher) CancelChat(context.Context, string) error { return nil }

func (w *watcher) ChatEnded(ctx context.Context, id string) (bool, string, error) {
	w.mu.Lock()
	st := w.runs[id]
	w.asked[id]++
	w.mu.Unlock()
	switch st {
	case runEnded:
		return true, "the test's workflow ended without its end (workflow status Terminated)", nil
	case runNotFound:
		return false, "", fmt.Errorf("no workflow: %w", web.ErrChatNotFound)
	case runFinished:
		key, run, _ := strings.Cut(id, "/r")
		l := web.ChatLog{Key: key, Owner: "alice", Session: strings.TrimPrefix(key, "alice/"), Run: "r" + run, Seq: 4}
		e := web.NewChatEvents(l)
		resp := &agent.Response{SessionID: l.Session, Model: "m"}
		e.Update(agent.Update{Kind: agent.UpdateFinish, Response: resp})
		evs, _ := e.End(resp, nil, false)
		if err := web.FinishChat(ctx, w.store, l, evs); err != nil {
			return false, "", err
		}
		return true, "ended after its end", nil
	}
	return false, "", nil
}

func (w *watcher) timesAsked(id string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.asked[id]
}

// TestRemoteChatWhoseRunEndedEndsFailed: a remote chat turn whose run
// ended without its end, or that the runner has no run for once its
// record is older than the hand-over may take, is no longer listed (GET
// /api/runs) and its follower (GET /api/sessions/{id}/run) ends with its
// open tool call answered and the error event; one that runs, or that
// the runner has no run for while young, stays listed; an end the worker
// wrote first is kept.
func TestRemoteChatWhoseRunEndedEndsFailed(t *testing.T) {
	w := &watcher{runs: map[string]watchedRun{}, asked: map[string]int{}}
	f := newFixtureOpts(t, web.Options{Remote: w}, llmtest.New())
	w.store = f.store
	ctx := context.Background()
	log := &runlog.Log{Records: f.store}

	cases := []struct {
		name   string
		run    watchedRun
		age    time.Duration
		follow bool   // followed (else listed)
		over   bool   // ends
		last   string // the type of the log's last event, when it ends
		reason string // the error event's message holds it
	}{
		{name: "ended listed", run: runEnded, age: 10 * time.Second, over: true, last: "error", reason: "Terminated"},
		{name: "ended followed", run: runEnded, age: time.Second, follow: true, over: true, last: "error", reason: "Terminated"},
		{name: "running", run: runRunning, age: 10 * time.Minute},
		{name: "not found young", run: runNotFound, age: 10 * time.Second},
		{name: "not found old listed", run: runNotFound, age: 3 * time.Minute, over: true, last: "error", reason: "no workflow"},
		{name: "not found old followed", run: runNotFound, age: 3 * time.Minute, follow: true, over: true, last: "error", reason: "no workflow"},
		{name: "end written first", run: runFinished, age: 10 * time.Second, over: true, last: "finish"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sid, run := fmt.Sprintf("s%d", i), fmt.Sprintf("r%d", i)
			key := "alice/" + sid
			l := web.ChatLog{Key: key, Owner: "alice", Session: sid, Run: run}
			w.mu.Lock()
			w.runs[l.ID()] = c.run
			w.mu.Unlock()
			// As the accepting process leaves a turn: its run record, its
			// first events; then the worker's: a tool call not answered.
			v, _ := json.Marshal(map[string]any{"run": run, "agent": "helper", "started": time.Now().Add(-c.age).UnixMilli(), "remote": true})
			if _, err := f.store.PutRecord(ctx, "agcore.web.runs", session.Record{Key: key, Value: v, Expires: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			e := web.NewChatEvents(l)
			e.Update(agent.Update{Kind: agent.UpdateText, Text: "hi"})
			e.Update(agent.Update{Kind: agent.UpdateToolCall, ToolCall: llm.ToolUse{ID: "c1", Name: "t", Input: json.RawMessage(`{}`)}})
			e.Update(agent.Update{Kind: agent.UpdateToolCall, ToolCall: llm.ToolUse{ID: "c2", Name: "t", Input: json.RawMessage(`{}`)}})
			result := llm.ToolResultText("c2", "done", false)
			e.Update(agent.Update{Kind: agent.UpdateToolResult, ToolResult: &result})
			if err := log.AppendBatch(ctx, l.EventLog(), e.Take(), false); err != nil {
				t.Fatal(err)
			}

			var got []event
			if c.follow {
				fctx, cancel := context.WithCancel(ctx)
				defer cancel()
				got = collect(t, events(t, f.do(t, fctx, "GET", "/api/sessions/"+sid+"/run?agent=helper", "alice", nil)))
			} else {
				testwait.For(t, "the runner to be asked", func() bool {
					listed := decode(t, f.do(t, ctx, "GET", "/api/runs?agent=helper", "alice", nil), http.StatusOK)
					runs, _ := listed["runs"].([]any)
					found := false
					for _, r := range runs {
						if m, _ := r.(map[string]any); m["run"] == run {
							found = true
						}
					}
					if found == c.over && w.timesAsked(l.ID()) > 0 {
						t.Fatalf("listed %v after the runner was asked", found)
					}
					return w.timesAsked(l.ID()) > 0
				})
			}
			stored, final, err := log.Read(ctx, l.EventLog(), -1)
			if err != nil {
				t.Fatal(err)
			}
			_, recErr := f.store.GetRecord(ctx, "agcore.web.runs", key)
			if !c.over {
				if final || recErr != nil {
					t.Fatalf("a turn that goes on was ended: final %v, its record %v", final, recErr)
				}
				return
			}
			if !final || !errors.Is(recErr, session.ErrNotFound) {
				t.Fatalf("the turn did not end: final %v, its record %v", final, recErr)
			}
			lastEv := stored[len(stored)-1]
			if lastEv.Type != c.last || !strings.Contains(string(lastEv.Data), c.reason) {
				t.Fatalf("the log ends with %s %s", lastEv.Type, lastEv.Data)
			}
			if c.last == "error" {
				// The open call answered, the answered one not again.
				prev := stored[len(stored)-2]
				if prev.Type != "tool_result" || !strings.Contains(string(prev.Data), `"c1"`) || !strings.Contains(string(prev.Data), `"is_error":true`) ||
					stored[len(stored)-3].Type != "tool_result" || !strings.Contains(string(stored[len(stored)-3].Data), `"c2"`) {
					t.Fatalf("the open tool call was not answered: %+v", stored)
				}
			}
			if c.follow && (len(got) == 0 || got[len(got)-1].Type != c.last || got[len(got)-1].Message == "") {
				t.Fatalf("the follower's events: %+v", got)
			}
		})
	}
}
