package eval

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// Target is what a set runs against: an *agent.Agent (or anything that
// runs turns the same way).
type Target interface {
	RunStream(ctx context.Context, msgs []llm.Message, opts *agent.RunOptions) *agent.Stream
}

// Options adjust a Run. The zero value (or nil) scores with [Default],
// runs each case once, as many at a time as there are CPUs.
type Options struct {
	// Scorers score each turn; nil means Default(nil).
	Scorers []Scorer
	// Concurrency bounds the cases run at once; 0 means GOMAXPROCS.
	Concurrency int
	// Repeat runs each case this many times (0 is 1): the case report
	// gives the pass rate and each score's spread.
	Repeat int
	// MinPassRate is the share of a case's runs that must pass for the
	// case to pass; 0 means 1 (every run).
	MinPassRate float64
	// Thresholds replace every case's thresholds, by scorer name.
	Thresholds map[string]float64
	// TurnTimeout bounds each turn; 0 for none.
	TurnTimeout time.Duration
	// OnCase, when set, is told of each case as it ends (from the
	// goroutine that ran it, one call at a time).
	OnCase func(CaseReport)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Observed is what one turn did.
type Observed struct {
	Input string `json:"input"`
	// Calls are the turn's tool calls in the order they were made: its
	// agents' (after a handoff, the agent handed to's), and its
	// sub-agents', each marked with the agent that made it.
	Calls []ToolCall `json:"calls,omitempty"`
	// Answer is the final answer's text; Agent, the agent that gave it.
	Answer string `json:"answer"`
	Agent  string `json:"agent,omitempty"`
	// Usage and Cost are the turn's, its sub-agents' included; Cost is
	// meaningful only when CostKnown.
	Usage     llm.Usage `json:"usage"`
	Cost      float64   `json:"cost_usd"`
	CostKnown bool      `json:"cost_known"`
	// Steps counts the model calls (the assistant messages of every
	// agent's transcript, sub-agents' included).
	Steps int      `json:"steps"`
	Took  Duration `json:"latency"`
	// Error is why the turn failed; "" when it finished.
	Error  string           `json:"error,omitempty"`
	Finish llm.FinishReason `json:"finish_reason,omitempty"`
}

// ToolCall is a call a turn made, by the agent that made it.
type ToolCall struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Args  json.RawMessage `json:"args,omitempty"`
	Agent string          `json:"agent,omitempty"`
	// Parent is the id of the call that ran the sub-agent that made this
	// call; "" for the turn's own agents.
	Parent  string `json:"parent,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// Output is the result's text, cut at 1 KiB.
	Output string `json:"output,omitempty"`
}

// Run runs every case of set against target and scores it. Each case runs
// in a fresh in-memory session (its Initial state, if any): the agent's
// store is not used. A case with a record runs offline: target's model
// must be an [Offline] model, which answers from the record the run's
// context carries; a case with a record whose calls were not asked for
// fails. The error is only for a set that does not check or a cancelled
// context; a failing case is in the report.
func Run(ctx context.Context, target Target, set *Set, opts *Options) (*Report, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if err := set.Check(); err != nil {
		return nil, err
	}
	if o.Scorers == nil {
		o.Scorers = Default(nil)
	}
	if o.Repeat < 1 {
		o.Repeat = 1
	}
	if o.MinPassRate <= 0 {
		o.MinPassRate = 1
	}
	if o.Concurrency < 1 {
		o.Concurrency = runtime.GOMAXPROCS(0)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	rep := &Report{Set: set.ID, Repeat: o.Repeat, Started: now(), Cases: make([]CaseReport, len(set.Cases))}
	type job struct{ c, r int }
	runs := make([][]RunReport, len(set.Cases))
	for i := range runs {
		runs[i] = make([]RunReport, o.Repeat)
	}
	left := make([]int, len(set.Cases))
	for i := range left {
		left[i] = o.Repeat
	}
	jobs := make(chan job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range min(o.Concurrency, len(set.Cases)*o.Repeat) {
		wg.Go(func() {
			for j := range jobs {
				c := &set.Cases[j.c]
				r := runCase(ctx, target, set, c, &o, now)
				mu.Lock()
				runs[j.c][j.r] = r
				left[j.c]--
				if left[j.c] == 0 {
					rep.Cases[j.c] = summarize(set, c, runs[j.c], &o)
					if o.OnCase != nil {
						o.OnCase(rep.Cases[j.c])
					}
				}
				mu.Unlock()
			}
		})
	}
feed:
	for r := range o.Repeat {
		for c := range set.Cases {
			select {
			case jobs <- job{c, r}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	rep.Took = Duration(now().Sub(rep.Started))
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	rep.total()
	return rep, nil
}

// runCase runs c once and scores it.
func runCase(ctx context.Context, target Target, set *Set, c *Case, o *Options, now func() time.Time) RunReport {
	sess := &session.Session{}
	if c.Initial != nil {
		sess.Messages = slices.Clone(c.Initial.Messages)
		sess.State = maps.Clone(c.Initial.State)
	}
	var rm *replay.Model
	if c.Record != nil {
		rm = replay.NewModel(c.Record, replay.Options{})
		ctx = context.WithValue(ctx, recordKey{}, &caseRun{model: rm, rec: c.Record})
	}
	var out RunReport
	for _, t := range c.Turns {
		tctx, cancel := ctx, context.CancelFunc(func() {})
		if o.TurnTimeout > 0 {
			tctx, cancel = context.WithTimeout(ctx, o.TurnTimeout)
		}
		start := now()
		obs := observe(tctx, target, sess, t.Input)
		obs.Took = Duration(now().Sub(start))
		cancel()
		out.Turns = append(out.Turns, obs)
		if obs.Error != "" {
			out.Error = obs.Error
			break
		}
	}
	if rm != nil {
		if rm.Calls() == 0 && out.Error == "" {
			out.Error = "the case has a record but the agent asked it nothing: build the agent over eval.Offline"
		}
		rm.Finish()
		for _, d := range rm.Drifts() {
			out.Drift = append(out.Drift, d.String())
		}
		if out.Drift == nil {
			out.Drift = []string{}
		}
	}
	for _, obs := range out.Turns {
		out.Usage.Add(obs.Usage)
		out.Cost += obs.Cost
		out.Took += obs.Took
	}
	out.Scores = score(ctx, set, c, &out, o)
	out.Pass = out.Error == ""
	for _, s := range out.Scores {
		out.Pass = out.Pass && s.Pass
	}
	return out
}

// maxOutput bounds the tool output a report keeps per call.
const maxOutput = 1024

// observe runs one turn and gathers what it did from its updates.
func observe(ctx context.Context, target Target, sess *session.Session, input string) Observed {
	obs := Observed{Input: input}
	st := target.RunStream(ctx, []llm.Message{llm.UserText(input)}, &agent.RunOptions{Session: sess})
	calls := map[string]int{} // call id → index in obs.Calls
	for u, err := range st.Updates() {
		if err != nil {
			break // Wait returns it
		}
		collect(&obs, calls, u, "")
	}
	resp, err := st.Wait()
	if resp != nil {
		obs.Answer = resp.Text()
		obs.Agent = resp.Agent
		obs.Usage = resp.Usage
		obs.Cost, obs.CostKnown = resp.CostUSD, resp.CostKnown
		obs.Finish = resp.FinishReason
		obs.Steps += steps(resp.Messages)
	}
	if err != nil {
		obs.Error = err.Error()
	}
	return obs
}

// collect adds what u says to obs: tool calls (a sub-agent's under the
// call that ran it), their results, sub-agents' model calls.
func collect(obs *Observed, calls map[string]int, u agent.Update, parent string) {
	switch u.Kind {
	case agent.UpdateToolCall:
		calls[u.ToolCall.ID] = len(obs.Calls)
		obs.Calls = append(obs.Calls, ToolCall{ID: u.ToolCall.ID, Name: u.ToolCall.Name, Args: u.ToolCall.Input, Agent: u.Agent, Parent: parent})
	case agent.UpdateToolResult:
		if u.ToolResult == nil {
			return
		}
		for _, b := range u.ToolResult.Content {
			if r, ok := b.(llm.ToolResult); ok {
				if i, ok := calls[r.ToolUseID]; ok {
					obs.Calls[i].IsError = r.IsError
					obs.Calls[i].Output = clip(llm.Message{Role: llm.RoleTool, Content: r.Content}.Text(), maxOutput)
				}
			}
		}
	case agent.UpdateSubAgent:
		if u.Sub == nil {
			return
		}
		if u.Sub.Kind == agent.UpdateFinish && u.Sub.Response != nil {
			obs.Steps += steps(u.Sub.Response.Messages)
			return
		}
		collect(obs, calls, *u.Sub, u.ToolCall.ID)
	}
}

// steps counts the model calls of a transcript: its assistant messages.
func steps(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

// ErrNoRecord is the error of a model call an [Offline] model cannot
// answer: the run's case has no record, and there is no live model.
var ErrNoRecord = errors.New("eval: the case has no record to answer from and there is no live model")

type recordKey struct{}

// caseRun is what a run of a case with a record carries in its context:
// the model answering from the record, and the record's tool results
// (RecordedTools), made on first use.
type caseRun struct {
	model  *replay.Model
	rec    *replay.Record
	once   sync.Once
	toolMW tool.Middleware
}

func modelOf(ctx context.Context) *replay.Model {
	if cr, _ := ctx.Value(recordKey{}).(*caseRun); cr != nil {
		return cr.model
	}
	return nil
}

// RecordedTools returns the tool middleware (for
// agent.Config.ToolMiddleware) that answers the calls of the named tools
// ("all" for every tool the record has) from the record of the case the
// run belongs to (replay.Record.ToolMiddleware, as agcore replay
// --recorded-tools does), so an offline case runs no tool that reaches
// outside; calls in a case without a record, and of other tools, run for
// real.
func RecordedTools(names ...string) tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call tool.Call) (string, error) {
			cr, _ := ctx.Value(recordKey{}).(*caseRun)
			if cr == nil {
				return next(ctx, call)
			}
			cr.once.Do(func() {
				n := names
				if slices.Contains(n, "all") {
					n = cr.rec.ToolNames()
				}
				cr.toolMW = cr.rec.ToolMiddleware(n...)
			})
			return cr.toolMW(next)(ctx, call)
		}
	}
}

// Offline returns a model that answers each call of a case that has a
// record (Case.Record) from that record, as a replay.Model in lenient
// mode (the report lists the drift), and every other call with live; nil
// live fails them with ErrNoRecord. Build the agent a set runs against
// over it, with retries off (agent.Config.Retry.MaxAttempts = 1), to run
// cases offline. Info is live's, or info when live is nil.
func Offline(live llm.Model, info llm.ModelInfo) llm.Model {
	return &offline{live: live, info: info}
}

type offline struct {
	live llm.Model
	info llm.ModelInfo
}

// Info is the live model's, else the info Offline was given.
func (m *offline) Info() llm.ModelInfo {
	if m.live != nil {
		return m.live.Info()
	}
	return m.info
}

// Generate answers from the run's record, else asks the live model.
func (m *offline) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	if rm := modelOf(ctx); rm != nil {
		return rm.Generate(ctx, req)
	}
	if m.live == nil {
		return nil, ErrNoRecord
	}
	return m.live.Generate(ctx, req)
}

// Stream answers from the run's record, else streams the live model.
func (m *offline) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	if rm := modelOf(ctx); rm != nil {
		return rm.Stream(ctx, req)
	}
	if m.live == nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, ErrNoRecord) }
	}
	return m.live.Stream(ctx, req)
}
