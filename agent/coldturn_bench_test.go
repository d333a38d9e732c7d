package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/session/sqlite"
	_ "github.com/agcore/agcore/session/stores" // postgres: and redis: for session.Open
)

// BenchmarkColdTurn measures a turn of a session its process has not seen
// (a new store value, as every `agcore run` is): 10,000 stored messages,
// and a compaction (Turn.Compaction) that keeps the request small, a
// summary message in place of all but the last ~40 messages. The agent
// loads the session's view (Store.LoadView) and sends the compaction and
// the messages after it. Reported: "cpu-ns/op" (the process's CPU time
// per turn, the local server included) and "x-floor", that CPU time over
// the median time of a json.Marshal of the request's Chat Completions
// body, the floor a turn cannot go below. Opening the store is outside
// the measure; loading, decoding, assembling, counting, hashing, encoding,
// the stream and the append are inside.
//
// Stores: memstore (always warm: the reference), sqlite (a file), and,
// when AGCORE_TEST_POSTGRES or AGCORE_TEST_REDIS name a server,
// postgres and redis (Redis database 9).
//
// The target of issue 22 is at most 1.5x the floor once every store reads
// only the messages after the compaction; a store whose LoadView still
// loads the whole history measures that cost instead.
func BenchmarkColdTurn(b *testing.B) {
	history := turnHistory(10_000)
	cut := len(history) - 40
	for history[cut].Role != llm.RoleUser {
		cut--
	}
	comp := &session.Compaction{Upto: cut, Messages: []llm.Message{
		llm.UserText("Summary of the conversation so far: " + strings.Repeat("the session store keeps the view and the agent sends it; ", 20)),
		llm.AssistantText("Understood; continuing from the summary."),
	}}
	input := llm.UserText("Thanks. One more question: which of the files we looked at should I refactor first, and why?")
	floorReq := chatCompletionsBody(append(append(slices.Clone(comp.Messages), history[cut:]...), input))

	type opener func(b *testing.B) (session.Store, func())
	stores := []struct {
		name string
		open opener
	}{
		{"memstore", func() opener {
			st := memstore.New()
			return func(*testing.B) (session.Store, func()) { return st, func() {} }
		}()},
		{"sqlite", func() opener {
			path := filepath.Join(b.TempDir(), "cold.db")
			return func(b *testing.B) (session.Store, func()) {
				s, err := sqlite.Open(context.Background(), path)
				if err != nil {
					b.Fatal(err)
				}
				return s, func() { s.Close() }
			}
		}()},
	}
	for _, env := range []struct{ name, env string }{{"postgres", "AGCORE_TEST_POSTGRES"}, {"redis", "AGCORE_TEST_REDIS"}} {
		url := os.Getenv(env.env)
		if url == "" {
			continue
		}
		if env.name == "redis" {
			// The configured database, under a key prefix of this run's
			// own: never another run's keys.
			sep := "?"
			if strings.Contains(url, "?") {
				sep = "&"
			}
			url += sep + "prefix=" + fmt.Sprintf("agcore-coldturn-%d:", os.Getpid())
		}
		stores = append(stores, struct {
			name string
			open opener
		}{env.name, func(b *testing.B) (session.Store, func()) {
			s, err := session.Open(context.Background(), url)
			if err != nil {
				b.Fatal(err)
			}
			return s, func() {
				if s.Closer != nil {
					s.Closer()
				}
			}
		}})
	}
	for _, st := range stores {
		b.Run("size=10k/store="+st.name, func(b *testing.B) {
			benchColdTurns(b, st.open, history, comp, input, floorReq)
		})
	}
}

func benchColdTurns(b *testing.B, open func(b *testing.B) (session.Store, func()), history []llm.Message, comp *session.Compaction, input llm.Message, floorReq *ccRequest) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(tinyStream))
	b.Cleanup(srv.Close)
	model := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithAPIKey("sk-bench"), openai.WithModel("gpt-4o"))
	info := llm.ModelInfo{Name: "gpt-4o", Provider: "openai", ContextWindow: 1 << 30, MaxOutputTokens: 16_384}
	msgs := []llm.Message{input}

	prefix := fmt.Sprintf("cold-%d-", os.Getpid())
	sessions := 0
	var current string
	fill := func() {
		store, closeStore := open(b)
		defer closeStore()
		if current != "" {
			if err := store.Delete(ctx, current); err != nil {
				b.Fatal(err)
			}
		}
		current = fmt.Sprintf("%s%d", prefix, sessions)
		sessions++
		fillSession(b, store, current, history)
		// The compaction comes with a turn, as an agent stores it.
		if err := store.Append(ctx, current, session.Turn{ID: "compacted", Messages: []llm.Message{llm.UserText("ok?"), llm.AssistantText("ok.")}, Compaction: comp}); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() {
		if current != "" {
			store, closeStore := open(b)
			store.Delete(ctx, current)
			closeStore()
		}
	})

	floor := floorNanos(b, floorReq)
	b.ReportAllocs()
	var cpu cpuMeter
	i := 0
	for b.Loop() {
		b.StopTimer()
		if i%turnsPerHistory == 0 {
			fill()
		}
		store, closeStore := open(b)
		a := newAgent(b, model, agent.Config{Name: "bench", Instructions: benchInstructions, Store: store, ModelInfo: &info})
		runtime.GC()
		cpu.start()
		b.StartTimer()
		runTurn(ctx, b, a, msgs, current)
		b.StopTimer()
		cpu.stop()
		closeStore()
		b.StartTimer()
		i++
	}
	cpu.report(b, i)
	if i > 0 && floor > 0 && cpu.total > 0 {
		b.ReportMetric(float64(cpu.total)/float64(i)/floor, "x-floor")
	}
}
