package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// firstRequest runs a once with msgs and opts and returns the request the
// model received.
func firstRequest(t *testing.T, cfg agent.Config, msgs []llm.Message, opts *agent.RunOptions) *llm.Request {
	t.Helper()
	m := llmtest.New(llmtest.Text("ok")).Verify(t)
	a := newAgent(t, m, cfg)
	if _, err := a.Run(context.Background(), msgs, opts); err != nil {
		t.Fatal(err)
	}
	return m.Requests()[0]
}

func withSession(id string) *agent.RunOptions { return &agent.RunOptions{SessionID: id} }

func TestPreInvocationAssembly(t *testing.T) {
	t.Parallel()
	history := []llm.Message{llm.UserText("earlier"), llm.AssistantText("earlier answer")}
	tests := []struct {
		name      string
		agentInst string
		providers []agent.Injection
		caller    []llm.Message
		opts      agent.RunOptions
		want      []string
	}{
		{
			name:      "one system message: agent instructions then providers', blank-line separated",
			agentInst: "You are terse.",
			providers: []agent.Injection{{Instructions: "User likes cats."}, {Instructions: "Today is Monday."}},
			caller:    user("hi"),
			want:      []string{"system:You are terse.\n\nUser likes cats.\n\nToday is Monday.", "user:earlier", "assistant:earlier answer", "user:hi"},
		},
		{
			name:      "no instructions at all means no system message",
			providers: []agent.Injection{{}},
			caller:    user("hi"),
			want:      []string{"user:earlier", "assistant:earlier answer", "user:hi"},
		},
		{
			name:      "per-run instructions replace the agent's, providers' still follow",
			agentInst: "agent",
			providers: []agent.Injection{{Instructions: "provider"}},
			caller:    user("hi"),
			opts:      agent.RunOptions{Instructions: "run"},
			want:      []string{"system:run\n\nprovider", "user:earlier", "assistant:earlier answer", "user:hi"},
		},
		{
			name:      "history, then provider messages in provider order, then the caller's",
			agentInst: "sys",
			providers: []agent.Injection{{Messages: user("fact A")}, {Messages: user("fact B")}},
			caller:    user("question"),
			want:      []string{"system:sys", "user:earlier", "assistant:earlier answer", "user:fact A", "user:fact B", "user:question"},
		},
		{
			name:      "a replacing provider drops the messages gathered before it",
			providers: []agent.Injection{{Messages: user("stale")}, {Messages: user("fresh"), ReplaceMessages: true}, {Messages: user("extra")}},
			caller:    user("q"),
			want:      []string{"user:earlier", "assistant:earlier answer", "user:fresh", "user:extra", "user:q"},
		},
		{
			name:      "system-role messages from providers and callers are dropped",
			agentInst: "sys",
			providers: []agent.Injection{{Messages: []llm.Message{llm.SystemText("provider system"), llm.UserText("ctx")}}},
			caller:    []llm.Message{llm.SystemText("caller system"), llm.UserText("q")},
			want:      []string{"system:sys", "user:earlier", "assistant:earlier answer", "user:ctx", "user:q"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newStore()
			store.sessions["s"] = &session.Session{ID: "s", Messages: history}
			a := (agent.Config{Instructions: tt.agentInst, Store: store})
			for i, inj := range tt.providers {
				a.Providers = append(a.Providers, &provider{name: string(rune('A' + i)), inj: inj})
			}
			opts := tt.opts
			opts.SessionID = "s"
			req := firstRequest(t, a, tt.caller, &opts)
			if got := texts(req.Messages); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("request messages\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestASystemMessageInAnInMemorySessionIsNotASecondOne(t *testing.T) {
	t.Parallel()
	s := &session.Session{Messages: []llm.Message{llm.SystemText("stale"), llm.UserText("old"), llm.AssistantText("answer")}}
	req := firstRequest(t, agent.Config{Instructions: "sys"}, user("new"), &agent.RunOptions{Session: s})
	if got := texts(req.Messages); !reflect.DeepEqual(got, []string{"system:sys", "user:old", "assistant:answer", "user:new"}) {
		t.Errorf("request %q", got)
	}
}

func TestProvidersAreInvokedInOrderAroundTheModelCall(t *testing.T) {
	t.Parallel()
	log := &callLog{}
	c := &provider{name: "C", log: log}
	a := agent.Config{Providers: []agent.ContextProvider{&provider{name: "A", log: log}, &provider{name: "B", log: log}, c}}
	req := firstRequest(t, a, user("hi"), withSession("s"))
	want := []string{"A.Invoking", "B.Invoking", "C.Invoking", "A.Invoked", "B.Invoked", "C.Invoked"}
	if got := log.get(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	out := c.lastOutcome(t)
	if out.Err != nil || out.Response == nil || out.Response.Text() != "ok" || out.Request == nil || !reflect.DeepEqual(texts(out.Request.Messages), texts(req.Messages)) {
		t.Errorf("Invoked got %+v, want the request sent and the response", out)
	}
}

func TestProvidersRunOnlyForRunsWithASession(t *testing.T) {
	t.Parallel()
	log := &callLog{}
	a := agent.Config{Instructions: "sys", Providers: []agent.ContextProvider{&provider{name: "A", log: log, inj: agent.Injection{Instructions: "from A"}}}}
	req := firstRequest(t, a, user("hi"), nil)
	if got := log.get(); len(got) != 0 {
		t.Errorf("providers called without a session: %v", got)
	}
	if req.Messages[0].Text() != "sys" {
		t.Errorf("system = %q", req.Messages[0].Text())
	}
}

func TestAFailingProviderIsSkippedLoggedAndReported(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	sink := &errSink{}
	boom := errors.New("memory backend down")
	a := agent.Config{
		Name:    "helper",
		Logger:  logs.logger(),
		OnError: sink.hook,
		Providers: []agent.ContextProvider{
			&provider{name: "broken", err: boom, inj: agent.Injection{Instructions: "must not appear", Messages: user("must not appear")}},
			&provider{name: "ok", inj: agent.Injection{Instructions: "from ok"}},
		},
	}
	req := firstRequest(t, a, user("hi"), withSession("s"))

	if got := texts(req.Messages); !reflect.DeepEqual(got, []string{"system:from ok", "user:hi"}) {
		t.Errorf("request = %q: the failing provider's injection must be skipped, the next provider kept", got)
	}
	errs := sink.get()
	var pe *agent.ProviderError
	if len(errs) != 1 || !errors.As(errs[0], &pe) || !errors.Is(errs[0], boom) || pe.Provider != "broken" || pe.Phase != "invoking" {
		t.Errorf("OnError got %v, want one ProviderError wrapping the provider's error", errs)
	}
	if !strings.Contains(logs.String(), "memory backend down") || !strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("log = %q, want a warning with the error", logs.String())
	}
}

func TestAFailingInvokedIsReportedAndChangesNothing(t *testing.T) {
	t.Parallel()
	sink := &errSink{}
	store := newStore()
	cfg := agent.Config{Store: store, OnError: sink.hook, Logger: (&logBuffer{}).logger(),
		Providers: []agent.ContextProvider{&provider{name: "p", invokedErr: errors.New("late failure")}}}
	resp := func() *agent.Response {
		a := newAgent(t, llmtest.New(llmtest.Text("ok")).Verify(t), cfg)
		r, err := a.Run(context.Background(), user("hi"), withSession("s"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}()
	if resp.PersistErr() != nil || len(store.appendCalls()) != 1 {
		t.Errorf("turn not persisted after a failing Invoked: %v", resp.PersistErr())
	}
	var pe *agent.ProviderError
	if errs := sink.get(); len(errs) != 1 || !errors.As(errs[0], &pe) || pe.Phase != "invoked" {
		t.Errorf("OnError got %v", errs)
	}
}

// fakeCounter counts one token per byte of message text.
type fakeCounter struct{}

func (fakeCounter) CountMessages(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Text())
	}
	return n
}
func (fakeCounter) CountTools(defs []llm.ToolDefinition) int { return 10 * len(defs) }

// keepLast is a strategy that keeps the last message, or fails.
type keepLast struct {
	calls  int
	budget int
	err    error
}

func (k *keepLast) Compress(_ context.Context, msgs []llm.Message, budget int, _ compact.TokenCounter) ([]llm.Message, error) {
	k.calls++
	k.budget = budget
	if k.err != nil {
		return nil, k.err
	}
	return msgs[len(msgs)-1:], nil
}

func TestCompressionTriggerRules(t *testing.T) {
	t.Parallel()
	// Window 100 with 25 reserved output and a 5-token margin: budget 70.
	known := llm.ModelInfo{Name: "m", ContextWindow: 100, ReservedOutput: 25, SafetyMargin: 5}
	over := strings.Repeat("x", 68)  // with "old": 71 tokens
	exact := strings.Repeat("x", 67) // 70 tokens
	tests := []struct {
		name      string
		off       bool
		info      llm.ModelInfo
		override  *llm.ModelInfo
		text      string
		stratErr  error
		tools     []tool.Tool
		wantCalls int
		wantMsgs  int // messages in the request
		wantWarn  bool
	}{
		{name: "over budget with strategy, counter and known limits compresses", info: known, text: over, wantCalls: 1, wantMsgs: 1},
		{name: "exactly at the budget does not compress", info: known, text: exact, wantCalls: 0, wantMsgs: 2},
		{name: "the tools' tokens come out of the budget", info: known, text: exact, tools: []tool.Tool{echoTool{"t"}}, wantCalls: 1, wantMsgs: 1},
		{name: "with compaction off nothing runs", off: true, info: known, text: over, wantMsgs: 2},
		{name: "unknown model limits do not compress", info: llm.ModelInfo{Name: "m"}, text: over, wantCalls: 0, wantMsgs: 2},
		{name: "the model-info override supplies the limits", info: llm.ModelInfo{Name: "m"}, override: &known, text: over, wantCalls: 1, wantMsgs: 1},
		{name: "a failing strategy leaves the messages unchanged and warns", info: known, text: over, stratErr: errors.New("cannot fit"), wantCalls: 1, wantMsgs: 2, wantWarn: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs logBuffer
			strat := &keepLast{err: tt.stratErr}
			m := llmtest.New(llmtest.Text("ok")).WithInfo(tt.info).Verify(t)
			policy := &compact.Policy{Strategy: strat, Counter: fakeCounter{}}
			if tt.off {
				policy.Strategy = compact.Off
			}
			a := newAgent(t, m, agent.Config{ModelInfo: tt.override, Logger: logs.logger(), Tools: tt.tools, Compaction: policy})
			_, err := a.Run(context.Background(), []llm.Message{llm.AssistantText("old"), llm.UserText(tt.text)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if strat.calls != tt.wantCalls {
				t.Errorf("strategy called %d times, want %d", strat.calls, tt.wantCalls)
			}
			if want := 70 - 10*len(tt.tools); strat.calls > 0 && strat.budget != want {
				t.Errorf("strategy got budget %d, want the input budget less the tools, %d", strat.budget, want)
			}
			if got := len(m.Requests()[0].Messages); got != tt.wantMsgs {
				t.Errorf("request has %d messages, want %d", got, tt.wantMsgs)
			}
			if warned := strings.Contains(logs.String(), "compression failed"); warned != tt.wantWarn {
				t.Errorf("warned = %v, want %v (log %q)", warned, tt.wantWarn, logs.String())
			}
		})
	}
}

func TestRequestHashTrackingIsAPerSessionStatistic(t *testing.T) {
	t.Parallel()
	store := newStore()
	m := llmtest.New(llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three"), llmtest.Text("other")).Verify(t)
	a := newAgent(t, m, agent.Config{Instructions: "sys", Store: store})
	ctx := context.Background()
	for _, q := range []string{"a", "b"} {
		if _, err := a.Run(ctx, user(q), withSession("s")); err != nil {
			t.Fatal(err)
		}
	}
	got := store.session(t, "s").Prefix
	if want := (session.PrefixStats{Requests: 2, PrefixStable: 1, LastDivergence: -1, HashVersion: session.HashVersion}); got != want {
		t.Errorf("after two appended turns: %+v, want %+v", got, want)
	}
	// New instructions change message 0: the prefix breaks at index 0.
	if _, err := a.Run(ctx, user("c"), &agent.RunOptions{SessionID: "s", Instructions: "changed"}); err != nil {
		t.Fatal(err)
	}
	got = store.session(t, "s").Prefix
	if want := (session.PrefixStats{Requests: 3, PrefixStable: 1, LastDivergence: 0, HashVersion: session.HashVersion}); got != want {
		t.Errorf("after changed instructions: %+v, want %+v", got, want)
	}
	// Another session has its own statistic.
	if _, err := a.Run(ctx, user("x"), withSession("other")); err != nil {
		t.Fatal(err)
	}
	if got := store.session(t, "other").Prefix; got.Requests != 1 {
		t.Errorf("other session: %+v", got)
	}
}

// sourcedTool is a tool whose description and result name where it came
// from, so a test can tell which of two same-named tools won.
type sourcedTool struct{ name, from string }

func (s sourcedTool) Name() string                { return s.name }
func (s sourcedTool) Description() string         { return s.name + " from " + s.from }
func (s sourcedTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (s sourcedTool) Invoke(context.Context, json.RawMessage) (string, error) {
	return s.name + " ran from " + s.from, nil
}

// TestToolMerge: a name taken by several sources goes to the first of the
// agent's tools, the run's tools, then the context providers' tools in
// provider order; the order is stable, and the winner is the tool that
// runs.
func TestToolMerge(t *testing.T) {
	t.Parallel()
	agentTools := []tool.Tool{sourcedTool{"search", "agent"}, sourcedTool{"calc", "agent"}}
	runTools := []tool.Tool{sourcedTool{"calc", "run"}, sourcedTool{"clock", "run"}}
	p1 := &provider{name: "p1", inj: agent.Injection{Tools: []tool.Tool{sourcedTool{"search", "p1"}, sourcedTool{"memory", "p1"}}}}
	p2 := &provider{name: "p2", inj: agent.Injection{Tools: []tool.Tool{sourcedTool{"notes", "p2"}, sourcedTool{"memory", "p2"}, sourcedTool{"clock", "p2"}}}}
	cfg := agent.Config{Tools: agentTools, Providers: []agent.ContextProvider{p1, p2}}
	want := []string{"search from agent", "calc from agent", "clock from run", "memory from p1", "notes from p2"}
	for i := range 3 { // the order is stable from run to run
		req := firstRequest(t, cfg, user("hi"), &agent.RunOptions{SessionID: "s", Tools: runTools})
		var got []string
		for _, d := range req.Tools {
			got = append(got, d.Description)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: tools = %v, want %v", i, got, want)
		}
	}
	// The winners run.
	m := llmtest.New(llmtest.Reply(
		llmtest.Call("1", "calc", `{}`), llmtest.Call("2", "clock", `{}`), llmtest.Call("3", "memory", `{}`), llmtest.Call("4", "search", `{}`)),
		llmtest.Text("ok")).Verify(t)
	if _, err := newAgent(t, m, cfg).Run(context.Background(), user("hi"), &agent.RunOptions{SessionID: "s", Tools: runTools}); err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, msg := range m.Requests()[1].Messages {
		if msg.Role == llm.RoleTool {
			results = append(results, msg.Text())
		}
	}
	if want := []string{"calc ran from agent", "clock ran from run", "memory ran from p1", "search ran from agent"}; !reflect.DeepEqual(results, want) {
		t.Fatalf("results %v, want %v", results, want)
	}
}

func TestRunOptionsReachTheRequest(t *testing.T) {
	t.Parallel()
	temp := 0.2
	opts := &agent.RunOptions{
		Temperature:    &temp,
		MaxTokens:      77,
		ToolChoice:     llm.ToolChoice{Mode: llm.ToolChoiceRequired},
		ResponseFormat: &llm.ResponseFormat{Type: "json_object"},
		Metadata:       map[string]string{"user": "u1"},
	}
	req := firstRequest(t, agent.Config{}, user("hi"), opts)
	if req.Temperature == nil || *req.Temperature != 0.2 || req.MaxTokens != 77 || req.ToolChoice.Mode != llm.ToolChoiceRequired ||
		req.ResponseFormat == nil || req.ResponseFormat.Type != "json_object" || req.Metadata["user"] != "u1" {
		t.Errorf("request = %+v", req)
	}
}

func TestAnInvalidSessionIDFailsTheRun(t *testing.T) {
	t.Parallel()
	a := newAgent(t, llmtest.New().Verify(t), agent.Config{})
	_, err := a.Run(context.Background(), user("hi"), withSession("../escape"))
	if !errors.Is(err, session.ErrInvalidID) {
		t.Errorf("err = %v, want ErrInvalidID", err)
	}
}

func TestARunWithoutAModelFails(t *testing.T) {
	t.Parallel()
	if _, err := agent.New(nil, agent.Config{}); !errors.Is(err, agent.ErrNoModel) {
		t.Errorf("New(nil) err = %v", err)
	}
	_, err := (&agent.Agent{}).Run(context.Background(), user("hi"), nil)
	if !errors.Is(err, agent.ErrNoModel) {
		t.Errorf("zero Agent: err = %v", err)
	}
}
