package agent

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool"
)

// Spec describes an agent as data: what a driver that builds the agent
// somewhere else needs, with every piece of code named rather than
// carried. agcore's durable runner (package agtemporal) sends the specs of
// a turn's agents in the workflow's input and builds each with [New] inside
// the workflow; the worker resolves the names (the provider and model, the
// tools, the hooks). A Spec survives JSON encode → decode unchanged.
type Spec struct {
	// Name is the agent's name (Config.Name): handoffs and agent tools
	// refer to agents by it.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Instructions open the system message (Config.Instructions).
	Instructions string `json:"instructions,omitempty"`
	// Provider and Model name the model; the driver resolves them ("" is
	// the driver's default).
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Tools names the tools offered, in this order; nil offers every tool
	// the driver has, an empty list none.
	Tools []string `json:"tools"`
	// Handoffs name the agents of the same set this one may hand the turn
	// over to (Config.Handoffs); AgentTools those it may call as tools
	// ([AsTool]).
	Handoffs   []string `json:"handoffs,omitempty"`
	AgentTools []string `json:"agent_tools,omitempty"`
	// MaxSteps and MaxHandoffs are Config's (0: the defaults).
	MaxSteps    int `json:"max_steps,omitempty"`
	MaxHandoffs int `json:"max_handoffs,omitempty"`
	// ContextWindow, when positive, replaces the model's known window;
	// Compact is the budget policy's strategy: "auto" (the default),
	// "summarize" (old turns summarized by the agent's model), "off".
	ContextWindow int    `json:"context_window,omitempty"`
	Compact       string `json:"compact,omitempty"`
	// Budget and SessionBudget are Config's spending limits.
	Budget        budget.Limits `json:"budget,omitzero"`
	SessionBudget budget.Limits `json:"session_budget,omitzero"`
	// Guardrails are checks made of data ([GuardrailSpec]); Hooks name
	// the driver's own hooks and guardrails (code registered where the
	// agent runs) that apply to this agent.
	Guardrails []GuardrailSpec `json:"guardrails,omitempty"`
	Hooks      []string        `json:"hooks,omitempty"`
}

// GuardrailSpec is a guardrail made of data: it trips when Pattern (a Go
// regular expression) matches the turn's input (Stage "input": the text
// of the caller's last user message) or its final answer (Stage
// "output"), with Reason as the tripwire's reason.
type GuardrailSpec struct {
	Name    string `json:"name"`
	Stage   string `json:"stage"`
	Pattern string `json:"pattern"`
	Reason  string `json:"reason,omitempty"`
}

// Check reports what is wrong with g: a missing name, an unknown stage, a
// pattern that does not compile.
func (g GuardrailSpec) Check() error {
	if g.Name == "" {
		return fmt.Errorf("agent: a guardrail has no name")
	}
	if g.Stage != string(middleware.StageInput) && g.Stage != string(middleware.StageOutput) {
		return fmt.Errorf("agent: guardrail %q: stage %q is neither \"input\" nor \"output\"", g.Name, g.Stage)
	}
	if _, err := regexp.Compile(g.Pattern); err != nil {
		return fmt.Errorf("agent: guardrail %q: pattern: %v", g.Name, err)
	}
	return nil
}

// AddGuardrails adds the guardrails of specs to h (made when nil) and returns it; a
// guardrail that fails Check is an error.
func AddGuardrails(h *middleware.Hooks, specs []GuardrailSpec) (*middleware.Hooks, error) {
	if len(specs) == 0 {
		return h, nil
	}
	if h == nil {
		h = &middleware.Hooks{}
	}
	for _, g := range specs {
		if err := g.Check(); err != nil {
			return nil, err
		}
		re := regexp.MustCompile(g.Pattern)
		reason := g.Reason
		if reason == "" {
			reason = "matched " + g.Pattern
		}
		if g.Stage == string(middleware.StageInput) {
			h.InputGuardrails = append(h.InputGuardrails, middleware.Hook[middleware.InputGuardrailFunc]{Name: g.Name,
				Func: func(_ context.Context, req *llm.Request) error {
					if re.MatchString(lastUserText(req.Messages)) {
						return middleware.Block(reason)
					}
					return nil
				}})
			continue
		}
		h.OutputGuardrails = append(h.OutputGuardrails, middleware.Hook[middleware.OutputGuardrailFunc]{Name: g.Name,
			Func: func(_ context.Context, _ *llm.Request, resp *llm.Response) error {
				if re.MatchString(resp.Message.Text()) {
					return middleware.Block(reason)
				}
				return nil
			}})
	}
	return h, nil
}

// lastUserText is the text of the last user message of msgs (tool
// results, which user messages also carry, are not its text).
func lastUserText(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser && !isToolResults(msgs[i]) {
			return msgs[i].Text()
		}
	}
	return ""
}

func isToolResults(m llm.Message) bool {
	for _, b := range m.Content {
		if _, ok := b.(llm.ToolResult); ok {
			return true
		}
	}
	return false
}

// CheckSpecs reports what is wrong with a set of specs: an empty or
// repeated name, a handoff or agent tool naming no agent of the set, a
// guardrail that fails its Check, an unknown Compact.
func CheckSpecs(specs []Spec) error {
	names := make(map[string]bool, len(specs))
	for _, s := range specs {
		if s.Name == "" {
			return fmt.Errorf("agent: a spec has no name")
		}
		if names[s.Name] {
			return fmt.Errorf("agent: two specs are called %q", s.Name)
		}
		names[s.Name] = true
	}
	for _, s := range specs {
		for _, h := range append(append([]string(nil), s.Handoffs...), s.AgentTools...) {
			if !names[h] {
				return fmt.Errorf("agent: %s names agent %q, which is not one of %s", s.Name, h, strings.Join(specNames(specs), ", "))
			}
		}
		for _, g := range s.Guardrails {
			if err := g.Check(); err != nil {
				return err
			}
		}
		switch s.Compact {
		case "", "auto", "summarize", "off":
		default:
			return fmt.Errorf("agent: %s: compact %q is none of auto, summarize, off", s.Name, s.Compact)
		}
	}
	return nil
}

func specNames(specs []Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

// Apply returns base with what s says of the agent set on it: its name,
// description, instructions, step and handoff limits, spending limits,
// its guardrails added to base.Hooks (a copy), and its Compact strategy on
// base.Compaction (a copy; summarizer makes the summaries of "summarize").
// The model, the tools, the handoffs and the seams stay base's: they are
// the driver's to resolve.
func (s Spec) Apply(base Config, summarizer llm.Model) (Config, error) {
	c := base
	c.Name, c.Description, c.Instructions = s.Name, s.Description, s.Instructions
	c.MaxSteps, c.MaxHandoffs = s.MaxSteps, s.MaxHandoffs
	c.Budget, c.SessionBudget = s.Budget, s.SessionBudget
	if len(s.Guardrails) > 0 {
		var h *middleware.Hooks
		if base.Hooks != nil {
			cp := *base.Hooks
			cp.InputGuardrails = slices.Clone(cp.InputGuardrails)
			cp.OutputGuardrails = slices.Clone(cp.OutputGuardrails)
			h = &cp
		}
		var err error
		if c.Hooks, err = AddGuardrails(h, s.Guardrails); err != nil {
			return Config{}, err
		}
	}
	policy := &compact.Policy{}
	if b := base.Compaction; b != nil {
		// A new policy with base's settings: a Policy keeps per-run state
		// and must not be copied.
		policy = &compact.Policy{Strategy: b.Strategy, Counter: b.Counter, Budget: b.Budget, Info: b.Info,
			MaxFailures: b.MaxFailures, Logger: b.Logger}
	}
	switch s.Compact {
	case "off":
		policy.Strategy = compact.Off
	case "summarize":
		if summarizer == nil {
			return Config{}, fmt.Errorf("agent: %s: compact \"summarize\" needs a model to summarize with", s.Name)
		}
		policy.Strategy = compact.NewIncremental(compact.DefaultPipeline(summarizer))
	case "", "auto":
	default:
		return Config{}, fmt.Errorf("agent: %s: compact %q is none of auto, summarize, off", s.Name, s.Compact)
	}
	c.Compaction = policy
	return c, nil
}

// FromSpecs builds the agents of a set of specs (checked by [CheckSpecs]):
// make builds one agent, given the tools its AgentTools name (each an
// [AsTool] of an agent built before it); then each agent's Handoffs are
// joined ([Agent.AddHandoffs]). It returns the agents by name. Agent tools
// must not form a cycle (an agent calling itself runs a new agent of its
// own in-process, which a set of specs cannot say).
func FromSpecs(specs []Spec, build1 func(s Spec, agentTools []tool.Tool) (*Agent, error)) (map[string]*Agent, error) {
	if err := CheckSpecs(specs); err != nil {
		return nil, err
	}
	byName := make(map[string]int, len(specs))
	for i, s := range specs {
		byName[s.Name] = i
	}
	agents := make(map[string]*Agent, len(specs))
	building := make(map[string]bool, len(specs))
	var build func(name string) error
	build = func(name string) error {
		if agents[name] != nil {
			return nil
		}
		if building[name] {
			return fmt.Errorf("agent: %s calls itself through its agent tools", name)
		}
		building[name] = true
		s := specs[byName[name]]
		subs := make([]tool.Tool, 0, len(s.AgentTools))
		for _, sub := range s.AgentTools {
			if err := build(sub); err != nil {
				return err
			}
			subs = append(subs, AsTool(agents[sub], nil))
		}
		a, err := build1(s, subs)
		if err != nil {
			return fmt.Errorf("agent: %s: %w", name, err)
		}
		agents[name] = a
		return nil
	}
	for _, s := range specs {
		if err := build(s.Name); err != nil {
			return nil, err
		}
	}
	for _, s := range specs {
		targets := make([]*Agent, 0, len(s.Handoffs))
		for _, h := range s.Handoffs {
			targets = append(targets, agents[h])
		}
		if err := agents[s.Name].AddHandoffs(targets...); err != nil {
			return nil, err
		}
	}
	return agents, nil
}
