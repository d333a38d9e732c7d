package httpx

import (
	"net/http"
	"testing"
	"time"
)

// FuzzParseRetryAfter feeds arbitrary Retry-After and Retry-After-Ms
// values: the wait is never negative, whatever a server sends (a negative
// or overflowed duration would make the retry middleware misbehave).
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range [][2]string{
		{"2", ""}, {"1.5", ""}, {"", "250"}, {"Wed, 21 Oct 2099 07:28:00 GMT", ""},
		{"-3", "-1"}, {"1e300", ""}, {"", "1e300"}, {"NaN", "NaN"}, {"+Inf", "Inf"}, {"9223372037", ""},
	} {
		f.Add(s[0], s[1])
	}
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ra, raMs string) {
		h := http.Header{}
		if ra != "" {
			h.Set("Retry-After", ra)
		}
		if raMs != "" {
			h.Set("Retry-After-Ms", raMs)
		}
		if d := ParseRetryAfter(h, now); d < 0 {
			t.Fatalf("ParseRetryAfter(%q, %q) = %v, negative", ra, raMs, d)
		}
	})
}
