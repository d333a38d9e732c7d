package usage

import (
	"slices"
	"sync"

	"github.com/agcore/agcore/llm"
)

// Turn is the usage and cost of one turn (one agent run or one call).
type Turn struct {
	Session string
	Model   string
	Usage   llm.Usage
	// CostUSD is the turn's price; meaningful only when Known.
	CostUSD float64
	// Known is false when the model has no price.
	Known bool
}

// Totals sums turns.
type Totals struct {
	Turns int
	Usage llm.Usage
	// CostUSD sums the turns whose cost was known.
	CostUSD float64
	// UnpricedTurns counts turns whose model had no price; their usage is
	// in Usage and UnpricedUsage, their cost in nothing.
	UnpricedTurns int
	UnpricedUsage llm.Usage
}

// CostKnown reports whether every turn was priced, so CostUSD is the whole
// cost rather than a lower bound.
func (t Totals) CostKnown() bool { return t.UnpricedTurns == 0 }

func (t *Totals) add(turn Turn) {
	t.Turns++
	t.Usage.Add(turn.Usage)
	if turn.Known {
		t.CostUSD += turn.CostUSD
	} else {
		t.UnpricedTurns++
		t.UnpricedUsage.Add(turn.Usage)
	}
}

// Tracker sums usage and cost per session, per model and overall. It has no
// prices of its own: it records the cost it is given ([Tracker.Add]) or the one
// a model's llm.ModelInfo.Price gives ([Tracker.Record]). The zero value is
// ready to use; a Tracker is safe for concurrent use.
type Tracker struct {
	mu       sync.Mutex
	total    Totals
	sessions map[string]*Totals
	models   map[string]*Totals
}

// Record adds one turn of session (may be empty) answered by the model
// info describes, priced with info.Price (unpriced when it is nil), under
// the model name info.Name, and returns the turn.
func (t *Tracker) Record(session string, info llm.ModelInfo, u llm.Usage) Turn {
	cost, known := CostOf(info, u)
	return t.Add(Turn{Session: session, Model: info.Name, Usage: u, CostUSD: cost, Known: known})
}

// Add adds one turn as given: its cost counts when turn.Known, else the
// turn is unpriced. It returns turn.
func (t *Tracker) Add(turn Turn) Turn {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total.add(turn)
	if t.sessions == nil {
		t.sessions = map[string]*Totals{}
		t.models = map[string]*Totals{}
	}
	s := t.sessions[turn.Session]
	if s == nil {
		s = &Totals{}
		t.sessions[turn.Session] = s
	}
	s.add(turn)
	m := t.models[turn.Model]
	if m == nil {
		m = &Totals{}
		t.models[turn.Model] = m
	}
	m.add(turn)
	return turn
}

// Total returns the sums over every turn.
func (t *Tracker) Total() Totals {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// Session returns the sums over a session's turns.
func (t *Tracker) Session(id string) Totals {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.sessions[id]; s != nil {
		return *s
	}
	return Totals{}
}

// Model returns the sums over the turns a model answered.
func (t *Tracker) Model(name string) Totals {
	t.mu.Lock()
	defer t.mu.Unlock()
	if m := t.models[name]; m != nil {
		return *m
	}
	return Totals{}
}

// Sessions returns the ids of the sessions seen, sorted.
func (t *Tracker) Sessions() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]string, 0, len(t.sessions))
	for id := range t.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
