package cli

import "testing"

func TestParseSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "0", want: 0},
		{in: "1048576", want: 1 << 20},
		{in: "64KiB", want: 64 << 10},
		{in: "32MiB", want: 32 << 20},
		{in: "32mib", want: 32 << 20},
		{in: "2 GiB", want: 2 << 30},
		{in: "5MB", want: 5_000_000},
		{in: "8M", want: 8 << 20},
		{in: "100B", want: 100},
		{in: "", bad: true},
		{in: "MiB", bad: true},
		{in: "-1MiB", bad: true},
		{in: "1.5MiB", bad: true},
		{in: "12 parsecs", bad: true},
		{in: "9999999999GiB", bad: true},
	} {
		got, err := parseSize(tc.in)
		switch {
		case tc.bad && err == nil:
			t.Errorf("parseSize(%q) = %d, want an error", tc.in, got)
		case !tc.bad && (err != nil || got != tc.want):
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, n := range []int64{0, 100, 64 << 10, 32 << 20, 3 << 30} {
		if back, err := parseSize(formatSize(n)); err != nil || back != n {
			t.Errorf("parseSize(formatSize(%d) = %q) = %d, %v", n, formatSize(n), back, err)
		}
	}
}
