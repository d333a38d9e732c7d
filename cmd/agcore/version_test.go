package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	r := c.ok("version")
	line := strings.TrimSuffix(r.stdout, "\n")
	if strings.Contains(line, "\n") || !regexp.MustCompile(`^agcore version (\(devel\)|v\S+), `).MatchString(line) || !strings.HasSuffix(line, ", "+runtime.Version()) {
		t.Errorf("agcore version printed %q; want one line: agcore version VERSION[, commit C], GO", r.stdout)
	}
	// The commit is printed when the build recorded one (go build in a
	// checkout with VCS stamping on).
	meta, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`vcs\.revision=(\S+)`).FindSubmatch(meta); m != nil && !strings.Contains(line, "commit "+string(m[1])) {
		t.Errorf("agcore version printed %q; the build recorded the commit %s", line, m[1])
	}
	if v := c.ok("--version"); v.stdout != r.stdout {
		t.Errorf("agcore --version printed %q, agcore version %q", v.stdout, r.stdout)
	}
}

func TestUnknownCommandsAreUsageErrors(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	for _, args := range [][]string{{"frobnicate"}, {"sessions", "frobnicate"}, {"version", "extra"}, {"run", "--no-such-flag"}} {
		r := c.run("", args...)
		if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "--help") {
			t.Errorf("agcore %s: exit %d, stdout %q, stderr %q; want exit 2 and one line pointing to --help", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
}

// TestDocsListEveryCommand: the README's command table and the package doc
// name every command agcore --help lists.
func TestDocsListEveryCommand(t *testing.T) {
	t.Parallel()
	help := newCLI(t).ok("--help").stdout
	_, list, ok := strings.Cut(help, "Available Commands:\n")
	if !ok {
		t.Fatalf("no command list in agcore --help:\n%s", help)
	}
	list, _, _ = strings.Cut(list, "\n\n")
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(readme), "## The `agcore` command\n\n```\n")
	table, _, _ = strings.Cut(table, "```")
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(list, "\n") {
		name := strings.Fields(line)[0]
		if name == "help" {
			continue
		}
		if !strings.Contains(table, "\nagcore "+name+" ") && !strings.HasPrefix(table, "agcore "+name+" ") {
			t.Errorf("the README's command table does not list agcore %s", name)
		}
		if !strings.Contains(string(doc), "//\tagcore "+name+" ") {
			t.Errorf("cmd/agcore/doc.go does not list agcore %s", name)
		}
	}
}
