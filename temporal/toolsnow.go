package agtemporal

// Tools that change while a turn runs (an MCP server's
// tools/list_changed): a context provider whose Injection has ToolsNow is
// asked for its tools again before each model call of a durable turn after
// the first, as the in-process agent asks it (middleware.ToolLoop.Refresh).
// Each asking is a local activity (a Provide with Now set), so the tools a
// step was offered are recorded in the turn's history and replay.

import (
	"context"
	"fmt"
	"maps"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// toolsNowVersion is the change id (workflow.GetVersion) of a turn that
// asks a context provider whose tools change for them before each model
// call after the first. Histories recorded before it never reach it (their
// providers' results do not say Changing).
const toolsNowVersion = "agcore.tools-now"

// maxToolsNow bounds the ToolsNow functions a worker keeps (one per
// running provider call: a turn whose Invoked never came leaves its own).
const maxToolsNow = 4096

// toolsNowCache keeps, per workflow run, provider and agent run, the
// ToolsNow of the Injection a provider's Invoking returned, until its
// Invoked.
type toolsNowCache struct {
	mu    sync.Mutex
	fns   map[string]func() []tool.Tool
	order []string // keys, oldest first
}

func (c *toolsNowCache) keep(key string, fn func() []tool.Tool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fns == nil {
		c.fns = map[string]func() []tool.Tool{}
	}
	if _, ok := c.fns[key]; !ok {
		c.order = append(c.order, key)
	}
	c.fns[key] = fn
	for len(c.order) > maxToolsNow {
		delete(c.fns, c.order[0])
		c.order = c.order[1:]
	}
}

func (c *toolsNowCache) get(key string) func() []tool.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fns[key]
}

func (c *toolsNowCache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.fns[key]; !ok {
		return
	}
	delete(c.fns, key)
	for i, k := range c.order {
		if k == key {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}

// nowKey names a provider's call within an agent run of a workflow run.
func nowKey(ctx context.Context, in ProvideInput) string {
	var run string
	if activity.IsActivity(ctx) {
		run = activity.GetInfo(ctx).WorkflowExecution.RunID
	}
	return fmt.Sprintf("%s/%s/%d", run, in.RunID, in.Provider)
}

// provideNow answers a Provide with Now: the provider's tools as its
// Invoking's ToolsNow returns them now. On a worker that did not run that
// Invoking (the turn moved after a crash), Invoking runs again on a copy
// of the session, its changes to the state dropped, and its ToolsNow (or
// its Tools) answers.
func (a *activities) provideNow(ctx context.Context, p agent.ContextProvider, in ProvideInput, inv *agent.Invocation) (*ProvideResult, error) {
	key := nowKey(ctx, in)
	fn := a.now.get(key)
	if fn == nil {
		if inv.Session != nil {
			cp := *inv.Session
			cp.State = maps.Clone(cp.State)
			inv.Session = &cp
		}
		inj, err := p.Invoking(ctx, inv)
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError(err.Error(), "agcore.ProviderFailed", nil)
		}
		fn = func() []tool.Tool { return inj.Tools }
		if inj.ToolsNow != nil {
			fn = inj.ToolsNow
			a.now.keep(key, fn)
		}
	}
	res := &ProvideResult{Changing: true}
	res.Tools, res.Specs = a.runnable(fn())
	return res, nil
}

// runnable returns the names and specs of the tools of ts the worker can
// run (those it has, as Options.ToolsNow or Options.Tools give them), in
// the order of ts.
func (a *activities) runnable(ts []tool.Tool) ([]string, []ToolSpec) {
	have := a.toolsNow()
	var (
		names []string
		specs []ToolSpec
	)
	for _, t := range ts {
		if w, ok := tool.Find(have, t.Name()); ok {
			names = append(names, w.Name())
			specs = append(specs, ToolSpec{Definition: tool.Definition(w), NeedsApproval: tool.NeedsApproval(w)})
		}
	}
	return names, specs
}

// toolsNow returns the worker's tools as they are now.
func (a *activities) toolsNow() []tool.Tool {
	if a.opts.ToolsNow != nil {
		return a.opts.ToolsNow()
	}
	return a.opts.Tools
}

// toolsNow returns the ToolsNow of a provider's Injection in a turn, whose
// Tools were first: each call asks the worker (a Provide with Now, on w,
// the coroutine of the run whose Invoking it was) for the provider's tools
// as they are now. A failed asking keeps the tools the last one gave.
func (p *actProvider) toolsNow(w workflow.Context, in ProvideInput, first []tool.Tool) func() []tool.Tool {
	in.Now, in.Outcome = true, nil
	if in.Session != nil {
		in.Session = &session.Session{ID: in.Session.ID, State: maps.Clone(in.Session.State)}
	}
	last := first
	return func() []tool.Tool {
		var res ProvideResult
		if err := workflow.ExecuteLocalActivity(p.d.local(w, 3), activityProvide, in).Get(w, &res); err == nil {
			last = p.tools(res)
		}
		return last
	}
}

// tools makes the turn's tools of a provider's result: its Specs, or (in
// histories recorded before them) its Tools found among the turn's
// agents' tools.
func (p *actProvider) tools(res ProvideResult) []tool.Tool {
	out := []tool.Tool{}
	if res.Specs != nil {
		for _, ts := range res.Specs {
			out = append(out, &actTool{d: p.d, spec: ts})
		}
		return out
	}
	for _, name := range res.Tools {
		for _, ts := range p.d.allTools() {
			if ts.Definition.Name == name {
				out = append(out, &actTool{d: p.d, spec: ts})
				break
			}
		}
	}
	return out
}
