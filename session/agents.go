package session

import "encoding/json"

// AgentsKey is the state-bag key under which agent runs record which agent
// answered which part of a session, when its agents hand turns over to
// each other (or a session already records it): a JSON array of
// [AgentSpan], each naming the agent that answers from one message index
// of the history on, in order. Every store keeps it with the turn that
// set it, as it keeps any state; a session without it (an older one, or
// one agent alone) names no agent.
const AgentsKey = "agcore.agents"

// AgentSpan says that Agent answered the session's messages from index
// From on (up to the next span's From).
type AgentSpan struct {
	From  int    `json:"from"`
	Agent string `json:"agent"`
}

// Agents returns the spans recorded under AgentsKey; nil when there are
// none, or when the value does not decode.
func Agents(s *Session) []AgentSpan {
	raw := s.State[AgentsKey]
	if raw == nil {
		return nil
	}
	var spans []AgentSpan
	if json.Unmarshal(raw, &spans) != nil {
		return nil
	}
	return spans
}

// AgentAt returns the agent that answered message i of the history
// according to spans (Agents); "" when none is recorded for it.
func AgentAt(spans []AgentSpan, i int) string {
	agent := ""
	for _, sp := range spans {
		if sp.From > i {
			break
		}
		agent = sp.Agent
	}
	return agent
}

// RecordAgent records in s's state bag that agent answers from message
// index from on; nothing changes when the last recorded span already names
// agent.
func RecordAgent(s *Session, from int, agent string) error {
	spans := Agents(s)
	if n := len(spans); n > 0 && spans[n-1].Agent == agent {
		return nil
	}
	return SetState(s, AgentsKey, append(spans, AgentSpan{From: from, Agent: agent}))
}

// ParentKey is the state-bag key under which a sub-agent's session (an
// agent run as another agent's tool) names the run that called it: a
// [Parent].
const ParentKey = "agcore.parent"

// Parent is the calling run a sub-agent's session records under
// ParentKey.
type Parent struct {
	Session    string `json:"session,omitempty"` // the caller's session; "" without one
	RunID      string `json:"run_id"`            // the caller's run: the id of its stored turn
	ToolCallID string `json:"tool_call_id"`      // the call that ran the sub-agent
	Agent      string `json:"agent"`             // the calling agent's Name
}
