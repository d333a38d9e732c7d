package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// researchPair is a parent that calls the researcher sub-agent once
// (call id "call_7") and then answers, with usage on every call.
func researchPair(t *testing.T, childSteps ...llmtest.Step) (parent, child *agent.Agent, pm, cm *llmtest.Model) {
	t.Helper()
	cm = llmtest.New(childSteps...)
	child, err := agent.New(cm, agent.Config{Name: "researcher", Description: "Finds facts.", Instructions: "Research."})
	if err != nil {
		t.Fatal(err)
	}
	pm = llmtest.New(
		llmtest.Reply(llmtest.Call("call_7", "researcher", `{"input":"when was Go released?"}`)).WithUsage(llm.Usage{InputTokens: 10, OutputTokens: 1}),
		llmtest.Text("Go was released in 2009.").WithUsage(llm.Usage{InputTokens: 20, OutputTokens: 2}),
	)
	parent, err = agent.New(pm, agent.Config{Name: "writer", Tools: []tool.Tool{agent.AsTool(child, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	return parent, child, pm, cm
}

// TestSubAgentSessionLinked: the sub-agent's transcript is a session of
// its own, named after the caller's session and the call, whose state
// names the caller; its answer is the tool's result.
func TestSubAgentSessionLinked(t *testing.T) {
	parent, _, pm, cm := researchPair(t, llmtest.Text("2009"))
	store := memstore.New()
	resp, err := parent.Run(t.Context(), []llm.Message{llm.UserText("tell me about Go")}, &agent.RunOptions{SessionID: "s1", Store: store})
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.PersistErr(); err != nil {
		t.Fatal(err)
	}
	if got := pm.Requests()[1].Messages; got[len(got)-1].Text() != "2009" {
		t.Errorf("tool result %q, want the sub-agent's answer", got[len(got)-1].Text())
	}
	if req := cm.Requests()[0]; req.Messages[0].Text() != "Research." || req.Messages[1].Text() != "when was Go released?" {
		t.Errorf("sub-agent's request %+v", req.Messages)
	}
	id := agent.ChildSessionID("s1", "call_7")
	if id != "s1.call_7" {
		t.Fatalf("child session id %q", id)
	}
	child, err := store.Load(t.Context(), id)
	if err != nil {
		t.Fatalf("child session: %v", err)
	}
	if len(child.Messages) != 2 || child.Messages[1].Text() != "2009" {
		t.Errorf("child transcript %+v", child.Messages)
	}
	p, ok, err := session.GetState[session.Parent](child, session.ParentKey)
	if !ok || err != nil || p != (session.Parent{Session: "s1", RunID: resp.RunID, ToolCallID: "call_7", Agent: "writer"}) {
		t.Errorf("parent link %+v (%v, %v); run %s", p, ok, err, resp.RunID)
	}
}

// TestSubAgentUpdatesMarked: the sub-agent's updates reach the caller's
// stream inside UpdateSubAgent updates naming it and the call; none is
// mistaken for the caller's own text.
func TestSubAgentUpdatesMarked(t *testing.T) {
	parent, _, _, _ := researchPair(t, llmtest.Text("2009"))
	var own, sub []string
	var subFinish bool
	for u, err := range parent.RunStream(t.Context(), []llm.Message{llm.UserText("q")}, nil).Updates() {
		if err != nil {
			t.Fatal(err)
		}
		switch u.Kind {
		case agent.UpdateText:
			if len(own) == 0 {
				own = append(own, u.Agent+":")
			}
			own[0] += u.Text
		case agent.UpdateSubAgent:
			if u.Agent != "writer" || u.ToolCall.ID != "call_7" || u.ToolCall.Name != "researcher" || u.Sub.Agent != "researcher" {
				t.Errorf("sub-agent update %+v / %+v", u, *u.Sub)
			}
			switch u.Sub.Kind {
			case agent.UpdateText:
				if len(sub) == 0 {
					sub = append(sub, "")
				}
				sub[0] += u.Sub.Text
			case agent.UpdateFinish:
				subFinish = true
			}
		}
	}
	if len(own) != 1 || own[0] != "writer:Go was released in 2009." {
		t.Errorf("own text %q", own)
	}
	if len(sub) != 1 || sub[0] != "2009" || !subFinish {
		t.Errorf("sub-agent text %q, finish %v", sub, subFinish)
	}
}

// TestSubAgentUsageRollUp: the sub-agent's usage and cost add up into the
// caller's response and stored turn.
func TestSubAgentUsageRollUp(t *testing.T) {
	price := &llm.Price{Input: 1_000_000, Output: 1_000_000} // $1 a token
	cm := llmtest.New(llmtest.Text("2009").WithUsage(llm.Usage{InputTokens: 5, OutputTokens: 3})).WithInfo(llm.ModelInfo{Name: "child", Price: price})
	child, _ := agent.New(cm, agent.Config{Name: "researcher"})
	pm := llmtest.New(
		llmtest.Reply(llmtest.Call("call_7", "researcher", `{"input":"x"}`)).WithUsage(llm.Usage{InputTokens: 10, OutputTokens: 1}),
		llmtest.Text("done").WithUsage(llm.Usage{InputTokens: 20, OutputTokens: 2}),
	).WithInfo(llm.ModelInfo{Name: "parent", Price: price})
	store := memstore.New()
	parent, _ := agent.New(pm, agent.Config{Name: "writer", Store: store, Tools: []tool.Tool{agent.AsTool(child, nil)}})
	resp, err := parent.Run(t.Context(), []llm.Message{llm.UserText("q")}, &agent.RunOptions{SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.InputTokens != 35 || resp.Usage.OutputTokens != 6 {
		t.Errorf("usage %+v, want 35 in and 6 out (the sub-agent's 5 and 3 included)", resp.Usage)
	}
	if !resp.CostKnown || resp.CostUSD < 40.99 || resp.CostUSD > 41.01 {
		t.Errorf("cost %v (known %v), want $41", resp.CostUSD, resp.CostKnown)
	}
	_ = resp.PersistErr()
	sess, _ := store.Load(t.Context(), "s")
	if sess.Usage.InputTokens != 35 {
		t.Errorf("stored usage %+v", sess.Usage)
	}
}

// TestSubAgentCancelled: cancelling the caller's run cancels the
// sub-agent's. The caller is cancelled from inside the sub-agent's model
// call, and Go cancels a derived context before cancel returns, so the
// call sees its context done at once or never: a broken rule fails fast
// instead of waiting on a timer.
func TestSubAgentCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var seen error
	parent, _, _, _ := researchPair(t, llmtest.Func(func(sub context.Context, _ *llm.Request) (*llm.Response, error) {
		cancel()
		seen = sub.Err()
		if seen == nil {
			// Not retried (no backoff): the test fails at once.
			return nil, &llm.Error{Kind: llm.KindInvalidRequest, Message: "the sub-agent's call was not cancelled with the caller's run"}
		}
		return nil, seen
	}))
	ran := make(chan error, 1)
	go func() {
		_, err := parent.Run(ctx, []llm.Message{llm.UserText("q")}, nil)
		ran <- err
	}()
	// A run that does not end soon after its cancellation fails the test
	// now, not at the test binary's timeout.
	var err error
	select {
	case err = <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not end within 5 s of its cancellation")
	}
	if !errors.Is(seen, context.Canceled) {
		t.Errorf("the sub-agent's model call saw %v after the caller was cancelled, want context.Canceled", seen)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("run error %v, want cancelled", err)
	}
}

// guarded is a tool that needs approval.
type guarded struct{ namedTool }

func (guarded) NeedsApproval() bool { return true }

// TestSubAgentApproval: a tool needing approval inside a sub-agent without
// an approver of its own is decided by the caller's approver.
func TestSubAgentApproval(t *testing.T) {
	cm := llmtest.New(llmtest.Reply(llmtest.Call("d1", "delete", `{}`)), llmtest.Text("deleted"))
	child, _ := agent.New(cm, agent.Config{Name: "janitor", Tools: []tool.Tool{guarded{namedTool("delete")}}})
	pm := llmtest.New(llmtest.Reply(llmtest.Call("call_1", "janitor", `{"input":"clean"}`)), llmtest.Text("ok"))
	var mu sync.Mutex
	var asked []string
	approver := tool.ApproverFunc(func(_ context.Context, call tool.Call) (tool.Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, call.Name)
		return tool.Decision{Approved: true}, nil
	})
	parent, _ := agent.New(pm, agent.Config{Name: "boss", Approver: approver, Tools: []tool.Tool{agent.AsTool(child, nil)}})
	if _, err := parent.Run(t.Context(), []llm.Message{llm.UserText("q")}, nil); err != nil {
		t.Fatal(err)
	}
	if len(asked) != 1 || asked[0] != "delete" {
		t.Errorf("approver asked about %v", asked)
	}
	res := cm.Requests()[1].Messages
	if got := res[len(res)-1]; got.IsError || got.Text() != "delete done" {
		t.Errorf("the sub-agent's tool result %+v: not run", got)
	}
}

// TestSubAgentAbandoned: a caller that stops ranging during a sub-agent's
// updates abandons the whole run, sub-agent included, without panicking.
func TestSubAgentAbandoned(t *testing.T) {
	parent, _, _, _ := researchPair(t, llmtest.Text("2009"))
	stream := parent.RunStream(t.Context(), []llm.Message{llm.UserText("q")}, nil)
	for u, err := range stream.Updates() {
		if err != nil {
			t.Fatal(err)
		}
		if u.Kind == agent.UpdateSubAgent {
			break
		}
	}
	if _, err := stream.Wait(); !errors.Is(err, agent.ErrAbandoned) {
		t.Errorf("Wait: %v, want ErrAbandoned", err)
	}
}

func TestAsToolOptions(t *testing.T) {
	cm := llmtest.New(llmtest.Text("ok"))
	child, _ := agent.New(cm, agent.Config{Name: "c"})
	params := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)
	tl := agent.AsTool(child, &agent.ToolOptions{Name: "weather", Description: "Weather.", Parameters: params})
	if tl.Name() != "weather" || tl.Description() != "Weather." || string(tl.Parameters()) != string(params) {
		t.Fatalf("tool %s %q %s", tl.Name(), tl.Description(), tl.Parameters())
	}
	out, err := tl.Invoke(t.Context(), json.RawMessage(`{"city":"Lyon"}`))
	if err != nil || out != "ok" {
		t.Fatalf("Invoke: %q, %v", out, err)
	}
	if got := cm.Requests()[0].Messages[0].Text(); got != `{"city":"Lyon"}` {
		t.Errorf("input %q, want the arguments' JSON", got)
	}
}

// TestSubAgentDepthBounded: sub-agents nest MaxSubAgentDepth deep at
// most: in a chain of agents each calling the next, the call past the
// limit is an error result and the agent past it never runs.
func TestSubAgentDepthBounded(t *testing.T) {
	n := agent.MaxSubAgentDepth + 2 // a0 (top level) … a9
	var mu sync.Mutex
	ran := map[int]bool{}
	var next tool.Tool
	var errText string
	for i := n - 1; i >= 0; i-- {
		step := func(_ context.Context, req *llm.Request) (*llm.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			ran[i] = true
			last := req.Messages[len(req.Messages)-1]
			if last.Role == llm.RoleTool {
				if last.IsError {
					errText = last.Text()
				}
				return &llm.Response{Message: llm.AssistantText("done")}, nil
			}
			if len(req.Tools) == 0 {
				return &llm.Response{Message: llm.AssistantText("bottom")}, nil
			}
			return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llmtest.Call("c", req.Tools[0].Name, `{"input":"deeper"}`)}}}, nil
		}
		cfg := agent.Config{Name: fmt.Sprintf("a%d", i)}
		if next != nil {
			cfg.Tools = []tool.Tool{next}
		}
		a, err := agent.New(llmtest.New(llmtest.Func(step), llmtest.Func(step)), cfg)
		if err != nil {
			t.Fatal(err)
		}
		next = agent.AsTool(a, nil)
	}
	if _, err := next.Invoke(t.Context(), json.RawMessage(`{"input":"go"}`)); err != nil {
		t.Fatal(err)
	}
	if !ran[n-2] || ran[n-1] || !strings.Contains(errText, "nest 8 deep at most") {
		t.Errorf("ran %v; the last error result %q", ran, errText)
	}
}
