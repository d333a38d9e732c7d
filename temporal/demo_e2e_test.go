package agtemporal_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2EWorkerDemoProvider: `agcore-temporal worker --provider demo` runs
// the registry's demo, the scripted model of `agcore demo`: a durable turn
// lists the root, reads its README with the real file tools and
// summarizes it, with no key and no network.
func TestE2EWorkerDemoProvider(t *testing.T) {
	addr, _ := devServer(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# Widget Works\n\nWidget Works makes widgets.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	worker := start(t, nil, "worker", "--temporal", addr, "--provider", "demo", "--store", "memory:", "--root", root)
	run := start(t, nil, "run", "--temporal", addr, "--session", "demo", "Give me an overview of this directory.")
	select {
	case <-run.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("run did not end\nrun:\n%s\nworker:\n%s", run.out, worker.out)
	}
	out := run.out.String()
	if code := run.cmd.ProcessState.ExitCode(); code != 0 || !strings.Contains(out, "Widget Works makes widgets.") {
		t.Fatalf("exit %d\nrun:\n%s\nworker:\n%s", code, out, worker.out)
	}
	if !strings.Contains(worker.out.String(), "model scripted-demo (demo)") {
		t.Errorf("worker said:\n%s", worker.out)
	}
}
