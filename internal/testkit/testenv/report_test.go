package testenv

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestReportGroupsRecordedSkips(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	record("TestA", "PostgreSQL is not set up: set AGCORE_TEST_POSTGRES")
	record("TestB", "PostgreSQL is not set up: set AGCORE_TEST_POSTGRES")
	record("TestC", "no redis")
	var out bytes.Buffer
	if n := Report(&out, 50*time.Millisecond); n != 3 {
		t.Fatalf("Report = %d skips, want 3\n%s", n, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"3 tests did not run",
		"PostgreSQL is not set up: set AGCORE_TEST_POSTGRES\n    2: internal/testkit/testenv.TestA, internal/testkit/testenv.TestB",
		"no redis\n    1: internal/testkit/testenv.TestC",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if _, err := os.Stat(spoolFile()); !os.IsNotExist(err) {
		t.Errorf("the spool file is still there after the report: %v", err)
	}
	out.Reset()
	if n := Report(&out, 50*time.Millisecond); n != 0 || out.Len() != 0 {
		t.Errorf("a second report found %d skips: %q", n, out.String())
	}
}
