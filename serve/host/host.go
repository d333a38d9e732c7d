// Package host holds what the parts of agcore's server share: the agents a
// server offers ([Set]) and the authenticated caller of a request
// ([WithPrincipal]). The OpenAI-compatible endpoints (package serve), the
// A2A endpoints (serve/a2aserve) and the web page (serve/web) each take a
// *Set and an *approval.Broker; package serve mounts them behind one
// authentication layer, which labels each request with its principal.
//
// [Approvals] keeps an approval.Broker's waiting calls in a session
// store's records, so that several servers over one store share them.
//
// Package host imports agent, approval, llm and session only.
package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/session"
)

// Agent is one agent a server offers.
type Agent struct {
	// Name is how clients pick the agent (the "model" of the OpenAI
	// endpoints, the A2A agent's name). Required and unique in a Set.
	Name string
	// Description tells clients what the agent does.
	Description string
	// Agent runs the turns. Its Config.Approver should be the server's
	// *approval.Broker, so that calls needing approval can be decided by
	// clients.
	Agent *agent.Agent
	// Store keeps the agent's sessions (the same store the agent was
	// built with); nil means the agent keeps none and only stateless
	// requests are served.
	Store session.Store
	// Model names the model behind the agent, for display.
	Model string
}

// Set is the agents a server offers, in the order given; the first is the
// default. A Set is read-only after NewSet and safe for concurrent use.
type Set struct {
	list   []Agent
	byName map[string]int
}

// ErrNoAgents is returned by NewSet when it is given none.
var ErrNoAgents = errors.New("host: no agents")

// NewSet checks the agents (a name each, unique, and an agent) and returns
// them as a Set.
func NewSet(agents ...Agent) (*Set, error) {
	if len(agents) == 0 {
		return nil, ErrNoAgents
	}
	s := &Set{list: append([]Agent(nil), agents...), byName: make(map[string]int, len(agents))}
	for i, a := range s.list {
		switch {
		case a.Name == "":
			return nil, fmt.Errorf("host: agent %d has no name", i)
		case a.Agent == nil:
			return nil, fmt.Errorf("host: agent %q has no *agent.Agent", a.Name)
		}
		if _, dup := s.byName[a.Name]; dup {
			return nil, fmt.Errorf("host: two agents are named %q", a.Name)
		}
		s.byName[a.Name] = i
	}
	return s, nil
}

// Get returns the agent called name.
func (s *Set) Get(name string) (Agent, bool) {
	i, ok := s.byName[name]
	if !ok {
		return Agent{}, false
	}
	return s.list[i], true
}

// Default returns the first agent.
func (s *Set) Default() Agent { return s.list[0] }

// All returns the agents in order (a copy).
func (s *Set) All() []Agent { return append([]Agent(nil), s.list...) }

type principalKey struct{}

// WithPrincipal labels ctx with the authenticated caller's name (the name
// of the token it presented; "local" on a loopback server with no tokens).
func WithPrincipal(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, principalKey{}, name)
}

// PrincipalFrom returns the name set by WithPrincipal.
func PrincipalFrom(ctx context.Context) (string, bool) {
	p, ok := ctx.Value(principalKey{}).(string)
	return p, ok
}

type stopKey struct{}

// WithStop returns ctx carrying stop, a channel the server closes when a
// turn started by the request must stop because the server is shutting
// down. A handler whose work outlives its request's context (an A2A task
// runs detached from it) watches Stop to cancel the turn and still answer
// the request: its failure, then the end of the response.
func WithStop(ctx context.Context, stop <-chan struct{}) context.Context {
	return context.WithValue(ctx, stopKey{}, stop)
}

// Stop returns the channel set by WithStop; nil (never ready) when none.
func Stop(ctx context.Context) <-chan struct{} {
	c, _ := ctx.Value(stopKey{}).(<-chan struct{})
	return c
}
