package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A skip is recorded as one JSON line appended to a spool file shared by
// every test binary one go command runs: the binaries are the go
// command's children, so the file is named after their parent's process
// id. Lines are short, and appends of one write each do not interleave.

// spoolDir is where the skip records are kept.
func spoolDir() string { return filepath.Join(os.TempDir(), "agcore-test-skips") }

// spoolFile is the spool file of the go command that runs this binary.
func spoolFile() string {
	return filepath.Join(spoolDir(), strconv.Itoa(os.Getppid())+".jsonl")
}

// skip is one recorded skip.
type skip struct {
	Pkg  string `json:"pkg"`
	Test string `json:"test"`
	Msg  string `json:"msg"`
	// Short marks a test skipped by -short (Msg says why), not for want
	// of something on the machine.
	Short bool `json:"short,omitempty"`
}

// record appends a skip of test with msg to the spool file. Failing to
// record is not the test's failure: the skip itself still happens.
func record(test, msg string) { write(skip{Pkg: packageDir(), Test: test, Msg: msg}) }

// recordShort appends a skip of test by -short.
func recordShort(test, why string) {
	write(skip{Pkg: packageDir(), Test: test, Msg: why, Short: true})
}

// write appends s to the spool file.
func write(s skip) {
	if err := os.MkdirAll(spoolDir(), 0o777); err != nil {
		return
	}
	f, err := os.OpenFile(spoolFile(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return
	}
	defer f.Close()
	line, _ := json.Marshal(s)
	f.Write(append(line, '\n'))
}

// packageDir names the test's package by its directory relative to the
// module root ("session/postgres"), or the directory itself.
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "?"
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if rel, err := filepath.Rel(dir, wd); err == nil {
				return filepath.ToSlash(rel)
			}
			return wd
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd
		}
		dir = parent
	}
}

// Report waits until the go command that runs this test binary has no
// other child process left running (every other package's build and test
// is done; at most wait), then writes to w the skips recorded in this go
// command's run, grouped by what was missing, and removes its spool file
// along with any left over from runs more than a day old. It returns how
// many tests were skipped.
func Report(w io.Writer, wait time.Duration) int {
	waitForSiblings(wait)
	path := spoolFile()
	skips := readSkips(path)
	os.Remove(path)
	cleanOld()
	if len(skips) == 0 {
		return 0
	}
	type group struct {
		msg   string
		tests []string
	}
	byMsg := map[string]*group{}
	var order []string
	for _, s := range skips {
		g := byMsg[s.Msg]
		if g == nil {
			g = &group{msg: s.Msg}
			byMsg[s.Msg] = g
			order = append(order, s.Msg)
		}
		g.tests = append(g.tests, s.Pkg+"."+s.Test)
	}
	sort.Strings(order)
	fmt.Fprintf(w, "\nagcore: %d tests did not run (they skip outside CI and fail under CI):\n", len(skips))
	for _, m := range order {
		g := byMsg[m]
		sort.Strings(g.tests)
		fmt.Fprintf(w, "  - %s\n    %d: %s\n", g.msg, len(g.tests), summarize(g.tests, 4))
	}
	fmt.Fprintf(w, "  .ci/run sets all of them up (PostgreSQL, Redis, the npm packages, Chromium, the Temporal dev server) and runs everything.\n")
	return len(skips)
}

// ReportLine is [Report] for go test -short: it waits as Report does, then
// writes one line to w naming what did not run, by package for the tests
// -short skipped and by what was missing for the others, and how to run
// them, and removes the spool file. It returns how many tests were skipped
// (0 writes nothing).
func ReportLine(w io.Writer, wait time.Duration) int {
	waitForSiblings(wait)
	path := spoolFile()
	skips := readSkips(path)
	os.Remove(path)
	cleanOld()
	if len(skips) == 0 {
		return 0
	}
	short, missing := map[string]int{}, map[string]int{}
	nShort := 0
	for _, s := range skips {
		if s.Short {
			short[s.Pkg]++
			nShort++
		} else {
			missing[needs(s.Msg)]++
		}
	}
	var parts []string
	if nShort > 0 {
		parts = append(parts, fmt.Sprintf("%d slow %s (%s; go test ./... without -short runs them)", nShort, plural(nShort, "test"), counts(short)))
	}
	if n := len(skips) - nShort; n > 0 {
		parts = append(parts, fmt.Sprintf("%d that need a service or tool (%s; .ci/run sets them up and runs everything)", n, counts(missing)))
	}
	fmt.Fprintf(w, "\nagcore: -short skipped %s\n", strings.Join(parts, " and "))
	return len(skips)
}

// needs names what a recorded skip's message says is missing, in a word.
func needs(msg string) string {
	l := strings.ToLower(msg)
	for _, k := range []struct{ key, name string }{
		{"postgres", "PostgreSQL"}, {"redis", "Redis"}, {"temporal", "Temporal"},
		{"chrom", "Chromium"}, {"npm", "npm packages"}, {"npx", "npm packages"}, {"node", "Node.js"},
		{"go command", "the go command"}, {"go is not", "the go command"}, {"is taken", "a free port"},
	} {
		if strings.Contains(l, k.key) {
			return k.name
		}
	}
	return "other tools"
}

// counts lists a map's keys with their counts, largest first.
func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// plural returns word, with an s unless n is 1.
func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// summarize lists up to n names, then how many more.
func summarize(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}

func readSkips(path string) []skip {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []skip
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s skip
		if json.Unmarshal(sc.Bytes(), &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// cleanOld removes spool files older than a day (a run interrupted before
// its report).
func cleanOld() {
	entries, err := os.ReadDir(spoolDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
			os.Remove(filepath.Join(spoolDir(), e.Name()))
		}
	}
}

// waitForSiblings waits until this process's parent has had no other
// child for a second and a half, or until max has passed. Where process
// lists cannot be read (not Linux), it returns at once.
func waitForSiblings(max time.Duration) {
	deadline := time.Now().Add(max)
	quietSince := time.Time{}
	for time.Now().Before(deadline) {
		n, ok := siblings()
		if !ok {
			return
		}
		if n > 0 {
			quietSince = time.Time{}
		} else if quietSince.IsZero() {
			quietSince = time.Now()
		} else if time.Since(quietSince) > 1500*time.Millisecond {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// siblings counts the other running children of this process's parent,
// from /proc.
func siblings() (int, bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	self, parent := os.Getpid(), os.Getppid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil && ppid == parent {
			n++
		}
	}
	return n, true
}
