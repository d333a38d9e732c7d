package skipped

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
)

// TestReportSkips writes the report of the skips recorded in this go
// command's run: under -short one line (what -short skipped and what was
// missing, with how to run them), else a line per thing missing. It never
// fails: a skip is not a failure outside CI.
func TestReportSkips(t *testing.T) {
	var w io.Writer = os.Stdout
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		w = io.MultiWriter(os.Stdout, tty)
	}
	if testing.Short() {
		testenv.ReportLine(w, 20*time.Minute)
		return
	}
	testenv.Report(w, 20*time.Minute)
}
