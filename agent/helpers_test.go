package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeStore is a session.Store that records appends and can be made to fail
// or to block.
type fakeStore struct {
	mu       sync.Mutex
	sessions map[string]*session.Session
	turns    map[string]bool // "session/turn" already stored
	appends  []session.Turn  // every Append call, in order
	fail     error           // Append fails with it
	gate     chan struct{}   // when set, Append waits for it
}

func newStore() *fakeStore {
	return &fakeStore{sessions: map[string]*session.Session{}, turns: map[string]bool{}}
}

func (s *fakeStore) Create(_ context.Context, id string) (*session.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[id]; ok {
		return nil, session.ErrExists
	}
	s.sessions[id] = &session.Session{ID: id}
	return s.sessions[id].Clone(), nil
}

func (s *fakeStore) Load(_ context.Context, id string) (*session.Session, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", session.ErrNotFound, id)
	}
	return ss.Clone(), nil
}

func (s *fakeStore) Append(ctx context.Context, id string, t session.Turn) error {
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.appends = append(s.appends, t)
	if s.fail != nil {
		return s.fail
	}
	if s.turns[id+"/"+t.ID] {
		return nil
	}
	s.turns[id+"/"+t.ID] = true
	ss, ok := s.sessions[id]
	if !ok {
		ss = &session.Session{ID: id}
		s.sessions[id] = ss
	}
	t.Messages = slices.Clone(t.Messages)
	ss.Apply(t)
	return nil
}

func (s *fakeStore) List(context.Context, session.ListOptions) (session.Page, error) {
	return session.Page{}, errors.New("not implemented")
}

func (s *fakeStore) Delete(context.Context, string) error { return errors.New("not implemented") }

func (s *fakeStore) appendCalls() []session.Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.appends)
}

func (s *fakeStore) session(t *testing.T, id string) *session.Session {
	t.Helper()
	ss, err := s.Load(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// provider is a context provider that records its calls in a shared log.
type provider struct {
	name       string
	inj        agent.Injection
	err        error // Invoking fails with it
	invokedErr error // Invoked fails with it
	log        *callLog
	invoking   func(inv *agent.Invocation) // runs during Invoking
	mu         sync.Mutex
	outcomes   []*agent.Outcome
}

func (p *provider) Name() string { return p.name }

func (p *provider) Invoking(_ context.Context, inv *agent.Invocation) (agent.Injection, error) {
	p.log.add(p.name + ".Invoking")
	if p.invoking != nil {
		p.invoking(inv)
	}
	return p.inj, p.err
}

func (p *provider) Invoked(_ context.Context, _ *agent.Invocation, out *agent.Outcome) error {
	p.log.add(p.name + ".Invoked")
	p.mu.Lock()
	p.outcomes = append(p.outcomes, out)
	p.mu.Unlock()
	return p.invokedErr
}

func (p *provider) lastOutcome(t *testing.T) *agent.Outcome {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.outcomes) == 0 {
		t.Fatalf("provider %s: Invoked never called", p.name)
	}
	return p.outcomes[len(p.outcomes)-1]
}

type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(s string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.calls = append(l.calls, s)
	l.mu.Unlock()
}

func (l *callLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// errSink collects what OnError receives.
type errSink struct {
	mu   sync.Mutex
	errs []error
}

func (s *errSink) hook(_ context.Context, err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

func (s *errSink) get() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.errs)
}

// logBuffer is a slog destination safe for concurrent writes.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// echoTool is a tool named name that answers with its name.
type echoTool struct{ name string }

func (e echoTool) Name() string                { return e.name }
func (e echoTool) Description() string         { return "the " + e.name + " tool" }
func (e echoTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (e echoTool) Invoke(context.Context, json.RawMessage) (string, error) {
	return e.name + " result", nil
}

var _ tool.Tool = echoTool{}

// ids returns an id source yielding run-1, run-2, ...
func ids() func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("run-%d", n)
	}
}

// texts returns the role and text of each message, for compact comparison.
func texts(msgs []llm.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role) + ":" + m.Text()
		if m.HasToolUse() {
			var names []string
			for _, tu := range m.ToolUses() {
				names = append(names, tu.Name)
			}
			out[i] += "[calls " + strings.Join(names, ",") + "]"
		}
	}
	return out
}

func user(text string) []llm.Message { return []llm.Message{llm.UserText(text)} }

// fixedClock is a clock.Clock stopped at one instant.
type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

func (c fixedClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// newAgent builds an agent with agent.New, failing the test on error.
func newAgent(t testing.TB, model llm.Model, cfg agent.Config) *agent.Agent {
	t.Helper()
	a, err := agent.New(model, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (s *fakeStore) LoadView(ctx context.Context, id string) (*session.Session, error) {
	return s.Load(ctx, id)
}
