package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/sqlite"
)

// The hashes a session records are those of the first request as sent,
// whatever spares the agent encoding the history (hashes the store hands
// over, hashes remembered by the caller's session): checked turn by turn
// for every store, two agents with their own stores on one SQLite file
// (two processes), an in-memory session, and a budget small enough that
// later turns are compacted.
func TestRecordedHashesAreThoseOfTheRequestSent(t *testing.T) {
	t.Parallel()
	openSQLite := func(t *testing.T) session.Store {
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "sessions.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	cases := []struct {
		name   string
		stores func(t *testing.T) []session.Store // the agents' stores, used in turn
	}{
		{"memstore", func(*testing.T) []session.Store { return []session.Store{memstore.New()} }},
		{"filestore", func(t *testing.T) []session.Store {
			s, err := filestore.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return []session.Store{s}
		}},
		{"sqlite", func(t *testing.T) []session.Store { return []session.Store{openSQLite(t)} }},
		{"sqlite-two-stores", func(t *testing.T) []session.Store {
			a := openSQLite(t)
			b, err := sqlite.Open(context.Background(), a.(*sqlite.Store).Path())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return []session.Store{a, b}
		}},
		{"in-memory-session", func(*testing.T) []session.Store { return nil }},
	}
	for _, tc := range cases {
		for _, budget := range []int{0, 400} {
			t.Run(fmt.Sprintf("%s/budget=%d", tc.name, budget), func(t *testing.T) {
				stores := tc.stores(t)
				var agents []*agent.Agent
				var models []*llmtest.Model
				newID := ids() // one source: run ids key the turns of the shared session
				for i := range max(len(stores), 1) {
					m := llmtest.New()
					cfg := agent.Config{Instructions: "be brief", NewID: newID}
					if len(stores) > 0 {
						cfg.Store = stores[i]
					}
					if budget > 0 {
						cfg.Compaction = &compact.Policy{Budget: budget, Logger: quiet()}
					}
					models = append(models, m)
					agents = append(agents, newAgent(t, m, cfg))
				}
				mem := &session.Session{ID: "s"}
				compacted := false
				for turn := range 12 {
					k := turn % len(agents)
					models[k].Add(llmtest.Text(fmt.Sprintf("answer %d: %s", turn, slices.Repeat([]byte("word "), 60))))
					opts := &agent.RunOptions{SessionID: "s"}
					if len(stores) == 0 {
						opts = &agent.RunOptions{Session: mem}
					}
					input := user(fmt.Sprintf("question %d", turn))
					resp, err := agents[k].Run(context.Background(), input, opts)
					if err == nil {
						err = resp.PersistErr()
					}
					if err != nil {
						t.Fatal(err)
					}
					reqs := models[k].Requests()
					sent := reqs[len(reqs)-1].Messages
					compacted = compacted || len(sent) < 2+2*turn // system, history, input
					want, err := session.PrefixHashes(sent)
					if err != nil {
						t.Fatal(err)
					}
					got := mem
					if len(stores) > 0 {
						if got, err = stores[k].Load(context.Background(), "s"); err != nil {
							t.Fatal(err)
						}
					}
					if !slices.Equal(got.Hashes, want) {
						t.Fatalf("turn %d: recorded hashes differ from those of the request sent (%d and %d hashes, diverging at %d)",
							turn, len(got.Hashes), len(want), session.Divergence(want, got.Hashes))
					}
					if got.Prefix.Requests != turn+1 {
						t.Fatalf("turn %d: %d requests recorded", turn, got.Prefix.Requests)
					}
				}
				if compacted != (budget > 0) {
					t.Errorf("budget %d: compacted = %v", budget, compacted)
				}
			})
		}
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }
