package compact

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/agcore/agcore/llm"
)

// AdditiveCounter is a [TokenCounter] whose count of messages adds up: the
// count of a list is the count of no messages plus what each message
// adds, CountMessage(&msgs[i]). [Policy] remembers what the messages of
// its recent requests added, so that counting a request that repeats an
// earlier one's messages and adds a few costs only the new ones.
// [Estimator] and the exact counters of package compact/tiktoken are
// additive.
type AdditiveCounter interface {
	TokenCounter
	// CountMessage returns what m adds to the count of any list of
	// messages: CountMessages(msgs) == CountMessages(nil) + the sum of
	// CountMessage over msgs.
	CountMessage(m *llm.Message) int
}

// memoEntries is how many requests a Policy remembers the counts of (the
// conversations it serves at once, for a policy shared by sessions).
const memoEntries = 16

// countMemo remembers the per-message counts of a policy's recent
// requests, most recent first.
type countMemo struct {
	mu      sync.Mutex
	entries []*memoEntry
}

// memoEntry is one remembered request. It is never changed once stored.
type memoEntry struct {
	counter AdditiveCounter
	msgs    []llm.Message // the request's messages (a copy of the list)
	sums    []int         // sums[i]: what msgs[:i] add; len(msgs)+1 values
	// extended is set by the one later request that took the spare room
	// of msgs' and sums' arrays, past their lengths, for its own entry
	// (see count); the entry's own elements are never written.
	extended atomic.Bool
}

// count returns counter's count of msgs, counting only the messages that
// do not repeat, from its first one, the messages of a remembered request.
// The result is exactly counter.CountMessages(msgs).
func (c *countMemo) count(counter AdditiveCounter, msgs []llm.Message) int {
	if !reflect.TypeOf(counter).Comparable() {
		return counter.CountMessages(msgs)
	}
	c.mu.Lock()
	entries := c.entries // entries are immutable; the list is replaced, never changed
	c.mu.Unlock()

	var best *memoEntry
	shared := 0
	for _, e := range entries {
		if e.counter != counter {
			continue
		}
		if k := sameMessages(e.msgs, msgs); k > shared {
			best, shared = e, k
		}
	}
	var kept []llm.Message
	var sums []int
	if best != nil && shared == len(best.msgs) && best.extended.CompareAndSwap(false, true) {
		// The request extends best (the usual next step of a
		// conversation): its messages and sums go on in the spare room
		// of best's arrays, which no other entry reads, instead of a
		// copy of the whole list on every request. The first shared
		// messages kept are best's, equal to the request's.
		kept = append(best.msgs, msgs[shared:]...)
		sums = best.sums
	} else {
		// A copy with room for the next requests to extend it in place.
		kept = make([]llm.Message, len(msgs), len(msgs)+len(msgs)/4+8)
		copy(kept, msgs)
		sums = make([]int, shared+1, cap(kept)+1)
		if best != nil {
			copy(sums, best.sums[:shared+1])
		}
	}
	for i := shared; i < len(msgs); i++ {
		sums = append(sums, sums[i]+counter.CountMessage(&msgs[i]))
	}
	c.remember(best, &memoEntry{counter: counter, msgs: kept, sums: sums})
	return counter.CountMessages(nil) + sums[len(msgs)]
}

// remember puts e first, in place of old (the entry it extends) when
// there is one, else of the least recently used.
func (c *countMemo) remember(old, e *memoEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*memoEntry, 0, min(len(c.entries)+1, memoEntries))
	out = append(out, e)
	for _, x := range c.entries {
		if x != old && len(out) < memoEntries {
			out = append(out, x)
		}
	}
	c.entries = out
}

// sameMessages returns how many messages a and b share from the start
// (equal by llm.Message.Equal, which compares shared texts at once).
func sameMessages(a, b []llm.Message) int {
	n := min(len(a), len(b))
	for i := range n {
		if !a[i].Equal(b[i]) {
			return i
		}
	}
	return n
}
