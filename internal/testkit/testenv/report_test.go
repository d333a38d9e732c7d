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

func TestReportLineNamesWhatWasSkipped(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	record("TestA", "AGCORE_TEST_POSTGRES is not set")
	record("TestB", "the command uses PostgreSQL at the address it names")
	record("TestC", "AGCORE_TEST_REDIS is unset")
	recordShort("TestD", "builds a binary")
	recordShort("TestE", "30 agcore processes in turn")
	var out bytes.Buffer
	if n := ReportLine(&out, 50*time.Millisecond); n != 5 {
		t.Fatalf("ReportLine = %d skips, want 5\n%s", n, out.String())
	}
	want := "\nagcore: -short skipped 2 slow tests (internal/testkit/testenv 2; go test ./... without -short runs them)" +
		" and 3 that need a service or tool (PostgreSQL 2, Redis 1; .ci/run sets them up and runs everything)\n"
	if got := out.String(); got != want {
		t.Errorf("ReportLine wrote\n%q\nwant\n%q", got, want)
	}
	if _, err := os.Stat(spoolFile()); !os.IsNotExist(err) {
		t.Errorf("the spool file is still there after the report: %v", err)
	}
	out.Reset()
	if n := ReportLine(&out, 50*time.Millisecond); n != 0 || out.Len() != 0 {
		t.Errorf("a second report found %d skips: %q", n, out.String())
	}
}

func TestShortRecordsOnlyUnderShort(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Run("inner", func(t *testing.T) { Short(t, "slow") })
	skips := readSkips(spoolFile())
	if testing.Short() != (len(skips) == 1) {
		t.Fatalf("-short is %v and %d skips were recorded: %+v", testing.Short(), len(skips), skips)
	}
	if len(skips) == 1 && (!skips[0].Short || skips[0].Msg != "slow" || skips[0].Test != "TestShortRecordsOnlyUnderShort/inner") {
		t.Errorf("recorded %+v", skips[0])
	}
}
