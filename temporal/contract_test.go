package agtemporal_test

// The contract suite: each case is an agent behaviour (a rule of the tool
// loop, approvals, budgets, guardrails, hooks, handoffs, sub-agents, typed
// output, compaction, persistence, failures), run against both drivers of
// the one agent: in-process (agent.New over the real model and tools) and
// durable (TurnWorkflow in Temporal's test environment, and on the dev
// server in TestContractOnDevServer). A case states what both must do, and
// the two runs must agree with each other.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/compact/tiktoken"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/structured"
	"github.com/agcore/agcore/tool"

	agtemporal "github.com/agcore/agcore/temporal"
)

// contractCase is one behaviour both drivers must show.
type contractCase struct {
	name    string
	specs   []agent.Spec
	script  func() []llmtest.Step // a fresh script per driver
	input   string
	history []session.Turn // stored before the turn
	schema  string
	approve map[string]bool // decisions by call id (absent: not asked)
	// gate: the turn has input guardrails, which a durable turn runs
	// before its first model call (a workflow starts no goroutine beside
	// an activity), and the in-process agent beside it, its output held
	// back: the durable turn may have made one call fewer.
	gate bool
	// quota is principal alice's total limit (nil: no principal).
	quota *budget.Limits
	// shelf adds the shelf provider, whose tool "late" appears once
	// "unlock" has run.
	shelf bool
	check func(t *testing.T, o *outcome)
}

// outcome is what one driver's run of a case came to.
type outcome struct {
	driver     string
	text       string
	agent      string
	finish     llm.FinishReason
	transcript []llm.Message
	object     json.RawMessage
	exceeded   *budget.ExceededError
	err        error
	stored     *session.Session // the session after the turn
	ran        map[string]int   // tool executions by tool name
	requests   []*llm.Request   // what the model was sent
	quotaSpent int              // tokens alice's quota holds as spent
	invoked    []string         // what the context provider's Invoked saw
}

// contractTools are the worker's tools: echo, and write (needs approval).
func contractTools(ran func(string)) []tool.Tool {
	echo := tool.MustFunc("echo", "Echo the text.", func(ctx context.Context, in echoIn) (string, error) {
		ran("echo")
		return "echo: " + in.Text, nil
	})
	write := tool.MustFunc("write", "Write the text.", func(ctx context.Context, in echoIn) (string, error) {
		ran("write")
		return "written", nil
	}, tool.WithApproval())
	return []tool.Tool{echo, write}
}

// contractHooks are the worker's named hooks: an output guardrail that
// trips on "forbidden", and a PreToolUse hook that denies echo of "no".
func contractHooks() *middleware.Hooks {
	return &middleware.Hooks{
		OutputGuardrails: []middleware.Hook[middleware.OutputGuardrailFunc]{{Name: "no-forbidden",
			Func: func(_ context.Context, _ *llm.Request, resp *llm.Response) error {
				if strings.Contains(resp.Message.Text(), "forbidden") {
					return middleware.Block("the answer says forbidden")
				}
				return nil
			}}},
		PreToolUse: []middleware.Hook[middleware.PreToolUseFunc]{{Name: "deny-no",
			Func: func(_ context.Context, call *tool.Call) error {
				if strings.Contains(string(call.Input), `"no"`) {
					return middleware.Deny("echo of no is not allowed")
				}
				return nil
			}}},
	}
}

// notesProvider is a context provider: it adds instructions and a
// message to every run, counts its runs in the session's state, and
// remembers each outcome it is told of.
type notesProvider struct {
	mu      sync.Mutex
	invoked []string
}

func (p *notesProvider) Name() string { return "notes" }

func (p *notesProvider) Invoking(_ context.Context, inv *agent.Invocation) (agent.Injection, error) {
	n := 0
	if raw, ok := inv.Session.State["notes.runs"]; ok {
		_ = json.Unmarshal(raw, &n)
	}
	if inv.Session.State == nil {
		inv.Session.State = map[string]json.RawMessage{}
	}
	inv.Session.State["notes.runs"] = json.RawMessage(fmt.Sprint(n + 1))
	return agent.Injection{Instructions: "The user's notes say: be brief.", Messages: []llm.Message{llm.UserText("(note: the user prefers French)")}}, nil
}

func (p *notesProvider) Invoked(_ context.Context, _ *agent.Invocation, out *agent.Outcome) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if out.Err != nil {
		p.invoked = append(p.invoked, "error")
	} else {
		p.invoked = append(p.invoked, out.Response.Message.Text())
	}
	return nil
}

// shelf is a context provider whose tools change while a turn runs, as
// an MCP server's do (tools/list_changed): it offers the worker's tool
// "late" once a call of the tool "unlock" has run, through
// agent.Injection.ToolsNow, so the turn's next model call is offered it.
type shelf struct {
	open atomic.Bool
	late tool.Tool
}

func newShelf(ran func(string)) (*shelf, []tool.Tool) {
	s := &shelf{}
	s.late = tool.MustFunc("late", "A tool that appears during the turn.", func(ctx context.Context, in echoIn) (string, error) {
		ran("late")
		return "late: " + in.Text, nil
	})
	unlock := tool.MustFunc("unlock", "Make the tool late appear.", func(ctx context.Context, in echoIn) (string, error) {
		ran("unlock")
		s.open.Store(true)
		return "unlocked", nil
	})
	return s, []tool.Tool{unlock, s.late}
}

func (s *shelf) Name() string { return "shelf" }

func (s *shelf) now() []tool.Tool {
	if s.open.Load() {
		return []tool.Tool{s.late}
	}
	return nil
}

func (s *shelf) Invoking(context.Context, *agent.Invocation) (agent.Injection, error) {
	return agent.Injection{Tools: s.now(), ToolsNow: s.now}, nil
}

func (s *shelf) Invoked(context.Context, *agent.Invocation, *agent.Outcome) error { return nil }

// workerTools returns the tools and context providers of a case's worker
// (or in-process agent): contractTools, the shelf's tools, the notes
// provider and, when the case asks for it, the shelf.
func workerTools(c contractCase, ran func(string), notes *notesProvider) ([]tool.Tool, []agent.ContextProvider) {
	sh, more := newShelf(ran)
	providers := []agent.ContextProvider{notes}
	if c.shelf {
		providers = append(providers, sh)
	}
	return append(contractTools(ran), more...), providers
}

// pickHooks returns the hooks of h named in names (nil when none).
func pickHooks(h *middleware.Hooks, names []string) *middleware.Hooks {
	if len(names) == 0 {
		return nil
	}
	keep := func(n string) bool { return slices.Contains(names, n) }
	out := &middleware.Hooks{}
	for _, x := range h.OutputGuardrails {
		if keep(x.Name) {
			out.OutputGuardrails = append(out.OutputGuardrails, x)
		}
	}
	for _, x := range h.PreToolUse {
		if keep(x.Name) {
			out.PreToolUse = append(out.PreToolUse, x)
		}
	}
	return out
}

func one(spec agent.Spec) []agent.Spec { return []agent.Spec{spec} }

func contractCases() []contractCase {
	steps := func(s ...llmtest.Step) func() []llmtest.Step { return func() []llmtest.Step { return s } }
	return []contractCase{
		{
			name:   "a tool call is run and its result read",
			specs:  one(agent.Spec{Name: "main", Tools: []string{"echo"}}),
			script: steps(llmtest.Reply(llmtest.Call("c1", "echo", `{"text":"hi"}`)), llmtest.Text("done")),
			input:  "echo hi",
			check: func(t *testing.T, o *outcome) {
				must(t, o.err == nil && o.text == "done" && o.ran["echo"] == 1 && len(o.transcript) == 3, "%s: %+v", o.driver, o)
				must(t, o.stored != nil && len(o.stored.Messages) == 4, "%s: stored %v", o.driver, o.stored)
			},
		},
		{
			name:  "the step limit answers the last calls unrun and stores the turn",
			specs: one(agent.Spec{Name: "main", Tools: []string{"echo"}, MaxSteps: 2}),
			script: steps(llmtest.Reply(llmtest.Call("c1", "echo", `{"text":"a"}`)),
				llmtest.Reply(llmtest.Call("c2", "echo", `{"text":"b"}`))),
			input: "loop",
			check: func(t *testing.T, o *outcome) {
				must(t, o.err == nil && o.finish == llm.FinishMaxSteps && o.ran["echo"] == 1, "%s: %+v", o.driver, o)
				must(t, o.stored != nil && len(o.stored.Messages) == 5, "%s: stored %v", o.driver, o.stored)
			},
		},
		{
			name:    "a call needing approval runs when approved and not when denied",
			specs:   one(agent.Spec{Name: "main", Tools: []string{"write"}}),
			script:  steps(llmtest.Reply(llmtest.Call("w1", "write", `{"text":"x"}`), llmtest.Call("w2", "write", `{"text":"y"}`)), llmtest.Text("one of two")),
			input:   "write two",
			approve: map[string]bool{"w1": true, "w2": false},
			check: func(t *testing.T, o *outcome) {
				must(t, o.err == nil && o.ran["write"] == 1 && o.text == "one of two", "%s: %+v", o.driver, o)
				res := results(o.transcript)
				must(t, len(res) == 2 && !res[0].IsError && res[1].IsError, "%s: results %+v", o.driver, res)
			},
		},
		{
			name:   "a PreToolUse hook of the worker denies one call",
			specs:  one(agent.Spec{Name: "main", Tools: []string{"echo"}, Hooks: []string{"deny-no"}}),
			script: steps(llmtest.Reply(llmtest.Call("c1", "echo", `{"text":"no"}`), llmtest.Call("c2", "echo", `{"text":"yes"}`)), llmtest.Text("ok")),
			input:  "echo no and yes",
			check: func(t *testing.T, o *outcome) {
				must(t, o.err == nil && o.ran["echo"] == 1, "%s: %+v", o.driver, o)
				r := results(o.transcript)[0]
				must(t, r.IsError && strings.Contains(r.Text(), "echo of no"), "%s: %+v", o.driver, r)
			},
		},
		{
			name:  "a run's token budget stops the turn before a call that could cross it, and stores what it did",
			specs: one(agent.Spec{Name: "main", Tools: []string{"echo"}, Budget: budget.Limits{Tokens: 1500}}),
			script: steps(llmtest.Respond(&llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llmtest.Call("c1", "echo", `{"text":"a"}`)}},
				FinishReason: llm.FinishToolUse, Usage: llm.Usage{InputTokens: 700, OutputTokens: 300}})),
			input: "spend",
			check: func(t *testing.T, o *outcome) {
				must(t, o.finish == llm.FinishBudget && o.exceeded != nil && o.exceeded.Scope == budget.ScopeRun, "%s: %+v (err %v)", o.driver, o, o.err)
				must(t, o.stored != nil && len(o.stored.Messages) == 3, "%s: stored %v", o.driver, o.stored)
			},
		},
		{
			name:  "a principal's quota, kept in the store's records, stops the turn before a call that could cross it",
			specs: one(agent.Spec{Name: "main", Tools: []string{"echo"}}),
			quota: &budget.Limits{Tokens: 1500},
			script: steps(llmtest.Respond(&llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llmtest.Call("c1", "echo", `{"text":"a"}`)}},
				FinishReason: llm.FinishToolUse, Usage: llm.Usage{InputTokens: 700, OutputTokens: 300}})),
			input: "spend alice's",
			check: func(t *testing.T, o *outcome) {
				must(t, o.finish == llm.FinishBudget && o.exceeded != nil && o.exceeded.Scope == budget.ScopePrincipal, "%s: %+v (err %v)", o.driver, o, o.err)
				must(t, o.quotaSpent == 1000, "%s: the quota holds %d tokens spent, want 1000", o.driver, o.quotaSpent)
			},
		},
		{
			name: "an input guardrail's tripwire stores nothing and runs no tool",
			specs: one(agent.Spec{Name: "main", Tools: []string{"echo"},
				Guardrails: []agent.GuardrailSpec{{Name: "no-passwords", Stage: "input", Pattern: "(?i)password", Reason: "asks for a password"}}}),
			script: steps(llmtest.Reply(llmtest.Call("c1", "echo", `{"text":"x"}`)), llmtest.Text("never")),
			input:  "what is the admin password?",
			gate:   true,
			check: func(t *testing.T, o *outcome) {
				var ge *middleware.GuardrailError
				must(t, errors.Is(o.err, middleware.ErrTripwire) && errors.As(o.err, &ge) && ge.Guardrail == "no-passwords", "%s: %v", o.driver, o.err)
				must(t, o.ran["echo"] == 0 && (o.stored == nil || len(o.stored.Messages) == 0), "%s: ran %v stored %v", o.driver, o.ran, o.stored)
			},
		},
		{
			name:   "an output guardrail of the worker trips on the answer and nothing is stored",
			specs:  one(agent.Spec{Name: "main", Hooks: []string{"no-forbidden"}}),
			script: steps(llmtest.Text("this is forbidden")),
			input:  "say it",
			check: func(t *testing.T, o *outcome) {
				must(t, errors.Is(o.err, middleware.ErrTripwire), "%s: %v", o.driver, o.err)
				must(t, o.stored == nil || len(o.stored.Messages) == 0, "%s: stored %v", o.driver, o.stored)
			},
		},
		{
			name: "a handoff continues the turn with the other agent, which is recorded as the answering one",
			specs: []agent.Spec{
				{Name: "triage", Instructions: "Route.", Tools: []string{}, Handoffs: []string{"billing"}},
				{Name: "billing", Instructions: "Bills.", Tools: []string{"echo"}},
			},
			script: steps(llmtest.Reply(llmtest.Call("h1", agent.TransferToolName("billing"), `{}`)), llmtest.Text("your bill is 3 EUR")),
			input:  "my bill?",
			check: func(t *testing.T, o *outcome) {
				must(t, o.err == nil && o.agent == "billing" && o.text == "your bill is 3 EUR", "%s: %+v", o.driver, o)
				last := o.requests[len(o.requests)-1]
				must(t, strings.Contains(last.Messages[0].Text(), "Bills."), "%s: the last request's system %q", o.driver, last.Messages[0].Text())
				raw := o.stored.State[session.AgentsKey]
				must(t, strings.Contains(string(raw), "billing"), "%s: agents state %s", o.driver, raw)
			},
		},
		{
			name: "an agent tool runs a sub-agent whose transcript is its own session",
			specs: []agent.Spec{
				{Name: "main", Tools: []string{}, AgentTools: []string{"researcher"}},
				{Name: "researcher", Description: "Looks things up.", Tools: []string{"echo"}},
			},
			script: steps(llmtest.Reply(llmtest.Call("s1", "researcher", `{"input":"find x"}`)),
				llmtest.Reply(llmtest.Call("e1", "echo", `{"text":"x"}`)), llmtest.Text("x is 1"), llmtest.Text("the researcher says x is 1")),
			input: "what is x?",
			check: func(t *testing.T, o *outcome) {
				must(t, o.err == nil && o.text == "the researcher says x is 1" && o.ran["echo"] == 1, "%s: %+v", o.driver, o)
				r := results(o.transcript)[0]
				must(t, r.Text() == "x is 1", "%s: sub-agent result %+v", o.driver, r)
			},
		},
		{
			name:   "a typed answer validates against the schema, with one repair turn",
			specs:  one(agent.Spec{Name: "main", Tools: []string{}}),
			schema: `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`,
			script: steps(llmtest.Text(`{"nom":"Ada"}`), llmtest.Text(`{"name":"Ada"}`)),
			input:  "who?",
			check: func(t *testing.T, o *outcome) {
				must(t, o.err == nil && string(o.object) == `{"name":"Ada"}`, "%s: %s (err %v)", o.driver, o.object, o.err)
			},
		},
		{
			name:   "a context provider's instructions, messages and state reach the run, and Invoked learns its outcome",
			specs:  one(agent.Spec{Name: "main", Instructions: "Answer.", Tools: []string{}}),
			script: steps(llmtest.Text("bref")),
			input:  "hello",
			check: func(t *testing.T, o *outcome) {
				req := o.requests[0]
				must(t, strings.Contains(req.Messages[0].Text(), "be brief") && strings.Contains(fmt.Sprint(req.Messages), "prefers French"), "%s: request %v", o.driver, req.Messages)
				must(t, string(o.stored.State["notes.runs"]) == "1", "%s: state %s", o.driver, o.stored.State["notes.runs"])
				must(t, slices.Equal(o.invoked, []string{"bref"}), "%s: invoked %v", o.driver, o.invoked)
			},
		},
		{
			name:    "compaction keeps the request inside a small context window",
			specs:   one(agent.Spec{Name: "main", Tools: []string{}, ContextWindow: 1500}),
			history: longHistory(20),
			script:  steps(llmtest.Text("short answer")),
			input:   "and now?",
			check: func(t *testing.T, o *outcome) {
				must(t, o.err == nil && len(o.requests) == 1, "%s: %+v", o.driver, o)
				n := len(o.requests[0].Messages)
				must(t, n < 41, "%s: the request kept %d messages of 41", o.driver, n)
			},
		},
		{
			name:  "a tool a provider's ToolsNow offers during the turn is offered to the next model call and runs",
			specs: one(agent.Spec{Name: "main", Tools: []string{"unlock"}}),
			shelf: true,
			script: steps(llmtest.Reply(llmtest.Call("u1", "unlock", `{"text":"x"}`)),
				llmtest.Reply(llmtest.Call("l1", "late", `{"text":"now"}`)), llmtest.Text("done")),
			input: "unlock, then use late",
			check: func(t *testing.T, o *outcome) {
				must(t, o.err == nil && o.text == "done" && o.ran["unlock"] == 1 && o.ran["late"] == 1, "%s: %+v", o.driver, o)
				must(t, len(o.requests) == 3, "%s: %d model calls", o.driver, len(o.requests))
				offered := func(r *llm.Request) bool {
					return slices.ContainsFunc(r.Tools, func(d llm.ToolDefinition) bool { return d.Name == "late" })
				}
				must(t, !offered(o.requests[0]) && offered(o.requests[1]), "%s: late offered %v, %v", o.driver, offered(o.requests[0]), offered(o.requests[1]))
				r := results(o.transcript)
				must(t, len(r) == 2 && !r[1].IsError && r[1].Text() == "late: now", "%s: results %+v", o.driver, r)
			},
		},
		{
			name:   "a failed model call fails the turn with its kind and leaves the session as it was",
			specs:  one(agent.Spec{Name: "main", Tools: []string{"echo"}}),
			script: steps(llmtest.Fail(&llm.Error{Kind: llm.KindAuth, StatusCode: 401, Message: "bad key"})),
			input:  "hi",
			check: func(t *testing.T, o *outcome) {
				must(t, errors.Is(o.err, llm.ErrAuth), "%s: %v", o.driver, o.err)
				must(t, o.stored == nil || len(o.stored.Messages) == 0, "%s: stored %v", o.driver, o.stored)
			},
		},
	}
}

// results returns the tool results of msgs, in order.
func results(msgs []llm.Message) []llm.Message {
	var out []llm.Message
	for _, m := range msgs {
		if m.Role == llm.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func longHistory(n int) []session.Turn {
	out := make([]session.Turn, n)
	for i := range out {
		out[i] = session.Turn{ID: fmt.Sprintf("old-%d", i), Messages: []llm.Message{
			llm.UserText(fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 40))),
			llm.AssistantText(fmt.Sprintf("answer %d: %s", i, strings.Repeat("more words ", 40))),
		}}
	}
	return out
}

func must(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Fatalf(format, args...)
	}
}

// counter counts tool executions by name.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(name string) { c.mu.Lock(); c.n[name]++; c.mu.Unlock() }

func (c *counter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// runInProcess runs a case with agent.New's agents in this process.
func runInProcess(t *testing.T, c contractCase) *outcome {
	t.Helper()
	ctx := context.Background()
	store := memstore.New()
	seed(t, store, c.history)
	model := llmtest.New(c.script()...)
	ran := &counter{n: map[string]int{}}
	hooks := contractHooks()
	notes := &notesProvider{}
	ts, providers := workerTools(c, ran.add, notes)
	approver := tool.ApproverFunc(func(_ context.Context, call tool.Call) (tool.Decision, error) {
		return tool.Decision{Approved: c.approve[call.ID], Reason: "denied by the test"}, nil
	})
	agents, err := agent.FromSpecs(c.specs, func(s agent.Spec, subs []tool.Tool) (*agent.Agent, error) {
		mine := ts // nil: every tool, as on the worker
		if s.Tools != nil {
			mine = nil
			for _, name := range s.Tools {
				tt, _ := tool.Find(ts, name)
				mine = append(mine, tt)
			}
		}
		info := model.Info()
		if s.ContextWindow > 0 {
			info.ContextWindow = s.ContextWindow
		}
		counter, _ := tiktoken.For(info.Name)
		cfg, err := s.Apply(agent.Config{Tools: append(mine, subs...), Store: store, Approver: approver, Providers: providers,
			Hooks: pickHooks(hooks, s.Hooks), ModelInfo: &info, Compaction: &compact.Policy{Counter: counter},
			Retry: middleware.RetryConfig{MaxAttempts: 1}, Logger: slog.New(slog.DiscardHandler)}, model)
		if err != nil {
			return nil, err
		}
		return agent.New(model, cfg)
	})
	if err != nil {
		t.Fatal(err)
	}
	entry := agents[c.specs[0].Name]
	opts := &agent.RunOptions{SessionID: "s1"}
	if c.quota != nil {
		opts.Store = session.Scoped(store, "alice")
		ctx = budget.WithQuota(ctx, &budget.StoreQuota{Records: store, Principal: "alice", Total: *c.quota})
	}
	o := &outcome{driver: "in-process"}
	var resp *agent.Response
	if c.schema != "" {
		o.object, resp, o.err = structured.Run[json.RawMessage](ctx, entry, []llm.Message{llm.UserText(c.input)}, &structured.Options{Run: opts, Schema: json.RawMessage(c.schema)})
	} else {
		resp, o.err = entry.Run(ctx, []llm.Message{llm.UserText(c.input)}, opts)
	}
	if resp != nil {
		o.text, o.agent, o.finish, o.transcript = resp.Text(), resp.Agent, resp.FinishReason, resp.Messages
	}
	errors.As(o.err, &o.exceeded)
	o.stored, _ = store.Load(ctx, "s1")
	o.ran, o.requests = ran.snapshot(), model.Requests()
	o.quotaSpent = spent(t, store)
	o.invoked = notes.invoked
	return o
}

// spent returns the tokens alice's quota holds as spent.
func spent(t *testing.T, store *memstore.Store) int {
	t.Helper()
	q := &budget.StoreQuota{Records: store, Principal: "alice"}
	s, err := q.Spent(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s.Total.Usage.InputTokens + s.Total.Usage.OutputTokens
}

// runDurable runs a case as a TurnWorkflow in Temporal's test environment.
func runDurable(t *testing.T, c contractCase) *outcome {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	s.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	store := memstore.New()
	seed(t, store, c.history)
	model := llmtest.New(c.script()...)
	ran := &counter{n: map[string]int{}}
	notes := &notesProvider{}
	ts, providers := workerTools(c, ran.add, notes)
	agtemporal.Register(env, agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m",
		Tools: ts, Store: store, Hooks: contractHooks(), Providers: providers})
	if len(c.approve) > 0 {
		for i := 1; i <= 5; i++ {
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(agtemporal.PendingQuery)
				if err != nil {
					return
				}
				var pend []agtemporal.PendingApproval
				_ = v.Get(&pend)
				for _, p := range pend {
					env.UpdateWorkflow(agtemporal.DecideUpdate, p.CallID, &testsuite.TestUpdateCallback{
						OnAccept: func() {}, OnReject: func(error) {}, OnComplete: func(any, error) {}},
						agtemporal.Decision{CallID: p.CallID, Approve: c.approve[p.CallID], Reason: "denied by the test"})
				}
			}, time.Duration(i)*time.Minute)
		}
	}
	in := agtemporal.TurnInput{SessionID: "s1", TurnID: "t1", Agents: c.specs, Messages: []llm.Message{llm.UserText(c.input)}}
	if c.schema != "" {
		in.Schema = json.RawMessage(c.schema)
	}
	if c.quota != nil {
		in.Principal, in.Quota = "alice", &agtemporal.Quota{Total: *c.quota}
	}
	env.ExecuteWorkflow(agtemporal.TurnWorkflowName, in)
	must(t, env.IsWorkflowCompleted(), "the workflow did not complete")
	o := &outcome{driver: "durable"}
	if err := env.GetWorkflowError(); err != nil {
		o.err = agtemporal.TurnError(err)
	} else {
		var res agtemporal.TurnResult
		if err := env.GetWorkflowResult(&res); err != nil {
			t.Fatal(err)
		}
		o.text, o.agent, o.finish, o.transcript, o.object, o.exceeded = res.Text, res.Agent, res.FinishReason, res.Transcript, res.Object, res.Exceeded
		if res.Exceeded != nil {
			o.err = res.Exceeded
		}
	}
	o.stored, _ = store.Load(context.Background(), "s1")
	o.ran, o.requests = ran.snapshot(), model.Requests()
	o.quotaSpent = spent(t, store)
	o.invoked = notes.invoked
	return o
}

func seed(t *testing.T, st session.Store, turns []session.Turn) {
	t.Helper()
	for _, turn := range turns {
		if err := st.Append(context.Background(), "s1", turn); err != nil {
			t.Fatal(err)
		}
	}
}

// TestContract runs every case on both drivers and checks that they agree.
func TestContract(t *testing.T) {
	for _, c := range contractCases() {
		t.Run(c.name, func(t *testing.T) {
			in := runInProcess(t, c)
			c.check(t, in)
			du := runDurable(t, c)
			c.check(t, du)
			agree(t, c, in, du)
		})
	}
}

// agree checks that two drivers' outcomes of one case are the same turn:
// the same answer, agent, finish, transcript, stored messages, tool runs
// and model requests.
func agree(t *testing.T, c contractCase, a, b *outcome) {
	t.Helper()
	j := func(v any) string { x, _ := json.Marshal(v); return string(x) }
	must(t, a.text == b.text && a.agent == b.agent && a.finish == b.finish, "answers differ:\n %s: %q %q %q\n %s: %q %q %q",
		a.driver, a.text, a.agent, a.finish, b.driver, b.text, b.agent, b.finish)
	must(t, j(a.transcript) == j(b.transcript), "transcripts differ:\n %s\n %s", j(a.transcript), j(b.transcript))
	must(t, j(a.ran) == j(b.ran), "tool runs differ: %v, %v", a.ran, b.ran)
	must(t, j(a.invoked) == j(b.invoked), "the providers' Invoked differ: %v, %v", a.invoked, b.invoked)
	must(t, (a.err == nil) == (b.err == nil), "errors differ: %v, %v", a.err, b.err)
	if a.err != nil {
		must(t, a.err.Error() == b.err.Error(), "errors differ:\n %v\n %v", a.err, b.err)
	}
	msgs := func(s *session.Session) string {
		if s == nil {
			return "[]"
		}
		return j(s.Messages)
	}
	must(t, msgs(a.stored) == msgs(b.stored), "stored sessions differ:\n %s\n %s", msgs(a.stored), msgs(b.stored))
	if c.gate {
		return
	}
	must(t, len(a.requests) == len(b.requests), "model calls differ: %d, %d", len(a.requests), len(b.requests))
	for i := range a.requests {
		ra, rb := *a.requests[i], *b.requests[i]
		ra.Metadata, rb.Metadata = nil, nil
		must(t, j(ra) == j(rb), "request %d differs:\n %s\n %s", i+1, j(ra), j(rb))
	}
}

// runDevServer runs a case as a TurnWorkflow on a Temporal dev server, with
// a worker of its own (its own task queue) in this process; approvals are
// decided through the Pending query and the Decide update, as agcore
// approve decides them.
func runDevServer(t *testing.T, cl client.Client, c contractCase, queue string) *outcome {
	t.Helper()
	ctx := context.Background()
	store := memstore.New()
	seed(t, store, c.history)
	model := llmtest.New(c.script()...)
	ran := &counter{n: map[string]int{}}
	notes := &notesProvider{}
	ts, providers := workerTools(c, ran.add, notes)
	w := agtemporal.NewWorker(cl, queue, agtemporal.Options{Models: map[string]llm.Model{"m": model}, DefaultModel: "m",
		Tools: ts, Store: store, Hooks: contractHooks(), Providers: providers}, worker.Options{})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	in := agtemporal.TurnInput{SessionID: "s1", TurnID: queue, Agents: c.specs, Messages: []llm.Message{llm.UserText(c.input)}}
	if c.schema != "" {
		in.Schema = json.RawMessage(c.schema)
	}
	if c.quota != nil {
		in.Principal, in.Quota = "alice", &agtemporal.Quota{Total: *c.quota}
	}
	run, err := agtemporal.StartTurn(ctx, cl, queue, in)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	if len(c.approve) > 0 {
		go func() {
			decided := map[string]bool{}
			for {
				select {
				case <-done:
					return
				case <-time.After(50 * time.Millisecond):
				}
				pend, err := agtemporal.Pending(ctx, cl, run.GetID())
				if err != nil {
					continue
				}
				for _, p := range pend {
					if !decided[p.CallID] {
						decided[p.CallID] = true
						_ = agtemporal.Decide(ctx, cl, run.GetID(), agtemporal.Decision{CallID: p.CallID, Approve: c.approve[p.CallID], Reason: "denied by the test"})
					}
				}
			}
		}()
	}
	var res agtemporal.TurnResult
	err = run.Get(ctx, &res)
	close(done)
	o := &outcome{driver: "dev server"}
	if err != nil {
		o.err = agtemporal.TurnError(err)
	} else {
		o.text, o.agent, o.finish, o.transcript, o.object, o.exceeded = res.Text, res.Agent, res.FinishReason, res.Transcript, res.Object, res.Exceeded
		if res.Exceeded != nil {
			o.err = res.Exceeded
		}
	}
	o.stored, _ = store.Load(ctx, "s1")
	o.ran, o.requests = ran.snapshot(), model.Requests()
	o.quotaSpent = spent(t, store)
	o.invoked = notes.invoked
	return o
}

// TestContractOnDevServer runs every case of the contract on a Temporal
// dev server (the real server, its persistence and task dispatch), and
// checks that each agrees with the in-process agent.
func TestContractOnDevServer(t *testing.T) {
	_, cl := devServer(t)
	prefix := time.Now().Format("150405.000")
	for i, c := range contractCases() {
		t.Run(c.name, func(t *testing.T) {
			in := runInProcess(t, c)
			dev := runDevServer(t, cl, c, fmt.Sprintf("contract-%s-%d", prefix, i))
			c.check(t, dev)
			agree(t, c, in, dev)
		})
	}
}
