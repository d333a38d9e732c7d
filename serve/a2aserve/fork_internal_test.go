package a2aserve

import (
	"context"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

// TestPlaceTurn: the number of a turn just stored is the session's turn
// count when it is the only turn stored since it began; when others were
// appended meanwhile (before or after it), the first of them holding its
// messages; 0 when it was not stored or the store cannot tell.
func TestPlaceTurn(t *testing.T) {
	ctx := context.Background()
	turn := func(id, user, answer string) session.Turn {
		return session.Turn{ID: id, Messages: []llm.Message{llm.UserText(user), llm.AssistantText(answer)}}
	}
	ours := turn("ours", "same", "ok")
	resp := &agent.Response{Message: llm.AssistantText("ok"), Messages: []llm.Message{llm.AssistantText("ok")}}
	input := []llm.Message{llm.UserText("same")}
	for _, tt := range []struct {
		name      string
		history   []session.Turn // before the turn began
		meanwhile []session.Turn // appended while it ran, in order; ours is "ours"
		unknown   bool           // the count before it could not be read
		nilStore  bool
		want      int
	}{
		{name: "the first turn", meanwhile: []session.Turn{ours}, want: 1},
		{name: "after identical turns", history: []session.Turn{turn("a", "same", "ok"), turn("b", "same", "ok")}, meanwhile: []session.Turn{ours}, want: 3},
		{name: "another appended after it", history: []session.Turn{turn("a", "x", "y")}, meanwhile: []session.Turn{ours, turn("c", "z", "w")}, want: 2},
		{name: "another appended before it", history: []session.Turn{turn("a", "x", "y")}, meanwhile: []session.Turn{turn("c", "z", "w"), ours}, want: 3},
		{name: "not stored", history: []session.Turn{turn("a", "x", "y")}, want: 0},
		{name: "not stored, others were", meanwhile: []session.Turn{turn("c", "z", "w"), turn("d", "z", "w")}, want: 0},
		{name: "the count unknown", meanwhile: []session.Turn{ours}, unknown: true, want: 0},
		{name: "no store", meanwhile: []session.Turn{ours}, nilStore: true, want: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := memstore.New()
			for _, h := range tt.history {
				if err := st.Append(ctx, "s", h); err != nil {
					t.Fatal(err)
				}
			}
			before := turnCount(ctx, st, "s")
			if before != len(tt.history) {
				t.Fatalf("turnCount = %d, want %d", before, len(tt.history))
			}
			if tt.unknown {
				before = -1
			}
			for _, m := range tt.meanwhile {
				if err := st.Append(ctx, "s", m); err != nil {
					t.Fatal(err)
				}
			}
			var s session.Store = st
			if tt.nilStore {
				s = nil
			}
			if got := placeTurn(ctx, s, "s", before, input, resp); got != tt.want {
				t.Fatalf("placeTurn = %d, want %d", got, tt.want)
			}
		})
	}
}
