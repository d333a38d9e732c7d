package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/compact/tiktoken"
	"github.com/agcore/agcore/llm"
)

func TestDemoRunsOfflineAndPersists(t *testing.T) {
	t.Parallel()
	c := newCLI(t) // no keys, no network: AGCORE_HOME is a fresh temp dir
	writeFiles(t, c.dir, map[string]string{
		"README.md": "# Frobnicator\n\nFrobnicates widgets at scale.\n",
		"go.mod":    "module example.com/frob\n\ngo 1.26\n",
		"notes.txt": "a note\n",
		"pkg/x.go":  "package pkg\n",
	})
	r := c.ok("demo")

	for _, want := range []string{"scripted demo model", "Frobnicator", "Frobnicates widgets at scale.", "example.com/frob"} {
		if !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("the demo's output lacks %q (it must come from the files it read)\nstdout:\n%s\nstderr:\n%s", want, r.stdout, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, " input / ") || !strings.Contains(r.stderr, "→ read_file") || !strings.Contains(r.stderr, "→ list_dir") {
		t.Errorf("the demo's stderr lacks the tool lines or the usage line:\n%s", r.stderr)
	}
	id := regexp.MustCompile(`session (\S+) stored in sqlite:`).FindStringSubmatch(r.stderr)
	if id == nil || !strings.Contains(r.stderr, "agcore sessions show "+id[1]) {
		t.Fatalf("the demo does not print its session and how to inspect it:\n%s", r.stderr)
	}
	if !fileExists(filepath.Join(c.home, "agcore.db")) {
		t.Error("the demo did not persist into $AGCORE_HOME/agcore.db")
	}
	msgs := decodeMessages(t, c.show(id[1]).Messages)
	var calls, results int
	parallel := false
	for _, m := range msgs {
		calls += len(m.ToolUses())
		parallel = parallel || len(m.ToolUses()) > 1
		if m.Role == llm.RoleTool {
			results++
		}
	}
	if calls < 3 || calls != results || !parallel {
		t.Errorf("stored %d calls (parallel: %v) and %d results, want several calls, some in parallel, each answered", calls, parallel, results)
	}

	// --json works too, and --store is respected.
	r = c.ok("demo", "--json", "--store", "memory:")
	evs := events(t, r.stdout)
	if evs[0].typ() != "start" || evs[0]["model"] != "scripted-demo" || last(t, evs).typ() != "done" {
		t.Errorf("demo --json events: first %v, last %v", evs[0], last(t, evs))
	}
	// The same model drives run (and chat) offline with --provider demo,
	// continuing the demo's session.
	r = c.ok("run", "--provider", "demo", "--session", id[1], "And again?")
	if !strings.Contains(r.stdout, "Frobnicator") {
		t.Errorf("run --provider demo:\n%s", r.stdout)
	}
	if n := len(c.show(id[1]).Messages); n != 2*len(msgs) {
		t.Errorf("the continued session holds %d messages, want %d", n, 2*len(msgs))
	}
}

func TestSessionsCommands(t *testing.T) {
	t.Parallel()
	for _, store := range []string{"", "file:sessions", "sqlite:other.db"} {
		t.Run("store="+store, func(t *testing.T) {
			if store != "" {
				skipShort(t, "the default store runs in -short")
			}
			srv := newFake(t,
				openaiReply(turn{text: "One.", calls: []call{{"c1", "list_dir", `{}`}}, in: 5, out: 1}),
				openaiReply(turn{text: "Two.", in: 5, out: 1}),
				openaiReply(turn{text: "Three.", in: 5, out: 1}),
			)
			c := newCLI(t).openai(srv, "sk-test")
			var sf []string
			if store != "" {
				sf = []string{"--store", store}
			}
			c.ok(append([]string{"run", "--session", "alpha", "first"}, sf...)...)
			c.ok(append([]string{"run", "--session", "beta", "second"}, sf...)...)

			list := c.ok(append([]string{"sessions", "list"}, sf...)...)
			if !strings.Contains(list.stdout, "alpha") || !strings.Contains(list.stdout, "beta") {
				t.Errorf("sessions list:\n%s", list.stdout)
			}
			var listed struct {
				Sessions []struct {
					ID       string `json:"id"`
					Messages int    `json:"messages"`
					Turns    int    `json:"turns"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal([]byte(c.ok(append([]string{"sessions", "list", "--json"}, sf...)...).stdout), &listed); err != nil {
				t.Fatal(err)
			}
			if len(listed.Sessions) != 2 || listed.Sessions[0].ID != "beta" || listed.Sessions[1].Messages != 4 || listed.Sessions[1].Turns != 1 {
				t.Errorf("sessions list --json = %+v, want beta (newest) then alpha with 4 messages", listed.Sessions)
			}

			// show --json is {"id","messages",...} with the messages in the
			// message model's storage format, and the session's totals.
			raw := c.ok(append([]string{"sessions", "show", "alpha", "--json"}, sf...)...).stdout
			var top map[string]json.RawMessage
			json.Unmarshal([]byte(raw), &top)
			if string(top["id"]) != `"alpha"` || string(top["model"]) != `"gpt-4o-mini"` || string(top["turns"]) != "1" ||
				string(top["usage"]) != `{"input_tokens":10,"output_tokens":2,"cached_input_tokens":0}` || string(top["cost_usd"]) == "0" {
				t.Errorf("show --json: %s", raw)
			}
			var msgs []map[string]any
			json.Unmarshal(top["messages"], &msgs)
			wantTypes := []string{"user", "assistant", "tool_result", "assistant"}
			var types []string
			for _, m := range msgs {
				types = append(types, fmt.Sprint(m["type"]))
			}
			if !reflect.DeepEqual(types, wantTypes) {
				t.Errorf("message types %v, want %v", types, wantTypes)
			}
			if len(msgs) == 4 {
				use := msgs[1]["content"].([]any)[1].(map[string]any)
				res := msgs[2]
				if use["type"] != "tool_use" || use["id"] != "c1" || use["name"] != "list_dir" || !reflect.DeepEqual(use["input"], map[string]any{}) ||
					res["tool_call_id"] != "c1" || res["is_error"] != false || res["content"].([]any)[0].(map[string]any)["type"] != "text" {
					t.Errorf("tool_use block %v, tool_result message %v", use, res)
				}
			}

			text := c.ok(append([]string{"sessions", "show", "alpha"}, sf...)...).stdout
			for _, want := range []string{"session alpha · gpt-4o-mini (openai) · 1 turn · 10 input / 0 cached / 2 output tokens · $0.000003", "── you ──\nfirst\n", "── assistant ──\nOne.\n", "→ list_dir", "✓ list_dir [tool result c1"} {
				if !strings.Contains(text, want) {
					t.Errorf("sessions show lacks %q:\n%s", want, text)
				}
			}

			if r := c.ok(append([]string{"sessions", "rm", "alpha"}, sf...)...); !strings.Contains(r.stdout, "removed session alpha") {
				t.Errorf("sessions rm: %q", r.stdout)
			}
			for _, args := range [][]string{{"sessions", "rm", "alpha"}, {"sessions", "show", "alpha"}} {
				if r := c.run("", append(args, sf...)...); r.code != 1 || !strings.Contains(r.stderr, `no session "alpha"`) {
					t.Errorf("%v after rm: exit %d, %q", args, r.code, r.stderr)
				}
			}
			if r := c.run("", append([]string{"sessions", "show", "../etc"}, sf...)...); r.code != 2 {
				t.Errorf("an invalid id: exit %d, %q", r.code, r.stderr)
			}
		})
	}
}

func TestChatReadsPromptsFromAPipe(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		openaiReply(turn{text: "Hello, Bo.", in: 10, out: 3}),
		openaiReply(turn{text: "You are Bo.", in: 20, out: 3}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	r := c.run("I am Bo.\n\nWho am I?\n", "chat", "--session", "bo")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stdout != "Hello, Bo.\nYou are Bo.\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	if !strings.Contains(srv.messages(1), "Hello, Bo.") {
		t.Error("the second turn did not carry the first")
	}
	if !strings.Contains(r.stderr, "agcore chat --session bo") {
		t.Errorf("chat does not say how to continue: %s", r.stderr)
	}
}

func TestCtrlCCancelsTheTurnAndKeepsTheSession(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	srv := newFake(t, openaiReply(turn{text: "First.", in: 5, out: 1}), openaiReply(turn{text: "This answer never ends", hang: true}))
	c := newCLI(t).openai(srv, "sk-test")
	c.ok("run", "--session", "s", "one")
	before := c.show("s")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.command(ctx, "run", "--json", "--session", "s", "two")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.Contains(sc.Text(), `"text_delta"`) && len(lines) == 2 {
			cmd.Process.Signal(os.Interrupt) // the answer has started: cancel it
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want status 130", err)
	}
	e := last(t, events(t, strings.Join(lines, "\n")))
	if e.typ() != "error" || e["code"] != "cancelled" {
		t.Errorf("last event = %v, want an error with code cancelled", e)
	}
	if after := c.show("s"); !reflect.DeepEqual(after, before) {
		t.Errorf("the cancelled turn changed the session: %d messages before, %d after", len(before.Messages), len(after.Messages))
	}
}

func errorsAs(err error, target **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	if ok {
		*target = e
	}
	return ok
}

func TestConfigShowsSourcesAndPrecedence(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	writeFiles(t, c.home, map[string]string{"config.json": `{
		"provider": "local",
		"providers": {"local": {"type": "compatible", "base_url": "http://file.example/v1", "model": "file-model", "api_key_env": "LOCAL_KEY"}},
		"tools": ["read_file"], "max_steps": 7
	}`})
	c.env["LOCAL_KEY"] = "sk-local-secret"
	c.env["AGCORE_MODEL"] = "env-model"
	r := c.ok("config", "--json", "--max-steps", "9")
	// One JSON object: `agcore config --json | jq .provider` works.
	var got map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	sources, _ := got["sources"].(map[string]any)
	want := map[string][2]any{
		"provider":    {"local", "file"},
		"kind":        {"compatible", nil},
		"model":       {"env-model", "env AGCORE_MODEL"},
		"base_url":    {"http://file.example/v1", "file"},
		"api_key_env": {"LOCAL_KEY", nil},
		"api_key_set": {true, nil},
		"tools":       {[]any{"read_file"}, "file"},
		"max_steps":   {9.0, "flag --max-steps"},
		"compact":     {"auto", "default"},
	}
	for name, w := range want {
		if !reflect.DeepEqual(got[name], w[0]) {
			t.Errorf("%s = %v, want %v", name, got[name], w[0])
		}
		if w[1] != nil && sources[name] != w[1] {
			t.Errorf("sources[%s] = %v, want %v", name, sources[name], w[1])
		}
	}
	if strings.Contains(r.stdout, "sk-local-secret") {
		t.Error("config printed the key")
	}
	writeFiles(t, c.home, map[string]string{"config.json": `{"providers": {"openai": {"api_key": "sk-in-file"}}}`})
	if r := c.run("", "config"); r.code != 2 || !strings.Contains(r.stderr, "api_key_env") {
		t.Errorf("a key in the config file: exit %d, %q", r.code, r.stderr)
	}
}

func TestCompactionKeepsRequestsInsideTheWindow(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 80) // about 400 tokens
	for _, mode := range []string{"auto", "off"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "off" {
				skipShort(t, "compaction on runs in -short")
			}
			srv := newFake(t)
			c := newCLI(t).openai(srv, "sk-test")
			for i := 1; i <= 5; i++ {
				srv.add(openaiReply(turn{text: fmt.Sprintf("Noted %d.", i), in: 10, out: 2}))
				c.ok("run", "--session", "long", "--tools", "", "--context-window", "2400", "--compact", mode, fmt.Sprintf("MARK%d %s", i, filler))
			}
			last := srv.messages(4)
			kept := 0
			for i := 1; i <= 5; i++ {
				if strings.Contains(last, fmt.Sprintf("MARK%d", i)) {
					kept++
				}
			}
			switch mode {
			case "auto":
				// The task (the first message) and the newest turns stay;
				// older groups in between are dropped.
				if kept == 5 || !strings.Contains(last, "MARK1") || !strings.Contains(last, "MARK5") {
					t.Errorf("the fifth request keeps %d of 5 turns (MARK1 %v, MARK5 %v); want some dropped, the first and last kept",
						kept, strings.Contains(last, "MARK1"), strings.Contains(last, "MARK5"))
				}
			case "off":
				if kept != 5 {
					t.Errorf("--compact off sent %d of 5 turns", kept)
				}
			}
			// Compression shapes requests only: the session keeps everything.
			if n := len(c.show("long").Messages); n != 10 {
				t.Errorf("the session holds %d messages, want 10", n)
			}
		})
	}
}

// Within one turn the tool loop grows the conversation at every step; with
// --compact the guard keeps each model call of the loop inside the input
// budget, while the session keeps every tool result whole.
func TestCompactionKeepsEachStepOfAToolLoopInsideTheWindow(t *testing.T) {
	skipShort(t, "TestCompactionKeepsRequestsInsideTheWindow runs in -short")
	t.Parallel()
	const steps, window = 12, 4000
	info, _ := catalog.Default().Lookup("gpt-4o-mini")
	info.ContextWindow = window
	budget := info.InputBudget()
	counter, _ := tiktoken.For("gpt-4o-mini")
	for _, mode := range []string{"auto", "off"} {
		t.Run(mode, func(t *testing.T) {
			srv := newFake(t)
			c := newCLI(t).openai(srv, "sk-test")
			files := map[string]string{}
			for i := 1; i <= steps; i++ {
				var b strings.Builder
				for j := 1; j <= 18; j++ {
					fmt.Fprintf(&b, "f%d line %d: func handler%d(w http.ResponseWriter) { log.Print(\"f%d\") }\n", i, j, j, i)
				}
				files[fmt.Sprintf("f%d.go", i)] = b.String()
				srv.add(openaiReply(turn{text: fmt.Sprintf("Reading f%d.", i), calls: []call{{fmt.Sprintf("call_%d", i), "read_file", fmt.Sprintf(`{"path":"f%d.go"}`, i)}}, in: 10, out: 2}))
			}
			writeFiles(t, c.dir, files)
			srv.add(openaiReply(turn{text: "Every file defines handlers.", in: 10, out: 2}))
			c.ok("run", "--session", "loop", "--tools", "read_file", "--context-window", fmt.Sprint(window), "--compact", mode, "Read f1.go to f12.go, one at a time.")

			reqs := srv.got()
			if len(reqs) != steps+1 {
				t.Fatalf("%d requests, want %d", len(reqs), steps+1)
			}
			largest := 0
			for i, r := range reqs {
				msgs, tools := wireRequest(t, r.raw)
				n := counter.CountMessages(msgs) + counter.CountTools(tools)
				largest = max(largest, n)
				if err := compact.Validate(msgs); err != nil {
					t.Errorf("request %d: %v", i+1, err)
				}
				if mode == "auto" && n > budget {
					t.Errorf("request %d holds %d tokens, over the budget of %d", i+1, n, budget)
				}
			}
			if mode == "off" && largest < budget*3/2 {
				t.Fatalf("without compression the largest request holds %d tokens; the test needs half as much again as the budget of %d", largest, budget)
			}
			last := srv.messages(steps)
			if !strings.Contains(last, "f12 line 18:") {
				t.Error("the last step lacks the newest tool result")
			}
			if got := strings.Contains(last, "f1 line 18:"); got != (mode == "off") {
				t.Errorf("--compact %s: the last step holds the first tool result: %v", mode, got)
			}
			// Only requests shrink: the session holds every result whole.
			stored := decodeMessages(t, c.show("loop").Messages)
			if err := compact.Validate(stored); err != nil {
				t.Errorf("the stored session: %v", err)
			}
			results := 0
			for _, m := range stored {
				if m.Role == llm.RoleTool {
					results++
					if !strings.Contains(m.Text(), fmt.Sprintf("f%d line 18:", results)) {
						t.Errorf("stored result %d is not whole", results)
					}
				}
			}
			if results != steps {
				t.Errorf("the session holds %d tool results, want %d", results, steps)
			}
		})
	}
}

// wireRequest decodes the messages and tools of an OpenAI Chat Completions
// request body back into llm values, to count them as the CLI does.
func wireRequest(t *testing.T, raw []byte) ([]llm.Message, []llm.ToolDefinition) {
	t.Helper()
	var body struct {
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	var msgs []llm.Message
	for _, m := range body.Messages {
		var text string
		if len(m.Content) > 0 && string(m.Content) != "null" {
			if err := json.Unmarshal(m.Content, &text); err != nil {
				t.Fatalf("message content %s is not a string: %v", m.Content, err)
			}
		}
		msg := llm.Message{Role: llm.Role(m.Role), ToolCallID: m.ToolCallID}
		if m.Role == "tool" {
			msg.Role = llm.RoleTool
		}
		if text != "" {
			msg.Content = append(msg.Content, llm.Text{Text: text})
		}
		for _, tc := range m.ToolCalls {
			msg.Content = append(msg.Content, llm.ToolUse{ID: tc.ID, Name: tc.Function.Name, Input: json.RawMessage(tc.Function.Arguments)})
		}
		msgs = append(msgs, msg)
	}
	var tools []llm.ToolDefinition
	for _, tl := range body.Tools {
		tools = append(tools, llm.ToolDefinition{Name: tl.Function.Name, Description: tl.Function.Description, Parameters: tl.Function.Parameters})
	}
	return msgs, tools
}
