package main

import (
	"encoding/json"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve"
)

// TestServeRunnerAGUITurnInput: a start request whose turn is an AG-UI
// run (RemoteTurn.AGUI), as agcore serve writes it on the wire, becomes a
// workflow input with AGUI and no Response; one without AGUI (an older
// agcore serve's) stays a background response.
func TestServeRunnerAGUITurnInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		agui *serve.AGUILog
	}{
		{"agui", &serve.AGUILog{Key: "local/r1", Run: "agui.r1", ThreadID: "th", RunID: "r1", Agent: "agcore", Seq: 3}},
		{"response", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turn := serve.RemoteTurn{Agent: "agcore", SessionID: "th", TurnID: "r1", Input: []llm.Message{llm.UserText("hi")}, AGUI: tc.agui}
			if tc.agui == nil {
				turn.Log = serve.ResponseLog{ResponseID: "resp_s_1", Run: "resp_s_1.x", Seq: 2}
			}
			line, err := json.Marshal(runnerRequest{ID: 1, Op: "start", Agents: []agent.Spec{{Name: "agcore"}}, Turn: &turn})
			if err != nil {
				t.Fatal(err)
			}
			var req runnerRequest
			if err := json.Unmarshal(line, &req); err != nil {
				t.Fatal(err)
			}
			in := turnInput(req)
			switch {
			case tc.agui != nil && (in.Response != nil || in.AGUI == nil || *in.AGUI != *tc.agui):
				t.Fatalf("an AG-UI run: response %+v, agui %+v", in.Response, in.AGUI)
			case tc.agui == nil && (in.AGUI != nil || in.Response == nil || in.Response.ResponseID != "resp_s_1"):
				t.Fatalf("a response: response %+v, agui %+v", in.Response, in.AGUI)
			}
		})
	}
}
