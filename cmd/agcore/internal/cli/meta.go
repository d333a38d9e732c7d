package cli

import (
	"context"
	"strings"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/session"
)

// metaKey is the session state key where agcore keeps what it knows of a
// session beyond its messages: the model and provider of its last turn.
const metaKey = "agcore"

// sessionMeta is the value under metaKey.
type sessionMeta struct {
	Model    string `json:"model,omitempty"`
	Provider string `json:"provider,omitempty"`
}

// metaRecorder is a context provider that records the model and provider
// with every stored turn, for sessions list and show.
type metaRecorder struct{ meta sessionMeta }

// Name implements the provider's name for logs.
func (m *metaRecorder) Name() string { return "agcore-meta" }

// Invoking implements agent.ContextProvider: it adds nothing.
func (m *metaRecorder) Invoking(context.Context, *agent.Invocation) (agent.Injection, error) {
	return agent.Injection{}, nil
}

// Invoked implements agent.ContextProvider: the state goes with the turn
// when the turn is stored, and nowhere when it fails.
func (m *metaRecorder) Invoked(_ context.Context, inv *agent.Invocation, out *agent.Outcome) error {
	if out.Err != nil || inv.Session == nil {
		return nil
	}
	return session.SetState(inv.Session, metaKey, m.meta)
}

// metaOf returns what a session records of its model.
func metaOf(s *session.Session) sessionMeta {
	m, _, _ := session.GetState[sessionMeta](s, metaKey)
	return m
}

// clipTitle shortens a stored title (see session.Info) to n runes.
func clipTitle(t string, n int) string {
	r := []rune(t)
	if len(r) > n {
		return strings.TrimRight(string(r[:n-1]), " ") + "…"
	}
	return t
}
