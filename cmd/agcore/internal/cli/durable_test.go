package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/middleware"
)

// fakeTemporal writes an agcore-temporal stand-in that prints its
// arguments, one per line, and exits with status 3 when asked.
func fakeTemporal(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agcore-temporal")
	script := "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\n[ \"$2\" = fail ] && exit 3\nexit 0\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func runDurable(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(context.Background(), args, Env{
		Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Cwd: t.TempDir(), UserHome: t.TempDir(),
		Getenv: func(k string) (string, bool) {
			if k == temporalBinEnv && bin != "" {
				return bin, true
			}
			if k == "PATH" {
				return "", true
			}
			return "", false
		},
	})
	return code, out.String(), errb.String()
}

func TestDurableCommandsRunAgcoreTemporal(t *testing.T) {
	bin := fakeTemporal(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--temporal", "127.0.0.1:7233", "--session", "s1", "hello", "there"},
			"run\n--session=s1\n--temporal=127.0.0.1:7233\n--\nhello\nthere\n"},
		{[]string{"worker", "--provider", "demo", "--store", "memory:"}, "worker\n--provider\ndemo\n--store\nmemory:\n"},
		{[]string{"approve", "--session", "s", "--turn", "t", "call_1"}, "approve\n--session\ns\n--turn\nt\ncall_1\n"},
	} {
		code, out, errOut := runDurable(t, bin, tc.args...)
		if code != 0 || out != tc.want {
			t.Errorf("%v: exit %d, ran with\n%s(stderr %q), want\n%s", tc.args, code, out, errOut, tc.want)
		}
	}
	if code, _, _ := runDurable(t, bin, "worker", "fail"); code != 3 {
		t.Errorf("agcore-temporal's exit status 3 became %d", code)
	}
}

func TestDurableCommandsNameTheInstallWhenMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	code, _, errOut := runDurable(t, filepath.Join(t.TempDir(), "nothing"), "worker")
	if code != ExitFailed || !strings.Contains(errOut, "AGCORE_TEMPORAL_BIN") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runDurable(t, "", "worker")
	if code != ExitFailed || !strings.Contains(errOut, temporalInstall) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// TestRunTakesTheDurableFlags: the flags of agcore-temporal run that a
// local run has no use for (the README's --redis, --turn, --blobs, ...)
// are forwarded with --temporal and refused without it; no tools is
// agcore-temporal's "none".
func TestRunTakesTheDurableFlags(t *testing.T) {
	bin := fakeTemporal(t)
	code, out, errOut := runDurable(t, bin, "run", "--temporal", "127.0.0.1:7233", "--redis", "redis://127.0.0.1:6379/0",
		"--turn", "t1", "--blobs", "/tmp/blobs", "--task-queue", "q", "--approval-timeout", "1h", "--tools", "", "--session", "s", "hi")
	want := "run\n--approval-timeout=1h0m0s\n--blobs=/tmp/blobs\n--redis=redis://127.0.0.1:6379/0\n--session=s\n--task-queue=q\n--temporal=127.0.0.1:7233\n--tools=none\n--turn=t1\n--\nhi\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, ran with\n%s(stderr %q), want\n%s", code, out, errOut, want)
	}
	for _, f := range durableFlags {
		v := "1"
		if f.kind == "duration" {
			v = "1s"
		}
		code, out, errOut := runDurable(t, bin, "run", "--"+f.name+"="+v, "hi")
		if code != ExitUsage || out != "" || !strings.Contains(errOut, "--"+f.name+" is a setting of durable runs") {
			t.Errorf("a local run with --%s: exit %d, stdout %q, stderr %q", f.name, code, out, errOut)
		}
	}
}

// TestDefaultStepLimitIsTheToolLoops: agcore run's --max-steps default is
// the tool loop's, which the durable workflow uses too.
func TestDefaultStepLimitIsTheToolLoops(t *testing.T) {
	if config.DefaultMaxSteps != middleware.DefaultMaxSteps {
		t.Fatalf("--max-steps defaults to %d, the tool loop to %d", config.DefaultMaxSteps, middleware.DefaultMaxSteps)
	}
}
