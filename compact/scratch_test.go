package compact

import (
	"testing"
)

func TestScratch(t *testing.T) {
	for _, kr := range []int{8, 12} {
		for _, step := range []int{8, 12, 24, 40} {
			for _, ts := range []int{0, 4000, 8000} {
				for _, withModel := range []bool{false, true} {
					p := Pipeline{Microcompact{KeepRecent: kr, Step: step}}
					if withModel {
						p = append(p, &Summarize{Model: &fakeModel{}, Step: ts})
					}
					p = append(p, Truncate{Step: ts})
					st := simulateSession(t, 200, 32000, p, Estimator{}, 42)
					t.Logf("kr=%d step=%d tstep=%d model=%v stable=%.0f%% cached=%.0f%%", kr, step, ts, withModel,
						100*float64(st.prefixStable)/float64(st.requests), 100*float64(st.cached)/float64(st.tokens))
				}
			}
		}
	}
}
