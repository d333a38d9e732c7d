package skipped

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
)

// TestReportSkips writes the report of the skips recorded in this go
// command's run. It never fails: a skip is not a failure outside CI.
func TestReportSkips(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no report")
	}
	var w io.Writer = os.Stdout
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		w = io.MultiWriter(os.Stdout, tty)
	}
	testenv.Report(w, 20*time.Minute)
}
