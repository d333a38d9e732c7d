package main_test

import (
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestVersion(t *testing.T) {
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
	c := newCLI(t)
	for _, args := range [][]string{{"frobnicate"}, {"sessions", "frobnicate"}, {"version", "extra"}, {"run", "--no-such-flag"}} {
		r := c.run("", args...)
		if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "--help") {
			t.Errorf("agcore %s: exit %d, stdout %q, stderr %q; want exit 2 and one line pointing to --help", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
}
