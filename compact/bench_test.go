package compact

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/agcore/agcore/compact/internal/compacttest"
	"github.com/agcore/agcore/llm"
)

// BenchmarkCount measures counting throughput on each kind of the
// calibration corpus: the estimator scanning the text (no cache), and
// answering from its cache as it does when an agent counts the same history
// again. compact/tiktoken benchmarks the exact counter on the same corpus.
func BenchmarkCount(b *testing.B) {
	for _, c := range compacttest.Corpus {
		text := compacttest.Text(c.File)
		b.Run("estimate/"+c.Kind, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				estimateText(text)
			}
		})
		b.Run("estimate-cached/"+c.Kind, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Estimator{}.CountText(text)
			}
		})
	}
}

// BenchmarkCompress10k compresses a 10,000-message tool-heavy history to a
// tenth of its size with each strategy, counting with the estimator.
func BenchmarkCompress10k(b *testing.B) {
	msgs := history(rand.New(rand.NewPCG(3, 3)), 10_000)
	counter := Estimator{}
	budget := counter.CountMessages(msgs) / 10
	for _, s := range []struct {
		name string
		s    Strategy
	}{
		{"microcompact", Microcompact{MinFree: -1}},
		{"truncate", Truncate{}},
		{"summarize", &Summarize{Model: &fakeModel{}}},
		{"pipeline", DefaultPipeline(&fakeModel{})},
		{"incremental-extend", NewIncremental(DefaultPipeline(&fakeModel{}))},
	} {
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				out, err := s.s.Compress(context.Background(), msgs, budget, counter)
				if err != nil && s.name != "microcompact" {
					b.Fatal(err)
				}
				_ = out
			}
		})
	}
}

// BenchmarkCountMessages10k counts a 10,000-message history, as an agent
// does before every request.
func BenchmarkCountMessages10k(b *testing.B) {
	msgs := history(rand.New(rand.NewPCG(3, 3)), 10_000)
	for _, c := range []struct {
		name string
		c    TokenCounter
	}{{"estimator", Estimator{}}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(historyBytes(msgs)))
			for b.Loop() {
				c.c.CountMessages(msgs)
			}
		})
	}
}

func historyBytes(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += contentBytes(m.Content)
	}
	return n
}

var _ llm.Model = (*fakeModel)(nil)
