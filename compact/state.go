package compact

import (
	"context"
	"sync"

	"github.com/agcore/agcore/llm"
)

// State holds what an [Incremental] remembers of one conversation: the
// input it last compressed and the messages it sent in its place. A
// request whose context carries a State ([WithState]) is compressed with
// that memory instead of the Incremental's own per-process one, so that
// what is remembered belongs to the caller: the agent gives each run a
// fresh State and starts the run's first request from the view its session
// stored (the messages the last compressed request sent), which makes a
// run in a new process send exactly what a long-lived process would.
//
// The zero value is empty and ready to use; a State is safe for concurrent
// use, but it describes one conversation: give each its own.
type State struct {
	mu   sync.Mutex
	last *incremental
}

type stateKey struct{}

// WithState returns a copy of ctx that carries st: every [Incremental]
// compressing under it reads and updates st.
func WithState(ctx context.Context, st *State) context.Context {
	return context.WithValue(ctx, stateKey{}, st)
}

// StateFrom returns the State ctx carries, or nil.
func StateFrom(ctx context.Context) *State {
	st, _ := ctx.Value(stateKey{}).(*State)
	return st
}

// Compressed reports whether an Incremental compressed a request under
// st.
func (st *State) Compressed() bool { return st.get() != nil }

// Last returns the messages an Incremental last sent under st in place of
// its input, and how many leading messages of the input they replace; ok
// is false when nothing was compressed. The slice is st's: do not change
// it.
func (st *State) Last() (sent []llm.Message, inputLen int, ok bool) {
	e := st.get()
	if e == nil {
		return nil, 0, false
	}
	return e.output, e.inputLen, true
}

// Reset empties st.
func (st *State) Reset() { st.set(nil) }

func (st *State) get() *incremental {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.last
}

func (st *State) set(e *incremental) {
	st.mu.Lock()
	st.last = e
	st.mu.Unlock()
}
