package agtemporal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"

	agtemporal "github.com/agcore/agcore/temporal"
)

// notes is a context provider: it adds instructions and a message, and
// counts the runs in the session's state bag.
type notes struct{}

func (notes) Invoking(_ context.Context, inv *agent.Invocation) (agent.Injection, error) {
	n, _, _ := session.GetState[int](inv.Session, "runs")
	if err := session.SetState(inv.Session, "runs", n+1); err != nil {
		return agent.Injection{}, err
	}
	return agent.Injection{Instructions: "Answer in French.", Messages: []llm.Message{llm.UserText("(note: the user likes cheese)")}}, nil
}

func (notes) Invoked(context.Context, *agent.Invocation, *agent.Outcome) error { return nil }

func TestContextProvidersRunInPrepare(t *testing.T) {
	h := newHarnessWith(t, func(o *agtemporal.Options) { o.Providers = []agent.ContextProvider{notes{}} }, llmtest.Text("Bonjour"))
	in := input("hello")
	in.Instructions = "Be brief."
	if _, err := h.run(t, in); err != nil {
		t.Fatal(err)
	}
	req := h.model.Requests()[0]
	if sys := req.Messages[0]; sys.Role != llm.RoleSystem || sys.Text() != "Be brief.\n\nAnswer in French." {
		t.Fatalf("system message %q", sys.Text())
	}
	if got := req.Messages[1].Text(); got != "(note: the user likes cheese)" {
		t.Fatalf("provider message %q", got)
	}
	sess, err := h.store.Load(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if string(sess.State["runs"]) != "1" {
		t.Fatalf("state bag %s", sess.State["runs"])
	}
}

func TestSummarizationIsAnActivity(t *testing.T) {
	var summaries atomic.Int32
	answer := llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if strings.Contains(req.Messages[len(req.Messages)-1].Text(), "Conversation to summarize") || strings.Contains(req.Messages[0].Text(), "summar") {
			summaries.Add(1)
			return &llm.Response{Message: llm.AssistantText("SUMMARY: the user asked many questions."), FinishReason: llm.FinishStop}, nil
		}
		return &llm.Response{Message: llm.AssistantText("the answer"), FinishReason: llm.FinishStop}, nil
	})
	steps := make([]llmtest.Step, 2) // one summary, one answer
	for i := range steps {
		steps[i] = answer
	}
	h := newHarnessWith(t, nil)
	h.model.Add(steps...)
	// A long stored history, well over the budget.
	for i := 0; i < 30; i++ {
		turn := session.Turn{ID: fmt.Sprintf("old-%d", i), Messages: []llm.Message{
			llm.UserText(fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 60))),
			llm.AssistantText(fmt.Sprintf("answer %d: %s", i, strings.Repeat("more words ", 60))),
		}}
		if err := h.store.Append(context.Background(), "s1", turn); err != nil {
			t.Fatal(err)
		}
	}
	var activities []string
	h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		activities = append(activities, info.ActivityType.Name)
	})
	in := input("and now?")
	in.Budget, in.Summarize = 3000, true
	res, err := h.run(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "the answer" {
		t.Fatalf("answer %q", res.Text)
	}
	if !strings.Contains(strings.Join(activities, ","), "agcore.Summarize") || summaries.Load() == 0 {
		t.Fatalf("activities %v, %d summaries", activities, summaries.Load())
	}
	reqs := h.model.Requests()
	last := reqs[len(reqs)-1]
	b, _ := json.Marshal(last.Messages)
	if len(last.Messages) >= 61 || !strings.Contains(string(b), "SUMMARY") {
		t.Fatalf("the request sent holds %d messages, summary included: %v", len(last.Messages), strings.Contains(string(b), "SUMMARY"))
	}
}
