package reliability

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/faultserver"
	"github.com/agcore/agcore/internal/testkit/testenv"
)

// TestCanaryKeyNeverLeaksFromTheCLI builds the agcore command and runs it
// with a canary key against the fault server, for both providers: a turn
// that calls a tool and answers, turns whose error bodies echo the key,
// then config, sessions list and sessions show, all with --json, a log
// file and a file store. The key must appear in no output, no log and no
// file under the CLI's home or store, while it reaches the server.
func TestCanaryKeyNeverLeaksFromTheCLI(t *testing.T) {
	t.Parallel() // beside the crash test
	if _, err := exec.LookPath("go"); err != nil {
		testenv.Missing(t, "no go command to build the CLI with")
	}
	// TestMain started the build.
	if cliBuild.done == nil {
		t.Fatal("TestMain did not build the CLI")
	}
	select {
	case <-cliBuild.done:
	case <-time.After(5 * time.Minute):
		t.Fatal("building the CLI took more than 5 minutes")
	}
	if cliBuild.err != nil {
		t.Fatalf("building the CLI: %v\n%s", cliBuild.err, cliBuild.out)
	}
	bin := cliBuild.bin
	work := t.TempDir()
	key := canaryKey(t)
	srv := faultserver.New()
	defer srv.Close()
	home, store, root := filepath.Join(work, "home"), filepath.Join(work, "sessions"), filepath.Join(work, "root")
	for _, d := range []string{home, root} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("some notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer // every byte the CLI printed
	run := func(env []string, args ...string) (string, int) {
		t.Helper()
		ctx, cancel := deadline(t)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), append([]string{"AGCORE_HOME=" + home, "AGCORE_CONFIG=", "AGCORE_PROVIDER=", "AGCORE_STORE=",
			"OPENAI_API_KEY=", "ANTHROPIC_API_KEY=", "DEEPSEEK_API_KEY=", "OPENAI_BASE_URL=", "ANTHROPIC_BASE_URL="}, env...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		out.Write(stdout.Bytes())
		out.Write(stderr.Bytes())
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("agcore %v: %v", args, err)
		}
		return stdout.String(), code
	}

	readNotes := faultserver.Reply{Text: "Reading.", ToolCalls: []faultserver.ToolCall{{ID: "r1", Name: "read_file", Args: `{"path":"notes.txt"}`}}}
	sessions := map[string]string{}
	for _, p := range []struct {
		name, keyEnv, base string
	}{
		{"openai", "OPENAI_API_KEY", srv.OpenAIBaseURL()},
		{"anthropic", "ANTHROPIC_API_KEY", srv.AnthropicBaseURL()},
	} {
		env := []string{p.keyEnv + "=" + key}
		common := []string{"--json", "--provider", p.name, "--base-url", p.base, "--model", "fault-model", "--store", "file:" + store,
			"--root", root, "--tools", "read_file", "--log", filepath.Join(home, "agcore.log"), "--retries", "0"}

		srv.Enqueue(faultserver.Step{Reply: readNotes}, faultserver.Step{Reply: faultserver.Reply{Text: "Done reading.", Chunks: 3}})
		stdout, code := run(env, append(append([]string{"run"}, common...), "read my notes")...)
		if code != 0 {
			t.Fatalf("%s: a good turn exited %d:\n%s", p.name, code, stdout)
		}
		sid := startSession(t, stdout)
		sessions[p.name] = sid
		for _, fault := range canaryFaults(key) {
			srv.Enqueue(fault)
			stdout, code := run(env, append(append([]string{"run"}, common...), "--session", sid, "again")...)
			if code != 1 || !strings.Contains(stdout, `"type":"error"`) {
				t.Fatalf("%s: a turn against %v exited %d:\n%s", p.name, fault.Fault, code, stdout)
			}
		}
		run(env, "config", "--json", "--provider", p.name, "--base-url", p.base)
		run(env, "sessions", "list", "--json", "--store", "file:"+store)
		if _, code := run(env, "sessions", "show", sid, "--json", "--store", "file:"+store); code != 0 {
			t.Fatalf("sessions show %s exited %d", sid, code)
		}
	}

	sent := 0
	for _, c := range srv.Calls() {
		if c.Header.Get("Authorization") == "Bearer "+key || c.Header.Get("X-Api-Key") == key || c.Header.Get("X-Goog-Api-Key") == key {
			sent++
		}
	}
	if sent != len(srv.Calls()) || sent < 8 {
		t.Fatalf("the key reached the server in %d of %d requests", sent, len(srv.Calls()))
	}
	if !strings.Contains(out.String(), "Done reading.") || !strings.Contains(out.String(), "some notes") {
		t.Fatalf("the CLI output lacks the turn's answer or tool result: the canary proves nothing\n%s", out.String())
	}
	if fi, err := os.Stat(filepath.Join(home, "agcore.log")); err != nil || fi.Size() == 0 {
		t.Fatalf("the CLI wrote no log (%v): the canary proves nothing", err)
	}
	if !strings.Contains(out.String(), "xxxxx") {
		t.Fatalf("no echoed key was redacted in the output: the canary proves nothing\n%s", out.String())
	}
	checkNoCanary(t, key, "the CLI's output", out.String())
	checkNoCanaryFiles(t, key, home)
	checkNoCanaryFiles(t, key, store)
	t.Logf("CLI canary: %d requests carried the key; %d bytes of output, the log and the sessions %v hold none of it", sent, out.Len(), sessions)
}

// startSession returns the session id of a run's start event.
func startSession(t *testing.T, stdout string) string {
	t.Helper()
	for line := range strings.Lines(stdout) {
		var ev struct{ Type, Session string }
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "start" && ev.Session != "" {
			return ev.Session
		}
	}
	t.Fatalf("no start event with a session in:\n%s", stdout)
	return ""
}
