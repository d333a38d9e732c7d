//go:build unix

package main_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The README is a test (issue 21): every command line the README shows and
// every example of every command's --help is run, exactly as written, with
// bash, against the built binaries; a documented command that fails fails
// the test.
//
// What is run:
//   - every logical line of the README's ```sh blocks (a line continued with
//     a backslash or inside an open quote is one command; comments are not
//     run). The lines of one block run in order in one environment, and a
//     shell variable a line assigns (id=$(curl ...)) is seen by the next;
//   - every inline code span of the README's prose that starts with a
//     command (agcore, go, git, curl, eval, cd, or NAME=value before one).
//     A span that names a command without concrete arguments (`agcore
//     serve`, `agcore run --temporal`, `agcore sessions show SESSION`: only
//     the command's words, flags and UPPERCASE placeholders) is a reference
//     to the command: it is checked, not run (the command exists and has
//     those flags);
//   - the lines of untyped ``` blocks that start with "agcore " (the usage
//     synopsis): checked as references;
//   - every line of every command's Examples, walking the command tree
//     through `agcore help ...`; each runs on its own, in a project
//     directory of its own, but an example that submits the same durable
//     turn as the one before it (--session and --turn: it attaches to that
//     turn) runs after it, in the same environment.
//
// Exclusions are explicit: an HTML comment `<!-- readme-test: skip: REASON -->`
// on the line before a fenced block excludes the block, and the table
// excluded below lists single lines, each with its reason; excluded lines
// are skipped subtests that say why (go test -v lists them). The test suite
// itself (go test, go vet) is excluded by rule: running it here would
// recurse.
//
// The harness (readme_harness_unix_test.go) gives every command a fresh
// HOME (so ~/.agcore is its own) holding seeded sessions, a PATH with the
// built agcore (and, when the Temporal dev server is available,
// agcore-temporal and temporal), and the provider variables pointing at a
// fake that answers every wire format; servers the commands name by
// address (Ollama's and vLLM's default ports) are fakes listening there.
// Long-running commands (agcore serve, agcore worker, temporal server
// start-dev) are started, waited for, exercised, and stopped with SIGINT,
// and must exit cleanly. A durable run (agcore run --temporal) runs in the
// background, as in a terminal of its own: when agcore approve lines
// below it name its turn, they run once it waits for approval; otherwise
// a call it announces is approved with the command line it printed; it
// must then exit 0. A group that submits durable turns and starts no
// worker gets one (agcore worker --provider openai), and the live-output
// streams in Redis of the turns a group names are cleared before it runs.
// README blocks run in the clone, but a block that starts a worker runs
// in a project directory (the worker's file tools write there).

// excluded lists documented lines that are not run, with the reason. Keep
// it short: a line that can run here should.
var excluded = map[string]string{
	"docker run --rm -p 16686:16686 -p 4317:4317 -p 4318:4318 jaegertracing/jaeger:latest":     "starts Jaeger in Docker, which CI does not have; the next line runs without it (a failed export is one line on stderr)",
	"(cd temporal && go install ./cmd/agcore-temporal)":                                        "installs agcore-temporal into GOBIN; the harness builds it from temporal/ and puts it on PATH instead",
	"cd bench && go run ./cmd/benchtable":                                                      "the peer benchmark table takes 3-5 minutes; .ci/run runs the bench module's quick test",
	`eval "$(.ci/openai-node-setup.sh)"`:                                                       "CI's own setup step; .ci/run runs it before the tests",
	"agcore mcp login https://mcp.example.com/mcp":                                             "a login to a remote server in a browser; TestMCPOAuthLoginRunRefreshRevoke runs agcore mcp login against a local authorization server, the browser played by the test",
	"agcore worker --temporal temporal.internal:7233 --task-queue agents --provider anthropic": "names a Temporal server on another host (temporal.internal); the example before it runs a worker against the local one",
}

// excludedByRule returns why line is not run by rule, or "".
// long lists documented lines that go test -short does not run, with
// the reason; the full run (CI's) runs them.
var long = map[string]string{
	"go run ./examples/cacheshare": "a simulation of 230 turns over two strategies (about 6 s of CPU on the 2-core machine)",
}

// goRun matches a go run line, after any environment assignments.
var goRun = regexp.MustCompile(`^(\S+=\S*\s+)*go run \./`)

func excludedByRule(line string) string {
	if testing.Short() {
		if why := long[line]; why != "" {
			return "-short: " + why
		}
		// Each go run costs the go command's check of every package it
		// builds (0.5-1 s of CPU here); -short keeps the first screen's.
		if goRun.MatchString(line) && line != "go run ./cmd/agcore demo" {
			return "-short: one go run line is run (the first screen's); this one's code runs in its package's tests, and the full run runs the line"
		}
	}
	if regexp.MustCompile(`(^|[;&|(]\s*|\s)go (test|vet)\b`).MatchString(line) {
		return "the test suite or a benchmark: CI runs those itself, and running the suite from inside it would recurse"
	}
	return ""
}

// docLine is one command line of the documentation.
type docLine struct {
	text string // the command, exactly as written (continuation lines included)
	line int    // its line in the README; 0 for --help examples
	// skip is why it is not run; ref marks a reference, checked, not run.
	skip string
	ref  bool
	// span marks an inline code span: an agcore span that only names a
	// command (helpTree.refOnly) is a reference.
	span bool
}

// docGroup is command lines run in order in one environment: a README
// block, an inline span, or one --help example.
type docGroup struct {
	name  string
	lines []docLine
	// inRepo runs the group in the repository's root (README commands such
	// as go run ./cmd/agcore expect a clone); otherwise in a project
	// directory of its own.
	inRepo bool
}

func TestDocumentedCommands(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	help := h.helpTree(t)
	groups := readmeGroups(string(readme))
	for _, path := range help.paths() {
		prev := ""
		for _, ex := range help.nodes[path].examples {
			l := docLine{text: ex, skip: excluded[ex]}
			if prev != "" && attaches(prev, ex) {
				// It attaches to the turn the example before it runs:
				// they run in order, in one environment.
				groups[len(groups)-1].lines = append(groups[len(groups)-1].lines, l)
			} else {
				groups = append(groups, docGroup{name: strings.TrimSpace("help/agcore " + path), lines: []docLine{l}})
			}
			prev = ex
		}
	}
	var skipped []string
	for _, g := range groups {
		for _, l := range g.lines {
			if l.skip != "" {
				skipped = append(skipped, fmt.Sprintf("%s: %s\n      (%s)", g.name, l.text, l.skip))
			}
		}
	}
	t.Logf("%d groups of documented commands; %d lines excluded:\n  %s", len(groups), len(skipped), strings.Join(skipped, "\n  "))
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			h.runGroup(t, g, help)
		})
	}
}

// readmeGroups extracts the README's command lines.
func readmeGroups(readme string) []docGroup {
	var groups []docGroup
	lines := strings.Split(readme, "\n")
	var prose strings.Builder // text outside fences, with line markers
	proseLine := []int{}      // README line of each byte-run start in prose
	skipNext := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trim := strings.TrimSpace(l)
		if m := regexp.MustCompile(`^<!--\s*readme-test:\s*skip:\s*(.*?)\s*-->$`).FindStringSubmatch(trim); m != nil {
			skipNext = m[1]
			continue
		}
		if !strings.HasPrefix(trim, "```") {
			proseLine = append(proseLine, prose.Len(), i+1)
			prose.WriteString(l + "\n")
			continue
		}
		info := strings.TrimSpace(strings.TrimPrefix(trim, "```"))
		start := i + 1
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
			body = append(body, lines[i])
		}
		switch info {
		case "sh", "bash", "shell", "console":
			g := docGroup{name: fmt.Sprintf("README.md:%d", start), inRepo: true}
			for _, c := range shellCommands(body, start+1) {
				c.skip = firstNonEmpty(skipNext, excluded[withoutComment(c.text)], excludedByRule(withoutComment(c.text)))
				g.lines = append(g.lines, c)
				if c.skip == "" && kindOf(c.text).worker {
					// Its file tools work in --root (.), and the turns
					// may write: not in the clone.
					g.inRepo = false
				}
			}
			groups = append(groups, g)
		case "":
			for j, b := range body {
				if strings.HasPrefix(b, "agcore ") {
					syn := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(b), 2)[0]
					groups = append(groups, docGroup{name: fmt.Sprintf("README.md:%d", start+1+j), lines: []docLine{{text: syn, line: start + 1 + j, ref: true}}})
				}
			}
		}
		skipNext = ""
	}
	for _, s := range codeSpans(prose.String()) {
		line := 0
		for k := 0; k+1 < len(proseLine); k += 2 {
			if proseLine[k] <= s.off {
				line = proseLine[k+1]
			}
		}
		if !looksLikeCommand(s.text) {
			continue
		}
		d := docLine{text: s.text, line: line, span: true}
		d.skip = firstNonEmpty(excluded[s.text], excludedByRule(s.text))
		if d.skip == "" && !strings.HasPrefix(s.text, "agcore ") && hasPlaceholder(words(s.text)) {
			d.skip = "names a placeholder, not a value"
		}
		groups = append(groups, docGroup{name: fmt.Sprintf("README.md:%d", line), lines: []docLine{d}, inRepo: true})
	}
	return groups
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// shellCommands splits the lines of a shell block into commands: a line
// ending in a backslash, or inside an open quote or $( ), goes on; blank
// and comment lines are not commands. first is the first line's number.
func shellCommands(lines []string, first int) []docLine {
	var out []docLine
	var cur []string
	start := 0
	for i, l := range lines {
		if len(cur) == 0 {
			t := strings.TrimSpace(l)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			start = first + i
		}
		cur = append(cur, l)
		text := strings.Join(cur, "\n")
		if complete(text) {
			out = append(out, docLine{text: strings.TrimSpace(text), line: start})
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, docLine{text: strings.TrimSpace(strings.Join(cur, "\n")), line: start})
	}
	return out
}

// complete reports whether s is a whole shell command: no open quote or
// $( ), and no backslash before its end.
func complete(s string) bool {
	var quote byte
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case c == '\\':
			if i == len(s)-1 {
				return false
			}
			i++
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '$' && i+1 < len(s) && s[i+1] == '(' {
				depth++
				i++
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			depth++
			i++
		case c == ')' && depth > 0:
			depth--
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t' || s[i-1] == '\n'):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		}
	}
	return quote == 0 && depth == 0
}

// withoutComment is s without its trailing # comment.
func withoutComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case c == '\\':
			i++
		case quote == '"':
			if c == '"' {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

// words splits a command into shell words, roughly: quotes and $( ) are
// kept inside a word; operators (|, &&, ;) are words of their own.
func words(s string) []string {
	var out []string
	var cur strings.Builder
	var quote byte
	depth := 0
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case quote == '"':
			if c == '\\' && i+1 < len(s) {
				cur.WriteByte(c)
				i++
				c = s[i]
			} else if c == '"' {
				quote = 0
			}
		case c == '\\' && i+1 < len(s):
			if s[i+1] == '\n' {
				i++
				flush()
				continue
			}
			cur.WriteByte(c)
			i++
			c = s[i]
		case c == '\'' || c == '"':
			quote = c
		case c == '$' && i+1 < len(s) && s[i+1] == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case depth == 0 && (c == ' ' || c == '\t' || c == '\n'):
			flush()
			continue
		case depth == 0 && (c == '|' || c == ';' || c == '&'):
			flush()
			op := string(c)
			if i+1 < len(s) && (s[i+1] == '|' || s[i+1] == '&') {
				op += string(s[i+1])
				i++
			}
			out = append(out, op)
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	return out
}

// segments splits words into the simple commands of a pipeline or list,
// each without its leading NAME=value assignments.
func segments(ws []string) [][]string {
	var out [][]string
	var cur []string
	for _, w := range ws {
		switch w {
		case "|", "||", "&&", ";", "&":
			out = append(out, cur)
			cur = nil
			continue
		}
		if len(cur) == 0 && assignment.MatchString(w) {
			continue
		}
		cur = append(cur, w)
	}
	return append(out, cur)
}

var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// placeholder matches a word that stands for a value: ID, SESSION, TURN,
// "...".
var placeholder = regexp.MustCompile(`^\[?[A-Z][A-Z_]+\]?$|^"?(\.\.\.|…)"?$|/[A-Z][A-Z_]+(/|$)`)

func hasPlaceholder(ws []string) bool {
	for _, w := range ws {
		if !assignment.MatchString(w) && placeholder.MatchString(w) {
			return true
		}
	}
	return false
}

// looksLikeCommand reports whether an inline code span is a command line.
func looksLikeCommand(s string) bool {
	ws := words(s)
	for len(ws) > 0 && assignment.MatchString(ws[0]) {
		ws = ws[1:]
	}
	if len(ws) == 0 {
		return false
	}
	switch ws[0] {
	case "agcore", "go", "git", "curl", "eval", "cd":
		return len(ws) > 1
	}
	return false
}

// refOnly reports whether an agcore span names a command rather than
// running one: nothing but the command's words, flags without values, and
// placeholders (`agcore serve`, `agcore run --temporal`, `agcore sessions
// show SESSION`).
func (ht *helpTree) refOnly(s string) bool {
	ws := words(s)
	if len(ws) == 0 || ws[0] != "agcore" {
		return false
	}
	path := ""
	for _, w := range ws[1:] {
		switch {
		case strings.HasPrefix(w, "-") && !strings.Contains(w, "="):
		case placeholder.MatchString(w):
		default:
			next := strings.TrimSpace(path + " " + w)
			if _, ok := ht.nodes[next]; !ok {
				return false
			}
			path = next
		}
	}
	return true
}

// codeSpan is one inline code span of Markdown prose.
type codeSpan struct {
	text string
	off  int
}

// codeSpans finds the inline code spans of prose: a run of backticks opens
// one, the next run of the same length closes it; a line break inside is a
// space.
func codeSpans(prose string) []codeSpan {
	var out []codeSpan
	for i := 0; i < len(prose); {
		if prose[i] != '`' {
			i++
			continue
		}
		n := 0
		for i+n < len(prose) && prose[i+n] == '`' {
			n++
		}
		open := i
		j := i + n
		closed := false
		for j < len(prose) {
			if prose[j] != '`' {
				j++
				continue
			}
			m := 0
			for j+m < len(prose) && prose[j+m] == '`' {
				m++
			}
			if m == n {
				text := strings.ReplaceAll(prose[open+n:j], "\n", " ")
				if strings.HasPrefix(text, " ") && strings.HasSuffix(text, " ") && strings.TrimSpace(text) != "" {
					text = text[1 : len(text)-1]
				}
				out = append(out, codeSpan{text: strings.Join(strings.Fields(text), " "), off: open})
				i = j + m
				closed = true
				break
			}
			j += m
		}
		if !closed {
			i = open + n
		}
	}
	return out
}

// helpNode is one command's help: its subcommands and examples.
type helpNode struct {
	text     string
	subs     []string
	examples []string
}

// helpTree is the command tree as `agcore help ...` shows it, keyed by the
// command's path without "agcore" ("" for the root, "sessions list").
type helpTree struct {
	mu    sync.Mutex
	nodes map[string]*helpNode
	// forwarded is the help of the agcore-temporal command an agcore
	// command runs (agcore worker --help, with agcore-temporal on PATH).
	forwarded func(t *testing.T, path string) string
}

func (ht *helpTree) paths() []string {
	var ps []string
	for p := range ht.nodes {
		ps = append(ps, p)
	}
	sort.Strings(ps)
	return ps
}

// parseHelp reads one help text.
func parseHelp(text string) *helpNode {
	n := &helpNode{text: text}
	section := ""
	var cur []string
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		l := sc.Text()
		if l != "" && !strings.HasPrefix(l, " ") {
			section = strings.TrimSuffix(l, ":")
			continue
		}
		switch section {
		case "Available Commands":
			if f := strings.Fields(l); len(f) > 0 && f[0] != "help" {
				n.subs = append(n.subs, f[0])
			}
		case "Examples":
			if strings.TrimSpace(l) == "" {
				continue
			}
			cur = append(cur, strings.TrimPrefix(l, "  "))
			if s := strings.Join(cur, "\n"); complete(s) {
				if t := strings.TrimSpace(s); !strings.HasPrefix(t, "#") {
					n.examples = append(n.examples, t)
				}
				cur = nil
			}
		}
	}
	return n
}

// checkReference checks that a reference to a command (a synopsis line or
// an inline mention) names a command that exists, with flags it has. The
// word after a flag that takes a value is its value (--max-result-bytes
// -1). The flags of a command that runs agcore-temporal with its own
// arguments (agcore worker, agcore approve) are agcore-temporal's.
func checkReference(t *testing.T, ht *helpTree, text string) {
	t.Helper()
	ws := words(text)
	path := ""
	node := ht.nodes[""]
	flags := node.text
	for i := 1; i < len(ws); i++ {
		w := strings.Trim(ws[i], "[]")
		switch {
		case w == "" || w == "flags" || placeholder.MatchString(w):
		case strings.HasPrefix(w, "-"):
			name, _, inline := strings.Cut(w, "=")
			found, value := flagSpec(flags, name)
			if !found && !regexp.MustCompile(`(?m)(^|[\s,])`+regexp.QuoteMeta(name)+`\b`).MatchString(flags) {
				t.Errorf("%q: agcore %s has no flag %s (see agcore %s --help)", text, path, name, path)
			}
			if value && !inline {
				i++ // its value, whatever it looks like
			}
		default:
			next := strings.TrimSpace(path + " " + w)
			if n, ok := ht.nodes[next]; ok {
				node, path, flags = n, next, n.text
				if forwardRe.MatchString(n.text) {
					if ht.forwarded == nil {
						t.Fatalf("%q: agcore %s runs agcore-temporal, whose help is not available here", text, next)
					}
					flags = ht.forwarded(t, next)
				}
				continue
			}
			if len(node.subs) > 0 {
				t.Errorf("%q: agcore %s has no command %q (it has %s)", text, path, w, strings.Join(node.subs, ", "))
				return
			}
		}
	}
}

// forwardRe matches the help of an agcore command that runs an
// agcore-temporal command with the same arguments (worker, approve).
var forwardRe = regexp.MustCompile(`runs agcore-temporal \w+ with the same arguments`)

// flagSpec finds flag name (--long or -s) in the Flags section of a help
// text, and whether it takes a value ("--tools string", not "--deny").
func flagSpec(help, name string) (found, value bool) {
	var re *regexp.Regexp
	if strings.HasPrefix(name, "--") {
		re = regexp.MustCompile(`(?m)^\s+(?:-\w, )?` + regexp.QuoteMeta(name) + `(?: (\S+))?(?:\s{2,}|$)`)
	} else {
		re = regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(name) + `, --[\w-]+(?: (\S+))?(?:\s{2,}|$)`)
	}
	m := re.FindStringSubmatch(help)
	if m == nil {
		return false, false
	}
	return true, m[1] != ""
}

// durableTurn is the --session and --turn of a line that submits a
// durable turn (agcore run --temporal), if it names both.
func durableTurn(text string) (session, turn string, ok bool) {
	for _, s := range segments(words(withoutComment(text))) {
		if len(s) < 2 || s[0] != "agcore" || s[1] != "run" || flagValue(s, "--temporal") == "" {
			continue
		}
		session, turn = flagValue(s, "--session"), flagValue(s, "--turn")
		if session != "" && turn != "" && !placeholder.MatchString(session) && !placeholder.MatchString(turn) {
			return session, turn, true
		}
	}
	return "", "", false
}

// attaches reports whether a --help example submits the same durable turn
// as the example before it: it attaches to that turn, so the two run in
// order in one environment.
func attaches(prev, ex string) bool {
	s1, t1, ok1 := durableTurn(prev)
	s2, t2, ok2 := durableTurn(ex)
	return ok1 && ok2 && s1 == s2 && t1 == t2
}

// The extraction finds what the README shows, as a reader would copy it.
func TestDocumentedCommandsExtraction(t *testing.T) {
	md := "Run `agcore run\n--session work \"hi\"` or `agcore serve`; not `AGCORE_HOME`.\n\n" +
		"```sh\n" +
		"agcore demo   # it's offline\n" +
		"# a comment line\n" +
		"curl -s http://127.0.0.1:8080/x \\\n  -d '{\"a\":1,\n  \"b\":2}'\n" +
		"id=$(echo 'x\n y')\n" +
		"```\n\n" +
		"<!-- readme-test: skip: needs a browser -->\n```sh\nopen http://localhost:8080\n```\n\n" +
		"```\nagcore sessions show ID [--json]   what it does\n```\n"
	var got []string
	for _, g := range readmeGroups(md) {
		for _, l := range g.lines {
			got = append(got, fmt.Sprintf("%s|%d|%q|skip=%v|ref=%v|span=%v", g.name, l.line, l.text, l.skip != "", l.ref, l.span))
		}
	}
	want := []string{
		`README.md:4|5|"agcore demo   # it's offline"|skip=false|ref=false|span=false`,
		`README.md:4|7|"curl -s http://127.0.0.1:8080/x \\\n  -d '{\"a\":1,\n  \"b\":2}'"|skip=false|ref=false|span=false`,
		`README.md:4|10|"id=$(echo 'x\n y')"|skip=false|ref=false|span=false`,
		`README.md:15|16|"open http://localhost:8080"|skip=true|ref=false|span=false`,
		`README.md:20|20|"agcore sessions show ID [--json]"|skip=false|ref=true|span=false`,
		`README.md:1|1|"agcore run --session work \"hi\""|skip=false|ref=false|span=true`,
		`README.md:2|2|"agcore serve"|skip=false|ref=false|span=true`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("extracted:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	ht := &helpTree{nodes: map[string]*helpNode{"": {subs: []string{"serve", "run"}}, "serve": {}, "run": {}}}
	for s, ref := range map[string]bool{"agcore serve": true, "agcore run --temporal": true, "agcore run --session work \"hi\"": false, "agcore models claude": false} {
		if ht.refOnly(s) != ref {
			t.Errorf("refOnly(%q) = %v, want %v", s, !ref, ref)
		}
	}
	if got := withoutComment(`go install x@latest   # next to agcore`); got != "go install x@latest" {
		t.Errorf("withoutComment: %q", got)
	}
	workerHelp := "Flags:\n      --blobs string           claim-check store\n  -h, --help   help\n      --deny   deny\n      --max-result-bytes int   cut\n  -m, --model string   model id\n"
	for name, want := range map[string][2]bool{"--blobs": {true, true}, "--deny": {true, false}, "--max-result-bytes": {true, true}, "-m": {true, true}, "--model": {true, true}, "-1": {false, false}, "--max": {false, false}} {
		if found, value := flagSpec(workerHelp, name); found != want[0] || value != want[1] {
			t.Errorf("flagSpec(%s) = %v, %v; want %v, %v", name, found, value, want[0], want[1])
		}
	}
	ht.nodes["worker"] = &helpNode{text: "worker runs agcore-temporal worker with the same arguments: …\n\nFlags:\n  -h, --help   help for worker\n"}
	ht.forwarded = func(*testing.T, string) string { return workerHelp }
	checkReference(t, ht, "agcore worker --max-result-bytes -1 --blobs DIR -m x")
	if got := attaches(`agcore run --temporal 127.0.0.1:7233 --session work --turn t1 "Hi"`, `agcore run --temporal 127.0.0.1:7233 --session work --turn t1 "Hi"   # attach`); !got {
		t.Error("a run of the same --session and --turn does not attach")
	}
	if attaches(`agcore approve --session work --turn t1`, `agcore approve --session work --turn t1 call_1`) {
		t.Error("approve examples attach")
	}
}
