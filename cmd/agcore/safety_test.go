package main_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPathEscapesAreRefused(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secret.txt": "TOP-SECRET-CONTENT\n"})
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	writeFiles(t, root, map[string]string{"ok.txt": "fine\n"})
	writeFiles(t, parent, map[string]string{"sibling.txt": "TOP-SECRET-SIBLING\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	escapes := []call{
		{"c1", "read_file", `{"path":"../sibling.txt"}`},
		{"c2", "read_file", `{"path":"` + filepath.ToSlash(filepath.Join(outside, "secret.txt")) + `"}`},
		{"c3", "read_file", `{"path":"link.txt"}`},
		{"c4", "list_dir", `{"path":".."}`},
		{"c5", "grep", `{"pattern":"SECRET","path":"../"}`},
		{"c6", "read_file", `{"path":"ok.txt"}`},
	}
	srv := newFake(t, openaiReply(turn{calls: escapes}), openaiReply(turn{text: "Done."}))
	c := newCLI(t).openai(srv, "sk-test")
	r := c.ok("run", "--json", "--root", root, "Read everything")

	results := ofType(events(t, r.stdout), "tool_result")
	if len(results) != len(escapes) {
		t.Fatalf("%d tool results, want %d", len(results), len(escapes))
	}
	for i, res := range results[:5] {
		out, _ := res["output"].(string)
		if res["is_error"] != true || !strings.Contains(out, "outside the root") {
			t.Errorf("call %s (%s) gave is_error=%v %q; want an error saying the path is outside the root", escapes[i].id, escapes[i].args, res["is_error"], out)
		}
	}
	if ok := results[5]; ok["is_error"] != false || ok["output"] != "fine\n" {
		t.Errorf("the call inside the root gave %v", ok)
	}
	sent := string(srv.got()[1].raw)
	if containsAny([]string{sent, r.stdout, r.stderr}, "TOP-SECRET-") {
		t.Error("content from outside the root reached the model or the output")
	}
}

func TestWriteFileNeedsApproval(t *testing.T) {
	t.Parallel()
	write := call{"w1", "write_file", `{"path":"out.txt","content":"written"}`}
	tests := []struct {
		name    string
		args    []string
		written bool
	}{
		{"denied without --yes when not interactive", nil, false},
		{"approved with --yes", []string{"--yes"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, openaiReply(turn{calls: []call{write}}), openaiReply(turn{text: "ok"}))
			c := newCLI(t).openai(srv, "sk-test")
			args := append([]string{"run", "--json", "--tools", "read_file,write_file"}, tt.args...)
			r := c.ok(append(args, "Write it")...)
			res := ofType(events(t, r.stdout), "tool_result")[0]
			_, err := os.Stat(filepath.Join(c.dir, "out.txt"))
			if written := err == nil; written != tt.written || res["is_error"] == tt.written {
				t.Errorf("written %v, result %v; want written %v", written, res, tt.written)
			}
			if !tt.written && !strings.Contains(res["output"].(string), "--yes") {
				t.Errorf("the denial does not say how to allow it: %v", res["output"])
			}
		})
	}
}

func TestAPIKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	const canary = "sk-canary-7f3c9e1d2b4a"
	srv := newFake(t,
		openaiReply(turn{text: "Reading.", calls: []call{{"c1", "read_file", `{"path":"f.txt"}`}}, in: 10, out: 3}),
		openaiReply(turn{text: "Done.", in: 20, out: 2}),
		status(401, `{"error":{"message":"Incorrect API key provided: sk-can***e1d2b4a","type":"invalid_request_error","code":"invalid_api_key"}}`),
	)
	c := newCLI(t).openai(srv, canary)
	writeFiles(t, c.dir, map[string]string{"f.txt": "data\n"})
	logFile := filepath.Join(c.home, "agcore.log")
	fileStore := filepath.Join(c.home, "jsonl")

	var outputs []string
	for _, args := range [][]string{
		{"run", "--log", logFile, "--session", "k1", "Read f.txt"},
		{"run", "--json", "--log", logFile, "--session", "k1", "Again"}, // fails with 401
		{"config"},
		{"config", "--json"},
		{"sessions", "show", "k1"},
		{"sessions", "show", "--json", "k1"},
		{"sessions", "list", "--json", "--store", "file:" + fileStore},
	} {
		r := c.run("", args...)
		outputs = append(outputs, r.stdout, r.stderr)
	}
	for i, req := range srv.got() {
		if got := req.header.Get("Authorization"); got != "Bearer "+canary {
			t.Errorf("request %d: Authorization %q, want the key (the test must prove it was used)", i, got)
		}
	}
	for i, out := range outputs {
		if strings.Contains(out, canary) {
			t.Errorf("output %d holds the API key:\n%s", i, out)
		}
	}
	if log, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(log), "model call") {
		t.Errorf("the log was not written (%v): %s", err, log)
	}
	// Every file under AGCORE_HOME: the SQLite database and its WAL, the
	// log, the chat history, the file store.
	filepath.WalkDir(c.home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
		} else if strings.Contains(string(b), canary) {
			t.Errorf("%s holds the API key", p)
		}
		return nil
	})
	if !fileExists(filepath.Join(c.home, "agcore.db")) {
		t.Error("the default store was not created in AGCORE_HOME")
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func TestNoProviderSaysHowToConfigureOne(t *testing.T) {
	t.Parallel()
	for _, cmd := range [][]string{{"run", "hi"}, {"chat"}} {
		t.Run(cmd[0], func(t *testing.T) {
			c := newCLI(t)
			r := c.run("", cmd...)
			if r.code != 2 {
				t.Errorf("exit %d, want 2", r.code)
			}
			for _, want := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY", "AGCORE_PROVIDER=ollama", "OPENAI_BASE_URL", "agcore demo"} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("the help lacks %q:\n%s", want, r.stderr)
				}
			}
		})
	}
	c := newCLI(t)
	r := c.run("", "run", "--json", "--provider", "anthropic", "hi")
	if e := last(t, events(t, r.stdout)); r.code != 2 || e["code"] != "auth" || !strings.Contains(e["message"].(string), "ANTHROPIC_API_KEY") {
		t.Errorf("--json without a key: exit %d, event %v", r.code, e)
	}
}

func TestAnthropicToolLoop(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		anthropicReply(turn{thinking: "I should read it.", text: "Reading.", calls: []call{{"toolu_1", "read_file", `{"path":"a.txt"}`}, {"toolu_2", "list_dir", `{}`}}, in: 30, out: 9}),
		anthropicReply(turn{text: "It says alpha.", in: 60, out: 4, cached: 30}),
	)
	c := newCLI(t)
	c.env["ANTHROPIC_API_KEY"] = "sk-ant-test"
	c.env["ANTHROPIC_BASE_URL"] = srv.URL
	writeFiles(t, c.dir, map[string]string{"a.txt": "alpha\n"})
	r := c.ok("run", "--json", "What does a.txt say?") // the provider is detected from the key

	evs := events(t, r.stdout)
	if deltas(evs, "thinking_delta") != "I should read it." || deltas(evs, "text_delta") != "Reading.It says alpha." {
		t.Errorf("thinking %q, text %q", deltas(evs, "thinking_delta"), deltas(evs, "text_delta"))
	}
	done := last(t, evs)
	if u := done["usage"].(map[string]any); u["input_tokens"] != 90.0 || u["cached_input_tokens"] != 30.0 || u["output_tokens"] != 13.0 {
		t.Errorf("done.usage = %v", u)
	}
	second := srv.got()[1]
	if second.path != "/v1/messages" || second.header.Get("x-api-key") != "sk-ant-test" {
		t.Errorf("second request to %s with key %q", second.path, second.header.Get("x-api-key"))
	}
	body := string(second.raw)
	for _, want := range []string{`"tool_use_id":"toolu_1"`, `"tool_use_id":"toolu_2"`, `"signature":"sig-1"`, `alpha\n`} {
		if !strings.Contains(body, want) {
			t.Errorf("the second request lacks %s: %s", want, body)
		}
	}
}

func TestSecretsAreRefusedUnlessAllowed(t *testing.T) {
	t.Parallel()
	const secret = "OPENAI_API_KEY=sk-THE-SECRET-IN-DOTENV"
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		file    string // the config file, when set
		allowed bool
	}{
		{"refused by default", nil, nil, "", false},
		{"allowed by --allow-secret", []string{"--allow-secret", ".env*"}, nil, "", true},
		{"allowed by its name", []string{"--allow-secret", ".env"}, nil, "", true},
		{"another pattern allows nothing", []string{"--allow-secret", "*.pem"}, nil, "", false},
		{"allowed by AGCORE_ALLOW_SECRETS", nil, map[string]string{"AGCORE_ALLOW_SECRETS": "*.pem,.env*"}, "", true},
		{"allowed by the config file", nil, nil, `{"allow_secrets": [".env*"]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newFake(t, openaiReply(turn{calls: []call{{"c1", "read_file", `{"path":".env"}`}}}), openaiReply(turn{text: "Done."}))
			c := newCLI(t).openai(srv, "sk-test")
			writeFiles(t, c.dir, map[string]string{".env": secret + "\n"})
			for k, v := range tt.env {
				c.env[k] = v
			}
			if tt.file != "" {
				writeFiles(t, c.home, map[string]string{"config.json": tt.file})
			}
			r := c.ok(append(append([]string{"run", "--json"}, tt.args...), "Read .env")...)
			res := ofType(events(t, r.stdout), "tool_result")
			if len(res) != 1 {
				t.Fatalf("%d tool results, want 1:\n%s", len(res), r.stdout)
			}
			out, _ := res[0]["output"].(string)
			sent := string(srv.got()[1].raw)
			if tt.allowed {
				if res[0]["is_error"] != false || out != secret+"\n" || !strings.Contains(sent, "THE-SECRET-IN-DOTENV") {
					t.Errorf("allowed, read_file .env gave is_error=%v %q", res[0]["is_error"], out)
				}
				return
			}
			want := `refused: .env matches the secret pattern .env*; the user can allow it with --allow-secret '.env*'`
			if res[0]["is_error"] != true || !strings.Contains(out, want) {
				t.Errorf("read_file .env gave is_error=%v %q; want an error containing %q", res[0]["is_error"], out, want)
			}
			if containsAny([]string{sent, r.stdout, r.stderr}, "THE-SECRET-IN-DOTENV") {
				t.Error("the content of .env reached the model or the output")
			}
		})
	}
}
