// Package testenv decides what a test does when something it needs from the
// machine (a command, an installed server, a database) is missing: outside
// CI it skips, so a contributor without the tool can still run the suite;
// under CI (the CI environment variable set, as every CI system sets it) it
// fails, so CI cannot pass by skipping.
//
// A skip is loud: Missing also records it in a spool file named after the
// go command that runs the test binaries, and the package zz_skipped, which
// `go test ./...` runs last, prints every recorded skip with how to enable
// it once the other packages are done (see [Report]). Under -short, [Short]
// skips the slow tests and records them too, and zz_skipped prints one
// line naming what did not run and how to run it ([ReportLine]).
//
// It is imported by tests only.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// InCI reports whether the tests run under CI: the CI environment variable
// is set to anything but "" or "false".
func InCI() bool {
	v, ok := os.LookupEnv("CI")
	return ok && v != "" && v != "false"
}

// Missing reports that something the test needs is missing: t.Fatalf under
// CI, t.Skipf elsewhere, after recording the skip for the end-of-run report.
// The message should say how to enable the test. It does not return.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("CI is set, and %s", msg)
		return
	}
	record(t.Name(), msg)
	t.Skip(msg)
}

// Short skips t under go test -short, saying why (a slow test, or a
// variant of one whose first variant runs), after recording the skip so
// that the end-of-run line of zz_skipped counts it. Without -short it
// returns and the test runs.
func Short(t testing.TB, why string) {
	t.Helper()
	if !testing.Short() {
		return
	}
	recordShort(t.Name(), why)
	t.Skip("-short: " + why)
}
