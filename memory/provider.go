package memory

import (
	"context"
	"errors"
	"sync"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
)

// Provider is conversation memory as an agent context provider. For each
// run with a session it loads the session's conversation from Store and
// injects its recent messages (see Config); when the run succeeds it adds
// the caller's messages and the turn's messages to the conversation. A
// failed, cancelled or abandoned run adds nothing.
//
// Use it with an agent that has no session Store (see the package doc).
// Set the fields before the first run; a Provider is safe for concurrent
// runs on different sessions (the agent serializes runs on one session).
type Provider struct {
	Store  Store
	Config Config

	runs sync.Map // run id → *Conversation loaded by Invoking
}

var _ agent.ContextProvider = (*Provider)(nil)

// Name returns "conversation-memory".
func (p *Provider) Name() string { return "conversation-memory" }

// Invoking injects the session's recent messages.
func (p *Provider) Invoking(ctx context.Context, inv *agent.Invocation) (agent.Injection, error) {
	if p.Store == nil {
		return agent.Injection{}, errors.New("memory: Provider has no Store")
	}
	c, err := Open(ctx, p.Store, inv.Session.ID, p.Config)
	if err != nil {
		return agent.Injection{}, err
	}
	p.runs.Store(inv.RunID, c)
	return agent.Injection{Messages: c.Recent(ctx)}, nil
}

// Invoked records a successful run's messages.
func (p *Provider) Invoked(ctx context.Context, inv *agent.Invocation, out *agent.Outcome) error {
	v, loaded := p.runs.LoadAndDelete(inv.RunID)
	if out.Err != nil || out.Response == nil {
		return nil
	}
	c, _ := v.(*Conversation)
	if !loaded {
		if p.Store == nil {
			return errors.New("memory: Provider has no Store")
		}
		var err error
		if c, err = Open(ctx, p.Store, inv.Session.ID, p.Config); err != nil {
			return err
		}
	}
	msgs := make([]llm.Message, 0, len(inv.Messages)+len(out.Response.Messages))
	msgs = append(msgs, inv.Messages...)
	msgs = append(msgs, out.Response.Messages...)
	return c.Add(ctx, msgs...)
}
