package tiktoken

import (
	"testing"

	"github.com/agcore/agcore/compact/internal/compacttest"
)

// BenchmarkCount measures the exact o200k_base counter on each kind of the
// calibration corpus, scanning the text (no cache); compact's BenchmarkCount
// measures the estimator on the same corpus.
func BenchmarkCount(b *testing.B) {
	for _, c := range compacttest.Corpus {
		text := compacttest.Text(c.File)
		b.Run("exact/"+c.Kind, func(b *testing.B) {
			enc := O200k()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				enc.CountText(text)
			}
		})
	}
}

// BenchmarkLoad measures what a process pays before its first exact count:
// building the o200k_base encoding (New), against the floor of only
// splitting its vocabulary file into tokens (decodeVocab).
func BenchmarkLoad(b *testing.B) {
	b.Run("floor_decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeVocab(o200kData); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("o200k", func(b *testing.B) {
		for b.Loop() {
			if _, err := New(O200kBase); err != nil {
				b.Fatal(err)
			}
		}
	})
}
