package agtemporal_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestWebChatWorkflow: a TurnWorkflow with TurnInput.Web writes the
// turn's events as the web page reads them to the event log, numbered
// after the accepting process's first ones, and ends the turn: finish
// after a tool call and the answer; the page's approval event ("RUN/CALL"
// id) for a call that waits for approval; when the workflow is cancelled
// (the page's Stop), the waiting call answered and the error of a stopped
// turn. Every end deletes the turn's run record.
func TestWebChatWorkflow(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []llmtest.Step
		cancel  bool
		approve bool   // w1 approved a minute in
		types   string // the events' types, in order
		final   string // in the final event's data
	}{
		{name: "finished",
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("e1", "echo", `{"text":"one"}`)), llmtest.Text("echoed")},
			types: "tool_call usage tool_result text usage finish", final: `"finish_reason":"stop"`},
		{name: "approved", approve: true,
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`)), llmtest.Text("written")},
			types: "tool_call usage approval tool_result text usage finish", final: `"finish_reason":"stop"`},
		{name: "cancelled", cancel: true,
			steps: []llmtest.Step{llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`))},
			types: "tool_call usage approval tool_result error", final: `"message":"stopped; the turn was not stored"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.steps...)
			ctx := context.Background()
			l := web.ChatLog{Key: "local/s1", Session: "s1", Run: "r1", Seq: 2}
			if _, err := h.store.PutRecord(ctx, "agcore.web.runs", session.Record{Key: l.Key, Value: []byte(`{"run":"r1","agent":"agcore","remote":true}`), Expires: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if tc.cancel {
				h.env.RegisterDelayedCallback(h.env.CancelWorkflow, time.Minute)
			}
			if tc.approve {
				h.env.RegisterDelayedCallback(func() { decide(t, h, agtemporal.Decision{CallID: "w1", Approve: true}) }, time.Minute)
			}
			in := input("go")
			in.Web = &l
			h.env.ExecuteWorkflow(agtemporal.TurnWorkflowName, in)
			if !h.env.IsWorkflowCompleted() {
				t.Fatal("the workflow did not complete")
			}
			if err := h.env.GetWorkflowError(); (err == nil) == tc.cancel {
				t.Fatalf("the workflow's error: %v", err)
			}
			evs, final, err := (&runlog.Log{Records: h.store}).Read(ctx, l.EventLog(), -1)
			if err != nil || !final || len(evs) == 0 {
				t.Fatalf("the log: %v, final %v, %v", evs, final, err)
			}
			var types []string
			for i, ev := range evs {
				if ev.Seq != int64(i)+2 {
					t.Fatalf("event %d is numbered %d", i, ev.Seq)
				}
				types = append(types, ev.Type)
				if ev.Type == "approval" {
					var ap map[string]any
					_ = json.Unmarshal(ev.Data, &ap)
					if ap["id"] != "r1/w1" || ap["tool_call_id"] != "w1" || ap["name"] != "write" {
						t.Fatalf("the approval event %s", ev.Data)
					}
				}
			}
			if got := strings.Join(types, " "); got != tc.types || !strings.Contains(string(evs[len(evs)-1].Data), tc.final) {
				t.Fatalf("events %s, final %s", got, evs[len(evs)-1].Data)
			}
			if _, err := h.store.GetRecord(ctx, "agcore.web.runs", l.Key); err == nil {
				t.Fatal("the turn's run record is still there")
			}
		})
	}
}

// TestWebChatNeedsNothingElse: an input with Web and a Response, an AGUI
// run or a Schema is refused before it starts.
func TestWebChatNeedsNothingElse(t *testing.T) {
	l := &web.ChatLog{Key: "local/s1", Session: "s1", Run: "r1"}
	for name, in := range map[string]agtemporal.TurnInput{
		"response": {TurnID: "t", Messages: input("x").Messages, Web: l, Response: &serve.ResponseLog{ResponseID: "resp_x"}},
		"agui":     {TurnID: "t", Messages: input("x").Messages, Web: l, AGUI: &serve.AGUILog{Key: "local/r1"}},
		"schema":   {TurnID: "t", Messages: input("x").Messages, Web: l, Schema: []byte(`{"type":"object"}`)},
	} {
		if err := agtemporal.StartWeb(context.Background(), nil, "", in); err == nil || !strings.Contains(err.Error(), "web page") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
