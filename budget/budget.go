package budget

import (
	"fmt"
	"strconv"

	"github.com/agcore/agcore/llm"
)

// Limits are spending limits of one scope. A zero field sets no limit on
// its kind; the zero value limits nothing.
type Limits struct {
	// InputTokens is the most input tokens (cached ones included).
	InputTokens int `json:"input_tokens,omitempty"`
	// OutputTokens is the most output tokens (reasoning included).
	OutputTokens int `json:"output_tokens,omitempty"`
	// Tokens is the most input plus output tokens.
	Tokens int `json:"tokens,omitempty"`
	// CostUSD is the most cost, in USD, at the model's catalog prices
	// (cache reads and writes at their own prices).
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// IsZero reports whether l limits nothing.
func (l Limits) IsZero() bool { return l == Limits{} }

// Spend is what model calls used: their tokens and their cost.
type Spend struct {
	Usage   llm.Usage `json:"usage"`
	CostUSD float64   `json:"cost_usd"`
}

// Add adds o to s.
func (s *Spend) Add(o Spend) {
	s.Usage.Add(o.Usage)
	s.CostUSD += o.CostUSD
}

// Sub returns s less o (a reservation settled with less than it took).
func (s Spend) Sub(o Spend) Spend {
	s.Usage.InputTokens -= o.Usage.InputTokens
	s.Usage.OutputTokens -= o.Usage.OutputTokens
	s.Usage.CachedInputTokens -= o.Usage.CachedInputTokens
	s.Usage.CacheCreationTokens -= o.Usage.CacheCreationTokens
	s.Usage.ReasoningTokens -= o.Usage.ReasoningTokens
	s.CostUSD -= o.CostUSD
	return s
}

// Scope says whose limit an [ExceededError] names.
type Scope string

// The scopes of limits.
const (
	ScopeRun       Scope = "run"       // one run (one turn of an agent)
	ScopeSession   Scope = "session"   // every stored turn of a session, and the running one
	ScopePrincipal Scope = "principal" // a server's caller, across sessions, replicas and restarts
)

// Kind says what a limit counts.
type Kind string

// The kinds of limits.
const (
	KindInputTokens  Kind = "input_tokens"
	KindOutputTokens Kind = "output_tokens"
	KindTokens       Kind = "tokens"
	KindCost         Kind = "cost"
)

// ExceededError is the error of a model call that was not sent because it
// could have crossed a limit. It matches llm.ErrBudgetExceeded
// (errors.Is).
type ExceededError struct {
	Scope Scope
	Kind  Kind
	// Period is "day" for a daily quota, "" for a limit on everything.
	Period string
	// Limit is the limit, Used what the scope had spent before the call,
	// Next the most the refused call could have spent: tokens, or USD for
	// KindCost.
	Limit, Used, Next float64
	// Unpriced is set when the limit is on cost and the model has no
	// price: no call's cost can be bounded.
	Unpriced bool
}

// Error names the limit, what was spent and what the call could have
// spent.
func (e *ExceededError) Error() string {
	what := string(e.Scope)
	switch e.Period {
	case "":
	case "day":
		what += " daily"
	default:
		what += " " + e.Period
	}
	if e.Unpriced {
		return fmt.Sprintf("budget: the %s cost limit of %s cannot be kept: the model has no price", what, e.format(e.Limit))
	}
	return fmt.Sprintf("budget: the %s %s limit of %s would be crossed: %s spent, the next model call could use up to %s",
		what, kindName(e.Kind), e.format(e.Limit), e.format(e.Used), e.format(e.Next))
}

// Is reports whether target is llm.ErrBudgetExceeded.
func (e *ExceededError) Is(target error) bool { return target == llm.ErrBudgetExceeded }

func (e *ExceededError) format(v float64) string {
	if e.Kind == KindCost {
		return "$" + strconv.FormatFloat(v, 'f', 4, 64)
	}
	return strconv.FormatInt(int64(v), 10) + " tokens"
}

func kindName(k Kind) string {
	switch k {
	case KindInputTokens:
		return "input token"
	case KindOutputTokens:
		return "output token"
	case KindTokens:
		return "token"
	case KindCost:
		return "cost"
	}
	return string(k)
}

// Check returns the first limit of l that spent plus next would cross,
// as an *ExceededError of scope, or nil. priced says whether next's cost
// is known; a cost limit with an unknown cost is crossed.
func (l Limits) Check(scope Scope, spent, next Spend, priced bool) *ExceededError {
	if l.IsZero() {
		return nil
	}
	in := func(limit, used, n int, k Kind) *ExceededError {
		if limit > 0 && used+n > limit {
			return &ExceededError{Scope: scope, Kind: k, Limit: float64(limit), Used: float64(used), Next: float64(n)}
		}
		return nil
	}
	if e := in(l.InputTokens, spent.Usage.InputTokens, next.Usage.InputTokens, KindInputTokens); e != nil {
		return e
	}
	if e := in(l.OutputTokens, spent.Usage.OutputTokens, next.Usage.OutputTokens, KindOutputTokens); e != nil {
		return e
	}
	if e := in(l.Tokens, spent.Usage.Total(), next.Usage.Total(), KindTokens); e != nil {
		return e
	}
	if l.CostUSD > 0 {
		if !priced {
			return &ExceededError{Scope: scope, Kind: KindCost, Limit: l.CostUSD, Used: spent.CostUSD, Unpriced: true}
		}
		if spent.CostUSD+next.CostUSD > l.CostUSD {
			return &ExceededError{Scope: scope, Kind: KindCost, Limit: l.CostUSD, Used: spent.CostUSD, Next: next.CostUSD}
		}
	}
	return nil
}

// Left is what remains of limits: a nil field has no limit.
type Left struct {
	InputTokens  *int     `json:"input_tokens,omitempty"`
	OutputTokens *int     `json:"output_tokens,omitempty"`
	Tokens       *int     `json:"tokens,omitempty"`
	CostUSD      *float64 `json:"cost_usd,omitempty"`
}

// Left returns what remains of l after spent (never below zero).
func (l Limits) Left(spent Spend) Left {
	var out Left
	left := func(limit, used int) *int {
		if limit <= 0 {
			return nil
		}
		v := max(limit-used, 0)
		return &v
	}
	out.InputTokens = left(l.InputTokens, spent.Usage.InputTokens)
	out.OutputTokens = left(l.OutputTokens, spent.Usage.OutputTokens)
	out.Tokens = left(l.Tokens, spent.Usage.Total())
	if l.CostUSD > 0 {
		v := max(l.CostUSD-spent.CostUSD, 0)
		out.CostUSD = &v
	}
	return out
}

// worstSpend returns the most a call described by info could spend with input
// tokens of input and an output cap of output tokens, and whether its
// cost is known (info has a price). The input is priced at the dearer of
// the uncached and cache-write rates, at the long-context tier when input
// is over its threshold.
func worstSpend(info llm.ModelInfo, input, output int) (Spend, bool) {
	s := Spend{Usage: llm.Usage{InputTokens: input, OutputTokens: output}}
	p := info.Price
	if p == nil {
		return s, false
	}
	price := *p
	if price.LongContext != nil && input > price.LongContextThreshold {
		price = *price.LongContext
	}
	s.CostUSD = (float64(input)*max(price.Input, price.CacheWrite) + float64(output)*price.Output) / 1e6
	return s, true
}

// outputCap returns the most output tokens a call of req to a model
// described by info may produce: req.MaxTokens, else info's
// MaxOutputTokens, else what the context window leaves after input, else
// 0 (unknown).
func outputCap(req *llm.Request, info llm.ModelInfo, input int) int {
	switch {
	case req.MaxTokens > 0:
		return req.MaxTokens
	case info.MaxOutputTokens > 0:
		return info.MaxOutputTokens
	case info.ContextWindow > input:
		return info.ContextWindow - input
	}
	return 0
}
