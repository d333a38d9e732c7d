package testenv

import "testing"

func TestInCI(t *testing.T) {
	for _, tc := range []struct {
		val  string
		set  bool
		want bool
	}{
		{"", false, false},
		{"", true, false},
		{"false", true, false},
		{"true", true, true},
		{"1", true, true},
	} {
		if tc.set {
			t.Setenv("CI", tc.val)
		} else {
			t.Setenv("CI", "x")
			unsetCI(t)
		}
		if got := InCI(); got != tc.want {
			t.Errorf("CI=%q (set %v): InCI = %v, want %v", tc.val, tc.set, got, tc.want)
		}
	}
}

// fakeTB records whether Missing skipped or failed.
type fakeTB struct {
	testing.TB
	failed, skipped bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Name() string          { return "TestFake" }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }
func (f *fakeTB) Skip(...any)           { f.skipped = true }

func TestMissingFailsUnderCIAndSkipsElsewhere(t *testing.T) {
	t.Setenv("CI", "true")
	f := &fakeTB{}
	Missing(f, "no %s", "node")
	if !f.failed || f.skipped {
		t.Fatalf("under CI: failed %v skipped %v, want a failure", f.failed, f.skipped)
	}
	t.Setenv("CI", "")
	t.Setenv("TMPDIR", t.TempDir())
	f = &fakeTB{}
	Missing(f, "no %s", "node")
	if f.failed || !f.skipped {
		t.Fatalf("outside CI: failed %v skipped %v, want a skip", f.failed, f.skipped)
	}
}
