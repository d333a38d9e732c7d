package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve"
)

// TestServeRunnerAnswersEachRequestByID: serve-runner answers every line
// with its id, an error as text, a line it cannot read too, and returns
// once its input ends and the requests in flight are answered.
func TestServeRunnerAnswersEachRequestByID(t *testing.T) {
	start, err := json.Marshal(runnerRequest{ID: 1, Op: "start", Turn: &serve.RemoteTurn{Agent: "agcore", TurnID: "s_1",
		Input: []llm.Message{llm.UserText("hi")}, Log: serve.ResponseLog{ResponseID: "resp_s_1", Run: "resp_s_1.x", Seq: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{
		string(start),
		`{"id":2,"op":"cancel","response":"resp_s_1"}`,
		`{"id":3,"op":"explode"}`,
		`not json`,
	}, "\n") + "\n"
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serveRunner(context.Background(), strings.NewReader(in), pw, func(_ context.Context, req runnerRequest) (runnerReply, error) {
			switch req.Op {
			case "start":
				if req.Turn == nil || req.Turn.Log.ResponseID != "resp_s_1" {
					return runnerReply{}, errors.New("no turn")
				}
				time.Sleep(20 * time.Millisecond) // answered after the cancel: by id, not in order
				return runnerReply{}, nil
			case "cancel":
				return runnerReply{}, nil
			}
			return runnerReply{ID: 99}, errors.New("unknown op " + req.Op)
		})
		pw.Close()
	}()
	got := map[int64]string{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		var r runnerReply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("reply %q: %v", sc.Text(), err)
		}
		got[r.ID] = r.Error
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || got[1] != "" || got[2] != "" || got[3] != "unknown op explode" || !strings.HasPrefix(got[0], "bad request") {
		t.Fatalf("replies %v", got)
	}
}

// TestServeRunnerTurnInput: a start request becomes the workflow's input:
// the agents, the run's instructions and limits, the response's log, the
// timeout, and the quota (its principal apart when the store's owner is
// not it, as for the local principal).
func TestServeRunnerTurnInput(t *testing.T) {
	temp := 0.5
	q := &serve.RemoteQuota{Principal: "local", Total: budget.Limits{Tokens: 1000}}
	req := runnerRequest{Op: "start", Agents: []agent.Spec{{Name: "agcore"}, {Name: "coder"}}, ApproveAll: true,
		Turn: &serve.RemoteTurn{Agent: "coder", Owner: "", SessionID: "s", TurnID: "s_1", Input: []llm.Message{llm.UserText("hi")},
			Instructions: "Be brief.", Temperature: &temp, MaxTokens: 99, Timeout: time.Minute, Quota: q,
			Log: serve.ResponseLog{ResponseID: "resp_s_1", Run: "resp_s_1.x", Seq: 2}}}
	in := turnInput(req)
	switch {
	case len(in.Agents) != 2 || in.Agent != "coder" || in.SessionID != "s" || in.TurnID != "s_1" || len(in.Messages) != 1:
		t.Fatalf("the turn: %+v", in)
	case in.RunInstructions != "Be brief." || in.Temperature != &temp || in.MaxTokens != 99 || !in.ApproveAll || in.Timeout != time.Minute:
		t.Fatalf("the run's settings: %+v", in)
	case in.Response == nil || in.Response.ResponseID != "resp_s_1" || in.Response.Seq != 2:
		t.Fatalf("the response: %+v", in.Response)
	case in.Quota == nil || in.Quota.Total.Tokens != 1000 || in.Principal != "" || in.QuotaPrincipal != "local":
		t.Fatalf("the quota: %+v, principal %q, quota principal %q", in.Quota, in.Principal, in.QuotaPrincipal)
	}
	req.Turn.Owner, q.Principal = "alice", "alice"
	if in := turnInput(req); in.Principal != "alice" || in.QuotaPrincipal != "" {
		t.Fatalf("alice's: principal %q, quota principal %q", in.Principal, in.QuotaPrincipal)
	}
}

// TestServeRunnerA2AInput: a start request of an A2A task becomes the
// workflow's input: the agents, the task's turn, its log.
func TestServeRunnerA2AInput(t *testing.T) {
	line := `{"id":1,"op":"start","agents":[{"Name":"agcore"}],"approve_all":true,"task":{"Agent":"agcore","Owner":"alice","SessionID":"s",` +
		`"Input":[{"type":"user","content":[{"type":"text","text":"hi"}]}],"TurnID":"t-1","Log":{"Agent":"agcore","TaskID":"t-1","Principal":"alice",` +
		`"Task":{"id":"t-1"},"TurnsBefore":2,"PushAllowHosts":["127.0.0.1"]}}}`
	var req runnerRequest
	if err := json.Unmarshal([]byte(line), &req); err != nil {
		t.Fatal(err)
	}
	in := a2aInput(req)
	switch {
	case len(in.Agents) != 1 || in.Agent != "agcore" || in.Principal != "alice" || in.SessionID != "s" || in.TurnID != "t-1" || len(in.Messages) != 1 || !in.ApproveAll:
		t.Fatalf("the turn: %+v", in)
	case in.A2A == nil || in.A2A.TaskID != "t-1" || in.A2A.TurnsBefore != 2 || in.A2A.PushAllowHosts[0] != "127.0.0.1" || in.Response != nil || in.AGUI != nil:
		t.Fatalf("the task's log: %+v", in.A2A)
	}
}
