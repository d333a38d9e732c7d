package budget

import (
	"context"
	"errors"
	"iter"
	"math"
	"slices"
	"sync"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/usage"
)

// Quota is a limit shared beyond one [Meter]: a principal's quota kept in
// a store that several processes use. Reserve takes the worst case of a
// call before it is sent; the returned settle function, called once the
// call is over, replaces it with what the call actually spent. A Quota
// must be safe for concurrent use.
type Quota interface {
	// Reserve takes worst from the quota, or returns an *ExceededError
	// (ScopePrincipal) when worst could cross it; priced says whether
	// worst's cost is known. settle is never nil when err is nil.
	Reserve(ctx context.Context, worst Spend, priced bool) (settle func(ctx context.Context, actual Spend) error, err error)
	// Left returns what remains of the quota's limits (the tightest of
	// its periods).
	Left(ctx context.Context) (Left, error)
}

// Meter keeps the limits of one run: its own, its session's and its
// principal's. Its [Meter.Middleware] checks each model call before it is
// sent and counts what it spent. Make one per run (the agent does); it is
// safe for concurrent use (sub-agents of one run).
type Meter struct {
	// Run limits the run's own model calls.
	Run Limits
	// Session limits the session: SessionSpent (what its stored turns
	// spent before the run) plus the run's calls.
	Session      Limits
	SessionSpent Spend
	// Quota, when not nil, is the principal's limit, reserved before each
	// call and settled after it.
	Quota Quota
	// Policy counts requests (compact.Policy.Count): the agent's budget
	// policy, whose memory of recent requests makes counting a request it
	// has just fitted cheap. Nil counts with a policy of its own.
	Policy *compact.Policy
	// Parent, when not nil, is the meter of the run this one runs inside
	// (an agent called as a tool): each call is checked against it too,
	// and counted in it, so nested runs add up in the parent's limits.
	Parent *Meter

	once  sync.Once
	mu    sync.Mutex
	spent Spend
	calls int
	err   *ExceededError
	scale float64 // the most input tokens a provider reported per token counted, when over 1
}

// Child returns a meter for a run nested in m's run (a sub-agent), with
// limits of its own: its calls count in m too.
func (m *Meter) Child(run Limits) *Meter {
	return &Meter{Run: run, Parent: m, Policy: m.Policy}
}

// Spent returns what the run's model calls spent so far.
func (m *Meter) Spent() Spend {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.spent
}

// Calls returns how many model calls the meter let through.
func (m *Meter) Calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

// Err returns the refusal that stopped a call of the run, or nil.
func (m *Meter) Err() *ExceededError {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Active reports whether m has a limit to keep (its own or an ancestor's).
func (m *Meter) Active() bool {
	for x := m; x != nil; x = x.Parent {
		if !x.Run.IsZero() || !x.Session.IsZero() || x.Quota != nil {
			return true
		}
	}
	return false
}

// Remaining is what is left of a run's limits after what it spent: a nil
// scope has no limits.
type Remaining struct {
	Run       *Left `json:"run,omitempty"`
	Session   *Left `json:"session,omitempty"`
	Principal *Left `json:"principal,omitempty"`
}

// Remaining returns what is left of the run's and the session's limits;
// the principal's quota is read from its store (ctx bounds the read; a
// failed read leaves it out).
func (m *Meter) Remaining(ctx context.Context) Remaining {
	var r Remaining
	spent := m.Spent()
	if !m.Run.IsZero() {
		l := m.Run.Left(spent)
		r.Run = &l
	}
	if !m.Session.IsZero() {
		s := m.SessionSpent
		s.Add(spent)
		l := m.Session.Left(s)
		r.Session = &l
	}
	if m.Quota != nil {
		if l, err := m.Quota.Left(ctx); err == nil {
			r.Principal = &l
		}
	}
	return r
}

// check refuses a call whose worst case could cross a limit of m or of
// an ancestor; it records the refusal in each meter it applies to.
func (m *Meter) check(worst Spend, priced bool) *ExceededError {
	for x := m; x != nil; x = x.Parent {
		x.mu.Lock()
		e := x.Run.Check(ScopeRun, x.spent, worst, priced)
		if e == nil {
			s := x.SessionSpent
			s.Add(x.spent)
			e = x.Session.Check(ScopeSession, s, worst, priced)
		}
		x.mu.Unlock()
		if e != nil {
			m.refuse(e)
			return e
		}
	}
	return nil
}

// refuse records e in m and its ancestors (the first refusal stays).
func (m *Meter) refuse(e *ExceededError) {
	for x := m; x != nil; x = x.Parent {
		x.mu.Lock()
		if x.err == nil {
			x.err = e
		}
		x.mu.Unlock()
	}
}

// charge counts a call's spend in m and its ancestors.
func (m *Meter) charge(s Spend) {
	for x := m; x != nil; x = x.Parent {
		x.mu.Lock()
		x.spent.Add(s)
		x.calls++
		x.mu.Unlock()
	}
}

// scaled returns the input tokens a request counted as n may really hold:
// n raised by the most the provider has reported above the count, per
// token, in this run's calls (an estimating counter's error).
func (m *Meter) scaled(n int) int {
	m.mu.Lock()
	scale := m.scale
	m.mu.Unlock()
	if scale <= 1 {
		return n
	}
	return int(math.Ceil(float64(n) * scale))
}

// calibrate learns from a call counted as counted whose provider reported
// reported input tokens.
func (m *Meter) calibrate(counted, reported int) {
	if counted <= 0 || reported <= counted {
		return
	}
	r := float64(reported) / float64(counted)
	m.mu.Lock()
	m.scale = max(m.scale, r)
	m.mu.Unlock()
}

func (m *Meter) policy() *compact.Policy {
	m.once.Do(func() {
		if m.Policy == nil {
			m.Policy = &compact.Policy{}
		}
	})
	return m.Policy
}

// Middleware returns the model middleware that keeps m's limits: put it
// inside the budget policy (compact.Guard), so that what it counts is
// what is sent, and outside retries, so that a call is checked once
// however often it is retried. A call that could cross a limit is not
// sent: it fails with an *ExceededError (a stream's only item).
func (m *Meter) Middleware() func(llm.Model) llm.Model {
	return func(next llm.Model) llm.Model { return &metered{m: m, next: next} }
}

type metered struct {
	m    *Meter
	next llm.Model
}

// Info returns the wrapped model's Info.
func (x *metered) Info() llm.ModelInfo { return x.next.Info() }

// call is one admitted model call: its worst case and the reservations to
// settle.
type call struct {
	info    llm.ModelInfo
	counted int // the request's input tokens as counted
	worst   Spend
	input   Spend // the worst case's input part: what a failed call is charged
	settles []func(context.Context, Spend) error
}

// admit counts req, checks every limit and reserves the quotas.
func (x *metered) admit(ctx context.Context, req *llm.Request) (*call, error) {
	m := x.m
	info := x.next.Info()
	counted := m.policy().Count(req, info)
	in := m.scaled(counted)
	worst, priced := worstSpend(info, in, outputCap(req, info, in))
	if e := m.check(worst, priced); e != nil {
		return nil, e
	}
	c := &call{info: info, worst: worst, counted: counted}
	c.input, _ = worstSpend(info, in, 0)
	var reserved []Quota
	for q := m; q != nil; q = q.Parent {
		if q.Quota == nil || slices.Contains(reserved, q.Quota) {
			continue // none, or one a nearer meter of the chain already holds
		}
		reserved = append(reserved, q.Quota)
		settle, err := q.Quota.Reserve(ctx, worst, priced)
		if err != nil {
			c.release(ctx, Spend{})
			var e *ExceededError
			if errors.As(err, &e) {
				m.refuse(e)
			}
			return nil, err
		}
		c.settles = append(c.settles, settle)
	}
	return c, nil
}

// done charges what the call spent: the usage the provider reported
// (priced with the model's price), the worst case when it reported none,
// or the input alone when the call failed.
func (x *metered) done(ctx context.Context, c *call, resp *llm.Response) {
	var s Spend
	switch {
	case resp == nil:
		s = c.input
	case resp.Usage.Total() == 0:
		s = c.worst
	default:
		s.Usage = resp.Usage
		s.CostUSD, _ = usage.CostOf(c.info, resp.Usage)
		x.m.calibrate(c.counted, resp.Usage.InputTokens)
	}
	x.m.charge(s)
	c.release(ctx, s)
}

func (c *call) release(ctx context.Context, s Spend) {
	ctx = context.WithoutCancel(ctx)
	for _, settle := range c.settles {
		_ = settle(ctx, s) // a lost settlement keeps the worst case reserved: never over
	}
}

// Generate checks req, then sends it.
func (x *metered) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(x.wrap(ctx, req, llm.Next{Model: x.next, Blocking: true}))
}

// Stream checks req when ranging starts, then streams the call.
func (x *metered) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return x.wrap(ctx, req, llm.Next{Model: x.next})
}

// wrap is the meter, for both calls: req admitted, sent, and what it
// spent charged when the call ends, whichever way.
func (x *metered) wrap(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		c, err := x.admit(ctx, req)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		var resp *llm.Response
		defer func() { x.done(ctx, c, resp) }()
		for ev, err := range next.Stream(ctx, req) {
			if err == nil && ev.Type == llm.EventComplete {
				resp = ev.Response
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

type ctxKey struct{}

// NewContext returns ctx carrying m: the agent gives each run's tool calls
// the run's meter, so that a run started inside a tool call (an agent
// used as a tool) counts in it ([FromContext]).
func NewContext(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, ctxKey{}, m)
}

// FromContext returns the meter ctx carries, or nil.
func FromContext(ctx context.Context) *Meter {
	m, _ := ctx.Value(ctxKey{}).(*Meter)
	return m
}

type quotaKey struct{}

// WithQuota returns ctx carrying q, the quota of the principal a request
// is made for: every agent run in ctx keeps it (the one way a run is
// given a quota; a run nested in another, an agent called as a tool,
// keeps it through the outer run's meter). A server sets it once per
// request, for every entry point (serve.QuotaScope).
func WithQuota(ctx context.Context, q Quota) context.Context {
	return context.WithValue(ctx, quotaKey{}, q)
}

// QuotaFrom returns the quota ctx carries, or nil.
func QuotaFrom(ctx context.Context) Quota {
	q, _ := ctx.Value(quotaKey{}).(Quota)
	return q
}
