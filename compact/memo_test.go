package compact

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/llm"
)

// tally is an additive counter that counts the messages it is asked about.
type tally struct {
	Estimator
	messages atomic.Int64
}

func (c *tally) CountMessage(m *llm.Message) int {
	c.messages.Add(1)
	return c.Estimator.CountMessage(m)
}

func TestPolicyCountsOnlyNewMessages(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	hist := history(r, 300)
	c := &tally{}
	p := &Policy{Counter: c, Budget: 1 << 30}
	fit := func(msgs []llm.Message) {
		t.Helper()
		if _, err := p.Fit(context.Background(), &llm.Request{Messages: msgs}, llm.ModelInfo{}); err != nil {
			t.Fatal(err)
		}
	}
	fit(hist)
	if got := c.messages.Load(); got != int64(len(hist)) {
		t.Fatalf("first request: %d messages counted, want %d", got, len(hist))
	}
	// The next step extends it: only the new messages are counted, even
	// when the history is a copy that shares no message list or block
	// slice with the first request (a session loaded again).
	c.messages.Store(0)
	next := append(deepCopy(hist), llm.AssistantText("more"), llm.UserText("and more"))
	fit(next)
	if got := c.messages.Load(); got != 2 {
		t.Errorf("extended request: %d messages counted, want 2", got)
	}
	// An edited message is counted again, with everything after it.
	c.messages.Store(0)
	edited := slices.Clone(next)
	edited[10] = llm.UserText("edited")
	fit(edited)
	if got := c.messages.Load(); got != int64(len(next)-10) {
		t.Errorf("edited request: %d messages counted, want %d", got, len(next)-10)
	}
}

func TestMemoCountsExactly(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	var m countMemo
	counters := []AdditiveCounter{Estimator{}, Estimator{Scale: 1.2}}
	var convs [][]llm.Message
	for range 20 {
		convs = append(convs, history(r, 5+r.IntN(60)))
	}
	for step := range 2000 {
		i := r.IntN(len(convs))
		msgs := convs[i]
		switch r.IntN(6) {
		case 0: // a new message
			msgs = append(slices.Clip(msgs), llm.UserText(randText(r, 1+r.IntN(30))))
		case 1: // an edit
			if len(msgs) > 0 {
				msgs = slices.Clone(msgs)
				k := r.IntN(len(msgs))
				msgs[k] = llm.Message{Role: msgs[k].Role, ToolCallID: msgs[k].ToolCallID, Content: []llm.Block{llm.Text{Text: randText(r, 3)}}}
			}
		case 2: // the oldest messages dropped
			msgs = msgs[r.IntN(len(msgs)+1):]
		case 3: // a deep copy, as a store loads it
			msgs = deepCopy(msgs)
		case 4: // a field changed, blocks kept
			if len(msgs) > 0 {
				msgs = slices.Clone(msgs)
				k := r.IntN(len(msgs))
				msgs[k].IsError = !msgs[k].IsError
			}
		}
		convs[i] = msgs
		c := counters[r.IntN(len(counters))]
		if got, want := m.count(c, msgs), c.CountMessages(msgs); got != want {
			t.Fatalf("step %d: memo count %d, want %d", step, got, want)
		}
	}
	if len(m.entries) > memoEntries {
		t.Errorf("%d entries remembered, at most %d", len(m.entries), memoEntries)
	}
}

func TestMemoUnderConcurrentRequests(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(11, 12))
	hist := history(r, 100)
	p := &Policy{Budget: 1 << 30}
	want := Estimator{}.CountMessages(hist)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				msgs := hist[:len(hist)-(g+i)%7]
				if n := p.countMessages(Estimator{}, msgs); n != (Estimator{}).CountMessages(msgs) {
					t.Errorf("goroutine %d: count %d", g, n)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := p.countMessages(Estimator{}, hist); n != want {
		t.Errorf("count %d, want %d", n, want)
	}
}

// notComparable is an additive counter that cannot be compared: the policy
// counts with it without remembering.
type notComparable struct {
	Estimator
	_ []int
}

func TestMemoSkipsCountersItCannotCompare(t *testing.T) {
	t.Parallel()
	var m countMemo
	msgs := history(rand.New(rand.NewPCG(1, 1)), 20)
	c := notComparable{}
	if got, want := m.count(c, msgs), c.CountMessages(msgs); got != want || len(m.entries) != 0 {
		t.Errorf("count %d (want %d), %d entries", got, want, len(m.entries))
	}
}

// TestMemoExtendsInPlaceSafely: a request that extends a remembered one
// takes the spare room of its arrays; a second request extending the same
// one (a branch of the conversation) must not write into that room, and
// every count stays exact.
func TestMemoExtendsInPlaceSafely(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	var m countMemo
	c := &tally{}
	base := history(r, 40)
	check := func(msgs []llm.Message, wantCounted int) {
		t.Helper()
		c.messages.Store(0)
		if got, want := m.count(c, msgs), (Estimator{}).CountMessages(msgs); got != want {
			t.Fatalf("count %d, want %d", got, want)
		}
		if got := c.messages.Load(); wantCounted >= 0 && got != int64(wantCounted) {
			t.Fatalf("%d messages counted, want %d", got, wantCounted)
		}
	}
	check(base, len(base))
	a := append(deepCopy(base), llm.UserText("branch a"))
	check(a, 1) // extends base in place
	b := append(deepCopy(base), llm.UserText("branch b, longer than a"), llm.AssistantText("b"))
	check(b, -1) // base was extended already: a copy
	check(a, -1)
	a2 := append(slices.Clip(a), llm.AssistantText("a goes on"))
	check(a2, -1)
	b2 := append(slices.Clip(b), llm.UserText("b goes on"))
	check(b2, -1)
	for _, msgs := range [][]llm.Message{base, a, b, a2, b2} {
		check(msgs, -1)
	}
}
