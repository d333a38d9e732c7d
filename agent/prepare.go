package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// run is one run's state from pre-invocation to persistence.
type run struct {
	agent *Agent
	id    string
	opts  *RunOptions
	input []llm.Message // the caller's messages, system-role dropped

	sess        *session.Session           // working copy; nil for a run without a session
	stateBefore map[string]json.RawMessage // the state bag as loaded
	unlock      func()                     // releases the session; nil without one
	inv         *Invocation
	req         *llm.Request
}

// prepare is the pre-invocation phase: it takes the session, asks the
// providers, assembles and compresses the messages, records the request's
// prefix hashes and merges the tools. On error nothing is held.
func (a *Agent) prepare(ctx context.Context, msgs []llm.Message, opts *RunOptions) (*run, error) {
	if a.Model == nil {
		return nil, ErrNoModel
	}
	r := &run{agent: a, id: a.newID(), opts: opts, input: dropSystem(msgs)}
	if err := r.openSession(ctx); err != nil {
		return nil, err
	}

	var (
		instructions  []string
		providerMsgs  []llm.Message
		providerTools []tool.Tool
	)
	if opts.Instructions != "" {
		instructions = append(instructions, opts.Instructions)
	} else if a.Instructions != "" {
		instructions = append(instructions, a.Instructions)
	}
	if r.sess != nil {
		r.inv = &Invocation{Agent: a, RunID: r.id, Session: r.sess, Messages: r.input, Options: opts}
		for _, p := range a.Providers {
			inj, err := p.Invoking(ctx, r.inv)
			if err != nil {
				a.report(ctx, "agent: context provider failed; skipped", &ProviderError{Provider: providerName(p), Phase: "invoking", RunID: r.id, Err: err}, slog.String("run_id", r.id))
				continue
			}
			if inj.Instructions != "" {
				instructions = append(instructions, inj.Instructions)
			}
			if inj.ReplaceMessages {
				providerMsgs = append(providerMsgs[:0:0], inj.Messages...)
			} else {
				providerMsgs = append(providerMsgs, inj.Messages...)
			}
			providerTools = append(providerTools, inj.Tools...)
		}
	}

	var history []llm.Message
	if r.sess != nil {
		// The agent never stores a system message, but a caller's
		// in-memory session may hold one: there is one system message.
		history = dropSystem(r.sess.Messages)
	}
	providerMsgs = dropSystem(providerMsgs)
	full := make([]llm.Message, 0, 1+len(history)+len(providerMsgs)+len(r.input))
	if len(instructions) > 0 {
		full = append(full, llm.SystemText(strings.Join(instructions, "\n\n")))
	}
	full = append(full, history...)
	full = append(full, providerMsgs...)
	full = append(full, r.input...)

	tools := mergeTools(a.Tools, opts.Tools, providerTools)
	full = a.compress(ctx, r.id, full, tools)

	if r.sess != nil {
		if err := r.sess.TouchRequest(full); err != nil {
			a.logger().LogAttrs(ctx, slog.LevelWarn, "agent: request hashes not recorded", slog.String("agent", a.Name), slog.String("run_id", r.id), slog.Any("error", err))
		}
	}

	r.req = &llm.Request{
		Messages:       full,
		Tools:          tools,
		ToolChoice:     opts.ToolChoice,
		MaxTokens:      opts.MaxTokens,
		Temperature:    opts.Temperature,
		ResponseFormat: opts.ResponseFormat,
		Metadata:       opts.Metadata,
	}
	return r, nil
}

// openSession resolves the run's session, waits for earlier runs on it to
// finish, and loads its history.
func (r *run) openSession(ctx context.Context) error {
	a, opts := r.agent, r.opts
	var key any
	switch {
	case opts.Session != nil:
		key = any(opts.Session)
		if opts.Session.ID != "" {
			key = opts.Session.ID
		}
	case opts.SessionID != "":
		if err := session.ValidateID(opts.SessionID); err != nil {
			return fmt.Errorf("agent: %w", err)
		}
		key = opts.SessionID
	default:
		return nil
	}
	unlock, err := a.locks.lock(ctx, key)
	if err != nil {
		return fmt.Errorf("agent: waiting for session %v: %w", key, err)
	}
	switch {
	case opts.Session != nil:
		r.sess = opts.Session.Clone()
	case a.Store != nil:
		s, err := a.Store.Load(ctx, opts.SessionID)
		if errors.Is(err, session.ErrNotFound) {
			s, err = &session.Session{ID: opts.SessionID}, nil
		}
		if err != nil {
			unlock()
			return fmt.Errorf("agent: loading session %q: %w", opts.SessionID, err)
		}
		r.sess = s
	default:
		r.sess = &session.Session{ID: opts.SessionID}
	}
	r.stateBefore = maps.Clone(r.sess.State)
	r.unlock = unlock
	return nil
}

// compress is Phase 1.5: only with a strategy, a counter and known model
// limits, and only over budget; a failing strategy leaves msgs unchanged.
// The budget is the model's input budget less what the tool definitions
// take, since a strategy's budget covers messages only.
func (a *Agent) compress(ctx context.Context, runID string, msgs []llm.Message, tools []llm.ToolDefinition) []llm.Message {
	if a.Compression == nil || a.Counter == nil {
		return msgs
	}
	info := a.modelInfo()
	if !info.Known() {
		return msgs
	}
	budget := info.InputBudget()
	if len(tools) > 0 {
		budget = max(budget-a.Counter.CountTools(tools), 0)
	}
	n := a.Counter.CountMessages(msgs)
	if n <= budget {
		return msgs
	}
	out, err := a.Compression.Compress(ctx, msgs, budget, a.Counter)
	if err != nil {
		a.logger().LogAttrs(ctx, slog.LevelWarn, "agent: compression failed; using the original messages",
			slog.String("agent", a.Name), slog.String("run_id", runID), slog.Int("tokens", n), slog.Int("budget", budget), slog.Any("error", err))
		return msgs
	}
	return out
}

// dropSystem returns msgs without system-role messages (msgs itself when
// it has none).
func dropSystem(msgs []llm.Message) []llm.Message {
	for i, m := range msgs {
		if m.Role == llm.RoleSystem {
			out := append(make([]llm.Message, 0, len(msgs)-1), msgs[:i]...)
			for _, m := range msgs[i+1:] {
				if m.Role != llm.RoleSystem {
					out = append(out, m)
				}
			}
			return out
		}
	}
	return msgs
}

// mergeTools returns the definitions of every group's tools in order,
// skipping a name already taken by an earlier tool: the agent's own win.
func mergeTools(groups ...[]tool.Tool) []llm.ToolDefinition {
	n := 0
	for _, g := range groups {
		n += len(g)
	}
	if n == 0 {
		return nil
	}
	defs := make([]llm.ToolDefinition, 0, n)
	seen := make(map[string]struct{}, n)
	for _, g := range groups {
		for _, t := range g {
			name := t.Name()
			if _, dup := seen[name]; dup {
				continue
			}
			seen[name] = struct{}{}
			defs = append(defs, tool.Definition(t))
		}
	}
	return defs
}
