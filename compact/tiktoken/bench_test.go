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
