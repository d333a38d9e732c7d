package cli

import (
	"slices"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
		err  bool
	}{
		{"review doc=a.md", []string{"review", "doc=a.md"}, false},
		{`review  tone="very kind"  x=1`, []string{"review", "tone=very kind", "x=1"}, false},
		{`say text="a \"quoted\" word"`, []string{"say", `text=a "quoted" word`}, false},
		{`empty v=""`, []string{"empty", "v="}, false},
		{"", nil, false},
		{`open "never closed`, nil, true},
	} {
		got, err := splitArgs(tc.line)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q (error %v)", tc.line, got, err, tc.want, tc.err)
		}
	}
}
