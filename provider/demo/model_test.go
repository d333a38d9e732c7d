package demo

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/tool/fstool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// turnOver runs one turn of the demo model through the real tool loop and
// the real file tools on dir.
func turnOver(t *testing.T, dir string, names []string) *llm.Response {
	t.Helper()
	tools, err := fstool.ByName(dir, names, fstool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := middleware.Chain(&Model{}, middleware.FunctionInvocation(middleware.ToolLoop{Tools: tools}))
	resp, err := llm.Collect(m.Stream(context.Background(), &llm.Request{
		Messages: []llm.Message{llm.UserText("Overview, please.")},
	}))
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestThePlanReadsWhatTheListingShows(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"README.md":    "# Widget Works\n\n<img src=x>\n\nWidget Works makes widgets.\nIt makes them fast.\n\nMore text.\n",
		"go.mod":       "module example.com/widgets\n\ngo 1.26\n",
		"package.json": `{"name":"widgets-ui","description":"The widget UI"}`,
		"z.txt":        "zzz",
		".env":         "SECRET=1",
		"src/main.go":  "package main\n",
	})
	resp := turnOver(t, dir, fstool.DefaultNames)

	// list_dir, then three parallel read_file calls, then the summary.
	var steps [][]string
	for _, m := range resp.Transcript {
		if m.Role != llm.RoleAssistant {
			continue
		}
		var calls []string
		for _, u := range m.ToolUses() {
			calls = append(calls, u.Name+string(u.Input))
		}
		steps = append(steps, calls)
	}
	want := [][]string{
		{`list_dir{"path":"."}`},
		{`read_file{"path":"README.md","limit":40}`, `read_file{"path":"go.mod","limit":40}`, `read_file{"path":"package.json","limit":40}`},
		nil,
	}
	if len(steps) != len(want) || strings.Join(steps[0], " ") != strings.Join(want[0], " ") || strings.Join(steps[1], " ") != strings.Join(want[1], " ") || len(steps[2]) != 0 {
		t.Fatalf("steps = %q, want %q", steps, want)
	}
	text := resp.Message.Text()
	for _, s := range []string{
		"5 entries (1 directory and 4 files)", // .env is a secret: list_dir leaves it out
		"- Directories: src/",
		"README.md — “Widget Works”: Widget Works makes widgets. It makes them fast. (8 lines read)",
		"go.mod — the Go module example.com/widgets, Go 1.26",
		"package.json — the npm package widgets-ui: The widget UI",
		"scripted demo model",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("the summary lacks %q:\n%s", s, text)
		}
	}
	if strings.Contains(text, "SECRET") {
		t.Error("the summary read a hidden file")
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 || resp.Usage.CachedInputTokens == 0 {
		t.Errorf("usage = %+v, want input, cached and output counted", resp.Usage)
	}
}

func TestThePlanCopesWithOddDirectories(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		tools []string
		want  string
	}{
		{"empty", nil, fstool.DefaultNames, "The working directory is empty"},
		{"nothing readable", map[string]string{"image.png": "\x89PNG", "sub/a.go": "package a"}, fstool.DefaultNames, "- Files: image.png (none of them looked like text worth reading)"},
		{"a binary among the picks", map[string]string{"README.md": "# R\x00\x01"}, fstool.DefaultNames, "README.md — could not be read:"},
		{"no tools offered", nil, []string{"grep"}, "needs the read_file and list_dir tools"},
		{"one file is read alone", map[string]string{"notes.md": "Plain notes.\n"}, fstool.DefaultNames, "notes.md — Plain notes. (1 line read)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, tt.files)
			resp := turnOver(t, dir, tt.tools)
			if got := resp.Message.Text(); !strings.Contains(got, tt.want) {
				t.Errorf("answer lacks %q:\n%s", tt.want, got)
			}
		})
	}
}

func TestIDsStayUniqueAcrossTurns(t *testing.T) {
	earlier := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse{ID: "call_1", Name: "list_dir", Input: json.RawMessage(`{}`)}}}
	req := &llm.Request{
		Messages: []llm.Message{llm.UserText("a"), earlier, llm.ToolResultText("call_1", "x\n", false), llm.AssistantText("ok"), llm.UserText("again")},
		Tools:    []llm.ToolDefinition{{Name: "list_dir"}, {Name: "read_file"}},
	}
	resp, err := (&Model{}).Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if calls := resp.Message.ToolUses(); len(calls) != 1 || calls[0].ID != "call_2" || resp.FinishReason != llm.FinishToolUse {
		t.Errorf("calls %v, finish %s: want list_dir as call_2", calls, resp.FinishReason)
	}
}

func TestStreamPacesAndStopsOnCancel(t *testing.T) {
	m := &Model{Delay: 5 * time.Millisecond}
	req := &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}
	start := time.Now()
	var text strings.Builder
	for ev, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.EventTextDelta {
			text.WriteString(ev.Delta)
		}
	}
	if words := strings.Count(text.String(), " "); time.Since(start) < time.Duration(words)*m.Delay {
		t.Errorf("%d words streamed in %s, want a pause between pieces", words, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var err error
	for ev, e := range m.Stream(ctx, req) {
		if ev.Type == llm.EventTextDelta {
			cancel()
		}
		err = e
	}
	if llm.KindOf(err) != llm.KindCancelled {
		t.Errorf("after cancel: %v, want a cancelled error", err)
	}
}
