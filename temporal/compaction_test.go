package agtemporal_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"

	agtemporal "github.com/agcore/agcore/temporal"
)

// TestCompactionCarriedInTheAppend runs two turns of a session whose
// history is over the budget, each on a new worker (a new test
// environment) over one store: the first turn's compressed request is
// stored with its append (Turn.Compaction), and the second turn's request
// extends it byte for byte instead of compressing the history afresh.
func TestCompactionCarriedInTheAppend(t *testing.T) {
	ctx := context.Background()
	store := memstore.New()
	for i := range 30 {
		turn := session.Turn{ID: fmt.Sprintf("old-%d", i), Messages: []llm.Message{
			llm.UserText(fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 60))),
			llm.AssistantText(fmt.Sprintf("answer %d: %s", i, strings.Repeat("more words ", 60))),
		}}
		if err := store.Append(ctx, "s1", turn); err != nil {
			t.Fatal(err)
		}
	}
	var sent [][]llm.Message
	for i, q := range []string{"and now?", "and then?"} {
		h := newHarnessWith(t, func(o *agtemporal.Options) { o.Store = store }, llmtest.Text(fmt.Sprintf("answer %d", i)))
		in := input(q)
		in.TurnID, in.Budget, in.Instructions = fmt.Sprintf("t%d", i), 4000, "Be brief."
		if _, err := h.run(t, in); err != nil {
			t.Fatal(err)
		}
		reqs := h.model.Requests()
		sent = append(sent, reqs[len(reqs)-1].Messages)
	}
	if len(sent[0]) >= 62 {
		t.Fatalf("the first turn sent %d messages: not compressed", len(sent[0]))
	}
	if len(sent[1]) != len(sent[0])+2 {
		t.Fatalf("the second turn sent %d messages, want the first's %d, its answer and the question", len(sent[1]), len(sent[0]))
	}
	for i := range sent[0] {
		if !sent[1][i].Equal(sent[0][i]) {
			t.Fatalf("message %d of the second request is not the first request's: %.80q", i, sent[1][i].Text())
		}
	}
	full, err := store.Load(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Messages) != 64 || full.Compaction == nil {
		t.Fatalf("stored: %d messages, compaction %v; want the whole history (64) and a compaction", len(full.Messages), full.Compaction != nil)
	}
}
