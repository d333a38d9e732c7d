package compact

import (
	"context"
	"errors"
	"testing"

	"github.com/agcore/agcore/llm"
)

// counting wraps a strategy and counts its calls.
type counting struct {
	Strategy
	calls int
}

func (c *counting) Compress(ctx context.Context, msgs []llm.Message, budget int, counter TokenCounter) ([]llm.Message, error) {
	c.calls++
	return c.Strategy.Compress(ctx, msgs, budget, counter)
}

func TestIncrementalExtendsThePreviousResultWhileItFits(t *testing.T) {
	t.Parallel()
	inner := &counting{Strategy: Truncate{KeepLast: 2}}
	inc := NewIncremental(inner)
	msgs := exchanges(40)
	budget := est.CountMessages(msgs[:102]) / 2
	first, rep, err := inc.CompressReport(ctx, msgs[:102], budget, est)
	if err != nil {
		t.Fatal(err)
	}
	if n := est.CountMessages(first); n > budget*int(DefaultLowWater*100)/100+1 {
		t.Errorf("a fresh compression used %d of %d tokens, want at most the low water", n, budget)
	}
	if rep.Strategy != "truncate" && rep.Strategy != "*compact.counting" {
		t.Errorf("fresh report strategy %q", rep.Strategy)
	}
	grown := msgs[:106]
	next, rep, err := inc.CompressReport(ctx, grown, budget, est)
	if err != nil {
		t.Fatal(err)
	}
	if inner.calls != 1 {
		t.Errorf("the strategy ran %d times; the grown history should extend the last result", inner.calls)
	}
	if !isPrefixOf(first, next) || len(next) != len(first)+4 {
		t.Error("the next request does not extend the previous one by the new messages")
	}
	if rep.Strategy != "incremental" || rep.TokensAfter != est.CountMessages(next) {
		t.Errorf("report = %+v", rep)
	}
	// Grow until the extension no longer fits: a fresh compression.
	for n := 110; n <= len(msgs); n += 4 {
		out, _, err := inc.CompressReport(ctx, msgs[:n], budget, est)
		if err != nil {
			t.Fatal(err)
		}
		if c := est.CountMessages(out); c > budget {
			t.Fatalf("%d tokens over the budget of %d", c, budget)
		}
		if err := Validate(out); err != nil {
			t.Fatal(err)
		}
	}
	if inner.calls < 2 {
		t.Error("the strategy never ran again although the history doubled")
	}
}

func TestIncrementalCompressesAfreshWhenTheHistoryChanged(t *testing.T) {
	t.Parallel()
	inner := &counting{Strategy: Truncate{}}
	inc := NewIncremental(inner)
	msgs := exchanges(30)
	budget := est.CountMessages(msgs) / 2
	if _, _, err := inc.CompressReport(ctx, msgs, budget, est); err != nil {
		t.Fatal(err)
	}
	edited := deepCopy(msgs)
	edited[5] = llm.UserText("an edited message")
	if _, _, err := inc.CompressReport(ctx, append(edited, llm.UserText("more")), budget, est); err != nil {
		t.Fatal(err)
	}
	if inner.calls != 2 {
		t.Errorf("strategy calls = %d: an edited history must not extend the old result", inner.calls)
	}
	inc.Forget()
	if _, _, err := inc.CompressReport(ctx, append(edited, llm.UserText("more")), budget, est); err != nil || inner.calls != 3 {
		t.Errorf("after Forget: calls %d, err %v", inner.calls, err)
	}
}

func TestIncrementalKeepsConversationsApart(t *testing.T) {
	t.Parallel()
	inner := &counting{Strategy: Truncate{}}
	inc := NewIncremental(inner)
	a := exchanges(30)
	b := deepCopy(a)
	b[1] = llm.UserText("another task")
	budget := est.CountMessages(a) / 2
	for _, m := range [][]llm.Message{a, b, append(a, llm.UserText("x")), append(b, llm.UserText("y"))} {
		if _, _, err := inc.CompressReport(ctx, m, budget, est); err != nil {
			t.Fatal(err)
		}
	}
	if inner.calls != 2 {
		t.Errorf("strategy calls = %d, want one per conversation", inner.calls)
	}
}

func TestIncrementalPassesFailuresOn(t *testing.T) {
	t.Parallel()
	inc := NewIncremental(Truncate{KeepLast: 50})
	msgs := exchanges(10)
	if _, _, err := inc.CompressReport(ctx, msgs, 100, est); !errors.Is(err, ErrCannotFit) {
		t.Fatalf("err = %v", err)
	}
	if _, _, err := (&Incremental{}).CompressReport(ctx, msgs, 100, est); err == nil {
		t.Fatal("no error without a strategy")
	}
}

// lastCleared returns the index of the last message holding a cleared
// tool result, or -1.
func lastCleared(msgs []llm.Message) int {
	last := -1
	for i := range msgs {
		if msgs[i].Role == llm.RoleTool && isPlaceholder(msgs[i].Content) {
			last = i
		}
	}
	return last
}

// Under Incremental, a default Microcompact clears every result older than
// its KeepRecent messages instead of stopping at a quantized boundary; an
// explicit Step is respected, and the pipeline outside Incremental keeps
// its quantized boundary.
func TestIncrementalTunesMicrocompact(t *testing.T) {
	t.Parallel()
	msgs := exchanges(20) // 82 messages
	budget := est.CountMessages(msgs) * 9 / 10
	keep := DefaultKeepRecent
	out, err := NewIncremental(DefaultPipeline(nil)).Compress(ctx, msgs, budget, est)
	if err != nil {
		t.Fatal(err)
	}
	// The last result before the KeepRecent messages is cleared.
	want := -1
	for i := len(msgs) - keep - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleTool {
			want = i
			break
		}
	}
	if got := lastCleared(out); got != want {
		t.Errorf("under Incremental the last cleared result is message %d, want %d", got, want)
	}
	if err := Validate(out); err != nil {
		t.Fatal(err)
	}
	stateless, err := DefaultPipeline(nil).Compress(ctx, msgs, budget, est)
	if err != nil {
		t.Fatal(err)
	}
	if got, limit := lastCleared(stateless), (len(msgs)-keep)/DefaultStep*DefaultStep; got >= limit {
		t.Errorf("the stateless pipeline cleared message %d, beyond its quantized boundary %d", got, limit)
	}
	explicit, err := NewIncremental(Pipeline{Microcompact{Step: 20}, Truncate{}}).Compress(ctx, msgs, budget, est)
	if err != nil {
		t.Fatal(err)
	}
	if got, limit := lastCleared(explicit), (len(msgs)-keep)/20*20; got >= limit {
		t.Errorf("an explicit Step was overridden: cleared message %d, boundary %d", got, limit)
	}
}
