package main_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Shell completion is listed in the help and completes subcommands,
// flags, providers, models and tool names.
func TestCompletion(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	if r := c.ok("--help"); !regexp.MustCompile(`(?m)^  completion\s`).MatchString(r.stdout) || !strings.Contains(r.stdout, "models") {
		t.Errorf("--help does not list completion and models:\n%s", r.stdout)
	}
	if r := c.ok("completion", "bash"); !strings.Contains(r.stdout, "__start_agcore") {
		t.Errorf("completion bash: %.200s", r.stdout)
	}
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{""}, []string{"run\t", "chat\t", "sessions\t", "models\t", "config\t", "completion\t"}},
		{[]string{"run", "--ti"}, []string{"--timeout\t"}},
		{[]string{"run", "--provider", ""}, []string{"openai", "vllm", "openrouter", "groq", "compatible", "demo"}},
		{[]string{"chat", "-m", "so"}, []string{"sonnet\talias of claude-sonnet-4-6"}},
		{[]string{"run", "--tools", "read_file,"}, []string{"read_file,grep", "read_file,write_file"}},
	}
	for _, tt := range tests {
		r := c.ok(append([]string{"__complete"}, tt.args...)...)
		for _, w := range tt.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("completing %q lacks %q:\n%s", tt.args, w, r.stdout)
			}
		}
	}
}

// --log writes durations in readable units.
func TestLogDurationsAreReadable(t *testing.T) {
	t.Parallel()
	srv := newFake(t, openaiReply(turn{text: "ok"}))
	c := newCLI(t).openai(srv, "sk-test")
	logFile := filepath.Join(c.home, "agcore.log")
	c.ok("run", "--log", logFile, "hi")
	f, err := os.Open(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	unit := regexp.MustCompile(`^[0-9.]+(µs|ms|s|m[0-9.]+s)$`)
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if d, ok := rec["duration"]; ok {
			found++
			if s, _ := d.(string); !unit.MatchString(s) {
				t.Errorf("duration %v is not in readable units", d)
			}
		}
	}
	if found == 0 {
		t.Error("the log has no duration")
	}
}
