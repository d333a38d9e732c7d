package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSamplingFlags: run and chat take --temperature and --max-tokens (and
// their variables), and the request the provider gets carries them; a
// temperature out of range is a usage error before any call.
func TestSamplingFlags(t *testing.T) {
	t.Parallel()
	srv := newFake(t, openaiReply(turn{text: "one"}), openaiReply(turn{text: "two"}))
	c := newCLI(t).openai(srv, "sk-test")
	c.ok("run", "--temperature", "0.2", "--max-tokens", "64", "hello")
	c.env["AGCORE_TEMPERATURE"] = "1.5"
	c.env["AGCORE_MAX_TOKENS"] = "99"
	r := c.run("hi\n", "chat")
	if r.code != 0 {
		t.Fatalf("chat: exit %d\n%s", r.code, r.stderr)
	}
	got := srv.got()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	for i, want := range []struct {
		temp float64
		max  float64
	}{{0.2, 64}, {1.5, 99}} {
		b := got[i].body
		maxTokens := b["max_completion_tokens"]
		if maxTokens == nil {
			maxTokens = b["max_tokens"]
		}
		if b["temperature"] != want.temp || maxTokens != want.max {
			t.Errorf("request %d: temperature %v, max tokens %v; want %v, %v (%s)", i+1, b["temperature"], maxTokens, want.temp, want.max, got[i].raw)
		}
	}
	r = c.run("", "run", "--temperature", "7", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "not a number from 0 to 2") {
		t.Fatalf("--temperature 7: exit %d\n%s", r.code, r.stderr)
	}
}

// TestMissingConfigFile: a config file named with --config or
// AGCORE_CONFIG that does not exist is a usage error, not silently no file.
func TestMissingConfigFile(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	missing := filepath.Join(t.TempDir(), "nope.json")
	r := c.run("", "run", "--config", missing, "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "--config "+missing+": no such file") {
		t.Fatalf("--config: exit %d\n%s", r.code, r.stderr)
	}
	c.env["AGCORE_CONFIG"] = missing
	r = c.run("", "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "AGCORE_CONFIG "+missing+": no such file") {
		t.Fatalf("AGCORE_CONFIG: exit %d\n%s", r.code, r.stderr)
	}
	_ = os.Remove(missing)
}

// TestSessionsRemoveSeveral: sessions rm takes several ids (or prefixes)
// and removes none when one is not found.
func TestSessionsRemoveSeveral(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	for _, id := range []string{"one", "two", "three"} {
		c.ok("run", "--session", id, "--tools", "", "hi")
	}
	r := c.run("", "sessions", "rm", "one", "tw", "nothing")
	if r.code != 1 || !strings.Contains(r.stderr, `no session "nothing"`) {
		t.Fatalf("rm with a missing id: exit %d\n%s", r.code, r.stderr)
	}
	if out := c.ok("sessions", "list").stdout; !strings.Contains(out, "one") || !strings.Contains(out, "two") {
		t.Fatalf("a failed rm removed sessions:\n%s", out)
	}
	r = c.ok("sessions", "rm", "one", "tw")
	if r.stdout != "removed session one\nremoved session two\n" {
		t.Fatalf("rm one tw: %q", r.stdout)
	}
	if out := c.ok("sessions", "list").stdout; strings.Contains(out, "one ") || !strings.Contains(out, "three") {
		t.Fatalf("after rm:\n%s", out)
	}
}

// TestStoreTypoMakesNoDirectory: --store sqlite:PATH in a directory that
// does not exist is a usage error that names it; nothing is created.
func TestStoreTypoMakesNoDirectory(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	missing := filepath.Join(t.TempDir(), "tpyo")
	r := c.run("", "run", "--store", "sqlite:"+filepath.Join(missing, "a.db"), "hi")
	if r.code != 2 || !strings.Contains(r.stderr, missing+" does not exist") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("the directory was made: %v", err)
	}
}
