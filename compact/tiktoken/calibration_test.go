package tiktoken

import (
	"math"
	"testing"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/compact/internal/compacttest"
)

// TestEstimatorWithin15PercentOfO200kPerKind is the calibration the
// estimator's constants were fitted on: on each kind of content the estimate
// stays within ±15% of the exact o200k_base count.
func TestEstimatorWithin15PercentOfO200kPerKind(t *testing.T) {
	t.Parallel()
	exact := O200k()
	for _, c := range compacttest.Corpus {
		t.Run(c.Kind, func(t *testing.T) {
			text := compacttest.Text(c.File)
			want := exact.CountText(text)
			got := compact.Estimator{}.CountText(text)
			rel := float64(got-want) / float64(want)
			t.Logf("%-18s bytes=%5d o200k=%5d cl100k=%5d estimate=%5d error=%+.1f%%",
				c.Kind, len(text), want, Cl100k().CountText(text), got, 100*rel)
			if math.Abs(rel) > 0.15 {
				t.Errorf("estimate %d is %+.1f%% off the exact count %d (limit ±15%%)", got, 100*rel, want)
			}
		})
	}
}
