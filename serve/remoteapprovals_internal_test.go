package serve

import "testing"

// TestSlotOf: a principal's background slots are PRINCIPAL/N; those of a
// principal whose name starts with "PRINCIPAL/" are not its own.
func TestSlotOf(t *testing.T) {
	for _, c := range []struct {
		key, prefix string
		want        bool
	}{
		{"alice/0", "alice/", true},
		{"alice/15", "alice/", true},
		{"alice/", "alice/", false},
		{"alice/team/0", "alice/", false},
		{"alice/x", "alice/", false},
		{"alicex/0", "alice/", false},
		{"bob/0", "alice/", false},
	} {
		if got := slotOf(c.key, c.prefix); got != c.want {
			t.Errorf("slotOf(%q, %q) = %v, want %v", c.key, c.prefix, got, c.want)
		}
	}
}
