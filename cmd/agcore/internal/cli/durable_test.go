package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/middleware"
)

// fakeTemporal writes an agcore-temporal stand-in that prints its
// arguments, one per line, and exits with status 3 when asked.
func fakeTemporal(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agcore-temporal")
	// The agents file agcore run --temporal writes is printed in place of
	// its name.
	script := "#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in --agents=*) printf 'agents='; cat \"${a#--agents=}\"; echo;; *) echo \"$a\";; esac; done\n[ \"$2\" = fail ] && exit 3\nexit 0\n"
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
			"run\nagents=" + specsJSON(t, agent.Spec{Name: "agcore", Instructions: durableDefault, Compact: "auto"}) +
				"\n--temporal=127.0.0.1:7233\n--session=s1\n--\nhello\nthere\n"},
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
// are forwarded with --temporal and refused without it; the agent goes as
// data (no tools: an empty list); a worker's flag is refused naming the
// worker's.
func TestRunTakesTheDurableFlags(t *testing.T) {
	bin := fakeTemporal(t)
	code, out, errOut := runDurable(t, bin, "run", "--temporal", "127.0.0.1:7233", "--redis", "redis://127.0.0.1:6379/0",
		"--turn", "t1", "--blobs", "/tmp/blobs", "--task-queue", "q", "--approval-timeout", "1h", "--tools", "", "--session", "s", "hi")
	want := "run\nagents=" + specsJSON(t, agent.Spec{Name: "agcore", Instructions: durableNoTools, Tools: []string{}, Compact: "auto"}) +
		"\n--temporal=127.0.0.1:7233\n--session=s\n--redis=redis://127.0.0.1:6379/0\n--blobs=/tmp/blobs\n--turn=t1\n--task-queue=q\n--approval-timeout=1h0m0s\n--\nhi\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, ran with\n%s(stderr %q), want\n%s", code, out, errOut, want)
	}
	code, out, errOut = runDurable(t, bin, "run", "--temporal", "127.0.0.1:7233", "--root", "/srv", "hi")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "--root belongs to the worker in a durable run: agcore worker --root") {
		t.Errorf("--root with --temporal: exit %d, stdout %q, stderr %q", code, out, errOut)
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

const (
	durableDefault = "You are agcore, a helpful assistant in a terminal. Answer concisely. Use the tools you are given when they help; the file tools work inside the worker's directory and take paths relative to it."
	durableNoTools = "You are agcore, a helpful assistant in a terminal. Answer concisely."
)

func specsJSON(t *testing.T, specs ...agent.Spec) string {
	t.Helper()
	b, err := json.Marshal(specs)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWorkerConfig: agcore worker --config FILE passes the file's worker
// settings on, the command line's flags winning; a missing file is an
// error.
func TestWorkerConfig(t *testing.T) {
	bin := fakeTemporal(t)
	cfg := filepath.Join(t.TempDir(), "config.json")
	file := `{"provider": "demo", "store": "sqlite:/srv/agcore.db", "root": "/srv/project", "tools": ["read_file"],
	  "mcp": [{"name": "files", "command": "npx server"}, {"url": "http://127.0.0.1:9/mcp"}]}`
	if err := os.WriteFile(cfg, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runDurable(t, bin, "worker", "--config", cfg, "--store", "memory:")
	want := "worker\n--store\nmemory:\n--provider=demo\n--root=/srv/project\n--tools=read_file\n--mcp=npx server\n--mcp-url=http://127.0.0.1:9/mcp\n"
	if code != 0 || out != want {
		t.Fatalf("exit %d, ran with\n%s(stderr %q), want\n%s", code, out, errOut, want)
	}
	code, _, errOut = runDurable(t, bin, "worker", "--config", filepath.Join(t.TempDir(), "none.json"))
	if code != ExitUsage || !strings.Contains(errOut, "no such file") {
		t.Fatalf("a missing file: exit %d, %q", code, errOut)
	}
}

// TestDurableHelpWithoutAgcoreTemporal: worker --help and approve --help
// show their own help, with how to install agcore-temporal, and exit 0
// when agcore-temporal is not installed.
func TestDurableHelpWithoutAgcoreTemporal(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, sub := range []string{"worker", "approve"} {
		code, out, errOut := runDurable(t, "", sub, "--help")
		if code != 0 || !strings.Contains(out, "agcore "+sub) || !strings.Contains(out, temporalInstall) {
			t.Errorf("%s --help: exit %d\n%s\n%s", sub, code, out, errOut)
		}
	}
}
