package tiktoken

import (
	"math"

	"github.com/agcore/agcore/compact"
	"os"
	"path/filepath"
	"testing"
)

// corpus is the calibration corpus (compact/testdata/corpus): original
// text written for agcore, one file per kind of content an agent's context
// holds.
var corpus = []struct{ kind, file string }{
	{"english prose", "english.txt"},
	{"chinese prose", "chinese.txt"},
	{"go code", "code_go.txt"},
	{"json tool results", "tool_results.json"},
}

func readCorpus(tb testing.TB, file string) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", file))
	if err != nil {
		tb.Fatal(err)
	}
	return string(data)
}

// TestEstimatorWithin15PercentOfO200kPerKind is the calibration the
// estimator's constants were fitted on: on each kind of content the estimate
// stays within ±15% of the exact o200k_base count.
func TestEstimatorWithin15PercentOfO200kPerKind(t *testing.T) {
	exact := O200k()
	for _, c := range corpus {
		t.Run(c.kind, func(t *testing.T) {
			text := readCorpus(t, c.file)
			want := exact.CountText(text)
			got := compact.Estimator{}.CountText(text)
			rel := float64(got-want) / float64(want)
			t.Logf("%-18s bytes=%5d o200k=%5d cl100k=%5d estimate=%5d error=%+.1f%%",
				c.kind, len(text), want, Cl100k().CountText(text), got, 100*rel)
			if math.Abs(rel) > 0.15 {
				t.Errorf("estimate %d is %+.1f%% off the exact count %d (limit ±15%%)", got, 100*rel, want)
			}
		})
	}
}
