package tiktoken

import "testing"

// BenchmarkCount measures the exact o200k_base counter on each kind of the
// calibration corpus, scanning the text (no cache); compact's BenchmarkCount
// measures the estimator on the same corpus.
func BenchmarkCount(b *testing.B) {
	for _, c := range corpus {
		text := readCorpus(b, c.file)
		b.Run("exact/"+c.kind, func(b *testing.B) {
			enc := O200k()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				enc.CountText(text)
			}
		})
	}
}
