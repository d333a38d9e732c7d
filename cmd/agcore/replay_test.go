package main_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/replay"
)

// TestRecordThenReplayAgainstAProvider records a tool-calling turn made
// against a fake OpenAI server (run --record), then replays it with the
// built binary with no server and no key: the replayed requests are the
// recorded ones; a changed prompt, a removed tool and a changed tool
// result are each reported in the message model's terms; --strict exits 1.
func TestRecordThenReplayAgainstAProvider(t *testing.T) {
	skipShort(t, "TestServeRecordDirThenReplay records and replays through the binary in -short")
	t.Parallel()
	srv := newFake(t,
		openaiReply(turn{calls: []call{
			{"call_a", "read_file", `{"path":"a.txt"}`},
			{"call_b", "grep", `{"pattern":"needle"}`},
		}, in: 50, out: 30}),
		openaiReply(turn{text: "a says alpha.", in: 90, out: 12}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a.txt": "alpha\n", "c.md": "a needle here\n"})
	file := filepath.Join(t.TempDir(), "run.jsonl")
	c.ok("run", "--root", root, "--system", "Be brief.", "--record", file, "Compare the files")

	rec, err := replay.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 1 || len(rec.Calls) != 2 || len(rec.Tools) != 2 || rec.Header.Provider != "openai" || rec.Header.Model != "gpt-4o-mini" {
		t.Fatalf("record: %d turns, %d calls, %d tool results, model %s/%s", len(rec.Turns), len(rec.Calls), len(rec.Tools), rec.Header.Provider, rec.Header.Model)
	}
	if got := rec.Calls[1].Request.Messages; len(got) != 5 || got[3].Role != llm.RoleTool || got[3].ToolCallID != "call_a" || got[3].Text() != "alpha\n" {
		t.Fatalf("the second recorded request does not carry the tool results: %+v", got)
	}

	// Replayed in another environment: no server, no key, the provider
	// given by the record.
	offline := newCLI(t)
	r := offline.ok("replay", "--root", root, file)
	if !strings.Contains(r.stdout, "no drift: 2 of 2 calls") {
		t.Fatalf("replay of an unchanged configuration:\n%s%s", r.stdout, r.stderr)
	}
	if n := len(srv.got()); n != 2 {
		t.Fatalf("the replay reached the provider: %d requests", n)
	}

	cases := []struct {
		name  string
		args  []string
		lines []string
	}{
		{"prompt changed", []string{"--root", root, "--system", "Be thorough."},
			[]string{`call 1 (turn 1): system prompt changed: "Be brief." → "Be thorough."`, `call 2 (turn 1): system prompt changed`, "drift in 2 of 2 calls"}},
		{"tool removed", []string{"--root", root, "--tools", "read_file,grep"},
			[]string{"call 1 (turn 1): tool list_dir removed from the definitions"}},
		{"tool result changed", []string{"--root", t.TempDir()},
			[]string{"call 2 (turn 1): message 3: tool result of call call_a (read_file) differs", "call 2 (turn 1): message 4: tool result of call call_b (grep) differs"}},
		{"tool result from the record", []string{"--root", t.TempDir(), "--recorded-tools", "all"},
			[]string{"no drift: 2 of 2 calls"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := offline.ok(append(append([]string{"replay"}, tc.args...), file)...)
			for _, l := range tc.lines {
				if !strings.Contains(r.stdout, l) {
					t.Errorf("stdout lacks %q:\n%s", l, r.stdout)
				}
			}
		})
	}
	r = offline.run("", "replay", "--strict", "--root", root, "--system", "Be thorough.", file)
	if r.code != 1 || !strings.Contains(r.stdout, "system prompt changed") || !strings.Contains(r.stdout, "strict: the replay stopped at turn 1") {
		t.Fatalf("strict replay with drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, "call 2") {
		t.Errorf("strict replay went past the first drifted call:\n%s", r.stdout)
	}
	if r := offline.run("", "replay", "--strict", "--root", root, file); r.code != 0 {
		t.Fatalf("strict replay without drift: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Not a record: a usage error.
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{}\n"), 0o600)
	if r := offline.run("", "replay", bad); r.code != 2 || !strings.Contains(r.stderr, "not a record header") {
		t.Fatalf("replay of a non-record: exit %d\n%s", r.code, r.stderr)
	}
}

// TestChatRecordReplaysEveryTurn records a chat of two prompts on the demo
// model and replays both turns: the second turn's requests carry the first
// turn's history, as live.
func TestChatRecordReplaysEveryTurn(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	writeFiles(t, c.dir, map[string]string{"README.md": "# Demo\nA project.\n"})
	file := filepath.Join(t.TempDir(), "chat.jsonl")
	r := c.run("Hi\nWhat did I say?\n", "chat", "--provider", "demo", "--store", "memory:", "--record", file)
	if r.code != 0 {
		t.Fatalf("chat: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	rec, err := replay.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 2 || rec.Turns[0].Session == "" || rec.Turns[0].Session != rec.Turns[1].Session {
		t.Fatalf("turns %+v", rec.Turns)
	}
	last := rec.Calls[len(rec.Calls)-1].Request.Messages
	if last[1].Text() != "Hi" {
		t.Fatalf("the second turn's request does not start with the first turn: %+v", last[1])
	}
	r = c.ok("replay", file)
	if want := "no drift: " + strconv.Itoa(len(rec.Calls)) + " of " + strconv.Itoa(len(rec.Calls)) + " calls"; !strings.Contains(r.stdout, want) {
		t.Fatalf("chat replay:\n%s%s", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, ": 2 turns,") {
		t.Fatalf("chat replay does not run two turns:\n%s", r.stdout)
	}
}

// TestRecordOfAContinuedSession: a run that continues a stored session
// records the history its first request sent, and the replay starts from
// it: no drift.
func TestRecordOfAContinuedSession(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	writeFiles(t, c.dir, map[string]string{"README.md": "# Demo\nA project.\n"})
	c.ok("run", "--provider", "demo", "--session", "work", "Hello")
	file := filepath.Join(t.TempDir(), "run.jsonl")
	c.ok("run", "--provider", "demo", "--session", "work", "--record", file, "And again")
	rec, err := replay.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Turns) != 1 || len(rec.Turns[0].History) < 2 || rec.Turns[0].History[0].Text() != "Hello" {
		t.Fatalf("the record's turn does not hold the session's history: %+v", rec.Turns)
	}
	if r := c.ok("replay", file); !strings.Contains(r.stdout, "no drift") {
		t.Fatalf("replay of a continued session:\n%s", r.stdout)
	}
}

// TestRecordFileIsPrivate: run --record writes the record readable by its
// owner only, as serve's --record-dir does (it holds the whole
// conversation and tool output), also when it replaces an existing file.
func TestRecordFileIsPrivate(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	fresh := filepath.Join(t.TempDir(), "run.jsonl")
	old := filepath.Join(t.TempDir(), "old.jsonl")
	if err := os.WriteFile(old, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{fresh, old} {
		c.ok("run", "--provider", "demo", "--record", file, "Hi")
		fi, err := os.Stat(file)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(file), mode)
		}
	}
}
