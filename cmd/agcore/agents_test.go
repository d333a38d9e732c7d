package main_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// toolNames returns the names of the tools request i offered.
func toolNames(t *testing.T, srv *fake, i int) []string {
	t.Helper()
	var names []string
	tools, _ := srv.got()[i].body["tools"].([]any)
	for _, tl := range tools {
		fn, _ := tl.(map[string]any)["function"].(map[string]any)
		name, _ := fn["name"].(string)
		names = append(names, name)
	}
	return names
}

// systemText returns request i's system message.
func systemText(t *testing.T, srv *fake, i int) string {
	t.Helper()
	msgs, _ := srv.got()[i].body["messages"].([]any)
	for _, m := range msgs {
		if mm := m.(map[string]any); mm["role"] == "system" {
			s, _ := mm["content"].(string)
			return s
		}
	}
	return ""
}

// run --agent NAME and chat --agent NAME talk to the config file's agent:
// its provider, model, base URL, instructions, tools and step limit
// replace the command's, and the default agent's server is never called.
func TestRunAndChatWithANamedAgent(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"run", "chat"} {
		t.Run(command, func(t *testing.T) {
			t.Parallel()
			def := newFake(t) // the default agent's server: never called
			reviewer := newFake(t,
				openaiReply(turn{calls: []call{{id: "c1", name: "read_file", args: `{"path":"main.go"}`}}, in: 10, out: 3}),
				openaiReply(turn{calls: []call{{id: "c2", name: "read_file", args: `{"path":"main.go"}`}}, in: 20, out: 3}),
			)
			c := newCLI(t).openai(def, "sk-test")
			writeFiles(t, c.dir, map[string]string{"main.go": "package main\n"})
			writeFiles(t, c.home, map[string]string{"config.json": fmt.Sprintf(`{"agents": {
				"reviewer": {"provider": "compatible", "model": "review-model", "base_url": %q,
					"system": "You review Go code.", "tools": ["read_file"], "max_steps": 2, "description": "reviews"},
				"writer": {"system": "You write."}}}`, reviewer.URL+"/v1")})

			var r result
			if command == "run" {
				r = c.run("", "run", "--json", "--agent", "reviewer", "--store", "memory:", "Review main.go")
			} else {
				r = c.run("Review main.go\n", "chat", "--agent", "reviewer", "--store", "memory:")
			}
			if len(def.got()) != 0 {
				t.Errorf("the default agent's server got %d requests", len(def.got()))
			}
			// max_steps 2: two model calls, then the step limit.
			if n := len(reviewer.got()); n != 2 {
				t.Fatalf("the agent's server got %d requests, want 2 (max_steps)\nstdout:\n%s\nstderr:\n%s", n, r.stdout, r.stderr)
			}
			if got := reviewer.got()[0].body["model"]; got != "review-model" {
				t.Errorf("model %v", got)
			}
			if got := systemText(t, reviewer, 0); got != "You review Go code." {
				t.Errorf("system %q", got)
			}
			if got := toolNames(t, reviewer, 0); !slices.Equal(got, []string{"read_file"}) {
				t.Errorf("tools %q", got)
			}
			if command == "run" {
				evs := events(t, r.stdout)
				if start := ofType(evs, "start"); len(start) != 1 || start[0]["model"] != "review-model" {
					t.Errorf("start events %v", start)
				}
				if done := last(t, evs); done.typ() != "done" || done["finish_reason"] != "max_steps" {
					t.Errorf("last event %v", done)
				}
			} else if !strings.Contains(r.stderr, "agent reviewer") {
				t.Errorf("chat's header does not name the agent:\n%s", r.stderr)
			}
		})
	}
}

// An agent name the config file does not have is a usage error (exit 2)
// that lists the agents it has, before any model call; with --json also an
// error event.
func TestUnknownAgentIsAUsageError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		config string
		args   []string
		want   string
	}{
		{"run", `{"agents": {"writer": {}, "reviewer": {}}}`, []string{"run", "--agent", "revewer", "hi"}, `--agent "revewer": no such agent in `},
		{"chat", `{"agents": {"writer": {}, "reviewer": {}}}`, []string{"chat", "--agent", "revewer"}, `its agents: reviewer, writer`},
		{"no agents", `{}`, []string{"run", "--agent", "reviewer", "hi"}, `has no agents`},
		{"json", `{"agents": {"writer": {}}}`, []string{"run", "--json", "--agent", "x", "hi"}, `its agents: writer`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t)
			c := newCLI(t).openai(srv, "sk-test")
			writeFiles(t, c.home, map[string]string{"config.json": tt.config})
			r := c.run("", tt.args...)
			if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", r.code, r.stderr, tt.want)
			}
			if slices.Contains(tt.args, "--json") {
				var ev event
				if err := json.Unmarshal([]byte(strings.TrimSpace(r.stdout)), &ev); err != nil || ev.typ() != "error" || !strings.Contains(fmt.Sprint(ev["message"]), tt.want) {
					t.Errorf("stdout %q, want one error event", r.stdout)
				}
			}
			if n := len(srv.got()); n != 0 {
				t.Errorf("%d model calls", n)
			}
		})
	}
}
