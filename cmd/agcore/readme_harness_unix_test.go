//go:build unix

package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/internal/testkit/pgtest"
	"github.com/agcore/agcore/internal/testkit/testenv"
)

// harness is where the documented commands run: see readme_test.go.
type harness struct {
	repo    string   // the repository's root
	bin     string   // the directory put first on PATH
	env     []string // every command's environment but HOME
	home    string   // the template HOME, copied for each group
	project string   // the template project directory (a git repository)
	fixed   map[int]bool
	sem     chan struct{}

	portMu sync.Mutex
	ports  map[int]*sync.Mutex

	temporalOnce sync.Once
	temporalErr  error
}

// fakePorts are the fixed addresses documented commands reach without a
// base URL: Ollama's and vLLM's defaults. A fake provider listens there.
var fakePorts = []int{11434, 8000}

func newHarness(t *testing.T) *harness {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{repo: repo, bin: t.TempDir(), fixed: map[int]bool{}, sem: make(chan struct{}, 3), ports: map[int]*sync.Mutex{}}
	if err := os.Symlink(binary, filepath.Join(h.bin, "agcore")); err != nil {
		t.Fatal(err)
	}

	// One fake provider answers every wire format; it also listens on the
	// fixed ports, when they are free.
	handler := fakeProviders(t)
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	for _, p := range fakePorts {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			t.Logf("127.0.0.1:%d is taken (%v): the commands that need a server there will not run", p, err)
			continue
		}
		s := &http.Server{Handler: handler}
		go s.Serve(l)
		t.Cleanup(func() { s.Close() })
		h.fixed[p] = true
	}

	// The environment: the test's own, without anything of agcore's or a
	// provider's, with the go command's caches and its configuration file
	// kept (HOME changes): without GOENV, a go env -w setting such as
	// GOFLAGS=-buildvcs=false is lost, and the README's go build links
	// the command again instead of finding it up to date.
	goenv := map[string]string{}
	out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH", "GOENV").Output()
	if err == nil {
		vals := strings.Split(strings.TrimSpace(string(out)), "\n")
		for i, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOENV"} {
			if i < len(vals) {
				goenv[k] = vals[i]
			}
		}
	}
	drop := regexp.MustCompile(`^(AGCORE_|OPENAI_|ANTHROPIC_|GEMINI_|GOOGLE_|DEEPSEEK_|OPENROUTER_|GROQ_|XAI_|DASHSCOPE_|MOONSHOT_|VLLM_|OTEL_|HOME=|PATH=|REDIS_PASSWORD=|PGPASSWORD=|PGOPTIONS=)`)
	for _, kv := range os.Environ() {
		if !drop.MatchString(kv) {
			h.env = append(h.env, kv)
		}
	}
	for k, v := range goenv {
		if os.Getenv(k) == "" {
			h.env = append(h.env, k+"="+v)
		}
	}
	if uh, err := os.UserHomeDir(); err == nil && os.Getenv("npm_config_cache") == "" {
		h.env = append(h.env, "npm_config_cache="+filepath.Join(uh, ".npm"))
	}
	// Tests never reach the internet: the go command uses the module
	// cache only, npm its cache and the pinned MCP server only.
	key := "sk-readme-test"
	h.env = append(h.env, "GOPROXY=off", "npm_config_offline=true",
		"PATH="+h.bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"OPENAI_API_KEY="+key, "OPENAI_BASE_URL="+srv.URL+"/v1",
		"ANTHROPIC_API_KEY="+key, "ANTHROPIC_BASE_URL="+srv.URL,
		"GEMINI_API_KEY="+key, "GOOGLE_GEMINI_BASE_URL="+srv.URL,
		"DEEPSEEK_API_KEY="+key, "DEEPSEEK_BASE_URL="+srv.URL,
	)

	// The documented PostgreSQL URLs name no schema: their tables go to
	// a schema of this run's own (PGOPTIONS, which pgx reads), dropped
	// after, not to the public one every other run shares, whatever
	// schema version it holds.
	if raw := os.Getenv("AGCORE_TEST_POSTGRES"); raw != "" {
		h.env = append(h.env, "PGOPTIONS=-c search_path="+pgtest.Schema(t, raw, "readme_"))
	}

	// The template HOME: sessions the examples name (work, notes, a full
	// id), ~/src/project, and a ~/.curlrc that makes the documented curl
	// lines fail on an HTTP error, as they would not by default.
	h.home = t.TempDir()
	if err := os.MkdirAll(filepath.Join(h.home, "src", "project"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.home, ".curlrc"), []byte("--fail-with-body\n--show-error\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"20260105-143012.123-9f86d081884c7d65d6d4f5e2", "9f86d081884c7d65d6d4f5e2-20260105-143012.123", "notes", "work"} {
		cmd := exec.Command(binary, "run", "--session", s, "Hello")
		cmd.Dir, cmd.Env = h.home, append(h.envFor(h.home), "AGCORE_RETRIES=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("seeding session %s: %v\n%s", s, err, out)
		}
	}

	// The template project: a git repository with an uncommitted change,
	// so git diff has something to pipe.
	h.project = t.TempDir()
	files := map[string]string{
		"README.md":     "# project\n\nA small project.\n",
		"main.go":       "package main\n\nfunc main() {}\n",
		"log.txt":       "abc123 first commit\n",
		"docs/notes.md": "# notes\n\n- one\n- two\n",
	}
	for name, body := range files {
		p := filepath.Join(h.project, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=agcore", "-c", "user.email=agcore@example.com", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = h.project, h.envFor(h.home)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("git %v in the project template: %v\n%s", args, err, out)
			break
		}
	}
	os.WriteFile(filepath.Join(h.project, "README.md"), []byte(files["README.md"]+"\nMore text.\n"), 0o644)
	// npx runs the MCP server .ci/mcp-setup.sh installed (pinned) as the
	// project's own, instead of fetching it.
	if dir := os.Getenv("AGCORE_MCP_SERVER_DIR"); dir != "" {
		os.Symlink(filepath.Join(dir, "node_modules"), filepath.Join(h.project, "node_modules"))
	}

	// Files the README's commands leave in the repository's root (go build
	// -o agcore, sqlite:./agcore.db) are removed after the test.
	before := map[string]bool{}
	if entries, err := os.ReadDir(repo); err == nil {
		for _, e := range entries {
			before[e.Name()] = true
		}
	}
	t.Cleanup(func() {
		entries, _ := os.ReadDir(repo)
		for _, e := range entries {
			if !before[e.Name()] && e.Type().IsRegular() && strings.HasPrefix(e.Name(), "agcore") {
				os.Remove(filepath.Join(repo, e.Name()))
			}
		}
	})
	// The README's `go build -o agcore ./cmd/agcore` finds the binary this
	// test built from the same source with the same flags, as after a
	// user's earlier build: the go command checks it is up to date (its
	// build ID) and runs as written without linking it again.
	if !before["agcore"] {
		if out, err := exec.Command("cp", binary, filepath.Join(repo, "agcore")).CombinedOutput(); err != nil {
			t.Logf("copying the built agcore into the repository: %v\n%s", err, out)
		}
	}
	return h
}

// envFor is the environment with HOME set.
func (h *harness) envFor(home string) []string {
	return append(append([]string(nil), h.env...), "HOME="+home)
}

// helpTree walks the command tree through `agcore help PATH...`.
func (h *harness) helpTree(t *testing.T) *helpTree {
	t.Helper()
	ht := &helpTree{nodes: map[string]*helpNode{}}
	queue := []string{""}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		args := append([]string{"help"}, strings.Fields(path)...)
		cmd := exec.Command(binary, args...)
		cmd.Dir, cmd.Env = h.home, h.envFor(h.home)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("agcore %s: %v", strings.Join(args, " "), err)
		}
		n := parseHelp(string(out))
		ht.nodes[path] = n
		for _, s := range n.subs {
			queue = append(queue, strings.TrimSpace(path+" "+s))
		}
	}
	forwarded := map[string]string{}
	ht.forwarded = func(t *testing.T, path string) string {
		t.Helper()
		if !h.temporalReady(t) {
			t.SkipNow() // reported missing (a failure under CI)
		}
		ht.mu.Lock()
		defer ht.mu.Unlock()
		if text, ok := forwarded[path]; ok {
			return text
		}
		// agcore worker --help, with agcore-temporal on PATH: the help
		// a user sees (agcore-temporal worker's).
		cmd := exec.Command(binary, append(strings.Fields(path), "--help")...)
		cmd.Dir, cmd.Env = h.home, h.envFor(h.home)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("agcore %s --help: %v\n%s", path, err, out)
		}
		forwarded[path] = string(out)
		return string(out)
	}
	return ht
}

// lineName is a subtest's name for a command line.
func lineName(l docLine) string {
	s := strings.Join(strings.Fields(l.text), " ")
	if len(s) > 110 {
		s = s[:107] + "..."
	}
	return s
}

// needs is what a group's lines need from the machine.
type needs struct {
	ports    []int // addresses they name (serialized: one group at a time)
	serve    bool  // a curl to agcore serve's port with no serve of their own
	temporal bool  // a Temporal server at 127.0.0.1:7233 with no start-dev of their own
	// waiting is the --session and --turn of a durable turn that waits
	// for approval, which agcore approve lines decide (and a worker).
	waiting []string
	// worker: the lines submit durable turns to the harness's Temporal
	// server and start no worker; the harness starts one, with redis
	// (the --redis of the lines) for the live output.
	worker bool
	redis  string
	// live are the live-output streams (temporal's StreamKey) of the
	// turns the lines name, by Redis URL: cleared before the group, so
	// that a stream an earlier run left is not read as this one's.
	live map[string][]string
}

var addrRe = regexp.MustCompile(`(?:localhost|127\.0\.0\.1|0\.0\.0\.0):(\d+)`)

func (h *harness) needsOf(g docGroup) needs {
	var n needs
	set := map[int]bool{}
	ownServe, ownTemporal, ownWorker := false, false, false
	submitted := map[string]bool{} // session/turn of the durable runs so far
	var redisURLs, turns []string
	for _, l := range g.lines {
		if l.skip != "" || l.ref {
			continue
		}
		for _, m := range addrRe.FindAllStringSubmatch(l.text, -1) {
			p, _ := strconv.Atoi(m[1])
			set[p] = true
		}
		k := kindOf(l.text)
		switch {
		case k.serve:
			ownServe = true
			if !strings.Contains(l.text, "--addr") {
				set[8080] = true
			}
		case k.temporalServer:
			ownTemporal = true
			set[7233] = true
		case k.durable:
			set[7233] = true
			n.temporal = n.temporal || !ownTemporal
			ws := words(withoutComment(l.text))
			ownWorker = ownWorker || k.worker
			if u := flagValue(ws, "--redis"); strings.HasPrefix(u, "redis://") && !contains(redisURLs, u) {
				redisURLs = append(redisURLs, u)
			}
			session, turn := flagValue(ws, "--session"), flagValue(ws, "--turn")
			if session == "" || turn == "" || placeholder.MatchString(session) || placeholder.MatchString(turn) {
				break
			}
			if !contains(turns, session+"/"+turn) {
				turns = append(turns, session+"/"+turn)
			}
			if k.submit {
				submitted[session+"/"+turn] = true
				if !ownWorker && !ownTemporal {
					n.worker = true
					if n.redis == "" {
						n.redis = flagValue(ws, "--redis")
					}
				}
			}
			if len(ws) > 1 && ws[1] == "approve" && !ownTemporal && !submitted[session+"/"+turn] {
				n.waiting = []string{session, turn}
			}
		}
		if !k.serve && (strings.Contains(l.text, "localhost:8080") || strings.Contains(l.text, "127.0.0.1:8080")) && !ownServe {
			n.serve = true
		}
	}
	for p := range set {
		if !contains(fakePorts, p) {
			n.ports = append(n.ports, p)
		}
	}
	sort.Ints(n.ports)
	for _, u := range redisURLs {
		for _, st := range turns {
			if n.live == nil {
				n.live = map[string][]string{}
			}
			session, turn, _ := strings.Cut(st, "/")
			// temporal.StreamKey(temporal.TurnWorkflowID(session, turn))
			n.live[u] = append(n.live[u], "agcore:stream:agcore-turn/"+session+"/"+turn)
		}
	}
	return n
}

// flagValue is the value of --name in ws ("--name V" or "--name=V").
func flagValue(ws []string, name string) string {
	for i, w := range ws {
		if w == name && i+1 < len(ws) {
			return ws[i+1]
		}
		if v, ok := strings.CutPrefix(w, name+"="); ok {
			return v
		}
	}
	return ""
}

func contains[T comparable](ps []T, p T) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// lineKind is what the harness does with a line.
type lineKind struct {
	serve, worker, temporalServer bool // long-running: started, exercised, stopped
	chat                          bool // reads prompts from stdin: given one
	durable                       bool // needs a Temporal server
	submit                        bool // submits a durable turn (agcore run --temporal)
	goCmd                         bool // compiles: a longer timeout
	tools                         []string
}

func kindOf(text string) lineKind {
	var k lineKind
	segs := segments(words(withoutComment(text)))
	for _, s := range segs {
		if len(s) == 0 {
			continue
		}
		switch s[0] {
		case "agcore":
			if len(s) > 1 {
				switch s[1] {
				case "serve":
					k.serve = len(segs) == 1
				case "worker":
					k.worker = len(segs) == 1
					k.durable = true
				case "approve":
					k.durable = true
				case "chat":
					k.chat = true
				}
			}
			for _, w := range s {
				if w == "--temporal" || strings.HasPrefix(w, "--temporal=") {
					k.durable = true
					k.submit = k.submit || len(s) > 1 && s[1] == "run"
				}
			}
		case "temporal":
			k.temporalServer = len(s) > 2 && s[1] == "server" && s[2] == "start-dev"
			k.tools = append(k.tools, "temporal")
		case "go":
			k.goCmd = true
			k.tools = append(k.tools, "go")
		case "jq", "curl", "git", "npx", "node", "docker":
			k.tools = append(k.tools, s[0])
		}
	}
	if strings.Contains(text, "npx ") {
		k.tools = append(k.tools, "npx")
	}
	return k
}

// runGroup runs a group's lines in order in one fresh environment.
func (h *harness) runGroup(t *testing.T, g docGroup, ht *helpTree) {
	runnable := false
	for i := range g.lines {
		l := &g.lines[i]
		if l.span && l.skip == "" && ht.refOnly(l.text) {
			l.ref = true
		}
		runnable = runnable || (l.skip == "" && !l.ref)
	}
	if !runnable {
		for _, l := range g.lines {
			t.Run(lineName(l), func(t *testing.T) {
				if l.skip != "" {
					t.Skip("excluded: " + l.skip)
				}
				checkReference(t, ht, l.text)
			})
		}
		return
	}
	n := h.needsOf(g)
	for _, p := range n.ports {
		m := h.portLock(p)
		m.Lock()
		defer m.Unlock()
		defer portFileLock(t, p)()
	}
	h.sem <- struct{}{}
	defer func() { <-h.sem }()

	home := t.TempDir()
	copyDir(t, h.home, home)
	dir := h.repo
	if !g.inRepo {
		dir = filepath.Join(t.TempDir(), "project")
		copyDir(t, h.project, dir)
	}
	env := h.envFor(home)
	state := filepath.Join(t.TempDir(), "vars.sh")

	var daemons []*daemon
	defer func() {
		for i := len(daemons) - 1; i >= 0; i-- {
			daemons[i].stop(t)
		}
	}()
	if n.live != nil && os.Getenv("AGCORE_TEST_REDIS") != "" {
		clearLive(t, n.live)
	}
	if n.temporal {
		if !h.temporalReady(t) {
			return
		}
		d := startDaemon(t, "temporal server start-dev (for the commands below)", "temporal server start-dev --dynamic-config-value system.enableActivityEagerExecution=true", env, dir)
		if d.waitPort(t, "127.0.0.1:7233", 90*time.Second) {
			daemons = append(daemons, d)
		} else {
			return
		}
	}
	if n.worker || n.waiting != nil {
		line := "agcore worker --provider openai"
		if n.redis != "" {
			line += " --redis " + n.redis
		}
		w := startDaemon(t, "agcore worker (for the commands below)", line, env, dir)
		if !w.waitOutput(t, 30*time.Second) {
			return
		}
		daemons = append(daemons, w)
	}
	if n.waiting != nil {
		run := startDaemon(t, "a durable turn that waits for approval", fmt.Sprintf("agcore-temporal run --session %s --turn %s %q", n.waiting[0], n.waiting[1], approvalPrompt), env, dir)
		run.exitOK = true // decided by the lines below, or interrupted
		if !run.waitText(t, "waits for approval", 60*time.Second) {
			return
		}
		daemons = append(daemons, run)
	}
	if n.serve {
		d := startDaemon(t, "agcore serve (for the commands below)", "agcore serve", env, dir)
		if !d.waitServe(t, "127.0.0.1:8080", 30*time.Second) {
			return
		}
		daemons = append(daemons, d)
	}

	// Durable runs that wait while the group's approve lines decide their
	// calls (as in another terminal): they end after those lines.
	type waitingRun struct {
		l docLine
		d *daemon
	}
	var waitingRuns []waitingRun
	blocked := "" // the first line of the group that could not run: the lines after it may need what it makes
	for i, l := range g.lines {
		t.Run(lineName(l), func(t *testing.T) {
			switch {
			case strings.HasPrefix(l.skip, "-short: "):
				testenv.Short(t, strings.TrimPrefix(l.skip, "-short: "))
			case l.skip != "":
				t.Skip("excluded: " + l.skip)
			case l.ref:
				checkReference(t, ht, l.text)
				return
			case blocked != "":
				t.Skip("an earlier line of its block could not run here: " + blocked)
			}
			blocked = l.text // available skips t (Goexit) when it is not
			if !h.available(t, l.text) {
				return
			}
			blocked = ""
			k := kindOf(l.text)
			switch {
			case k.serve:
				d := startDaemon(t, l.text, l.text, env, dir)
				keep := false // for the lines below that talk to it
				defer func() {
					if !keep {
						d.stop(t)
					}
				}()
				addr, token := serveAddr(l.text)
				if d.waitServe(t, addr, 30*time.Second) {
					exerciseServe(t, addr, token)
					if keep = usedBelow(g.lines[i+1:], addr); keep {
						daemons = append(daemons, d)
					}
				}
			case k.temporalServer:
				d := startDaemon(t, l.text, l.text, env, dir)
				if d.waitPort(t, "127.0.0.1:7233", 90*time.Second) {
					daemons = append(daemons, d) // the block's next lines use it
				} else {
					d.stop(t)
				}
			case k.worker:
				d := startDaemon(t, l.text, l.text, env, dir)
				if d.waitOutput(t, 10*time.Second) {
					daemons = append(daemons, d)
				} else {
					d.stop(t)
				}
			case k.submit:
				// A durable run: it may wait for approval, so it runs in
				// the background (as in a terminal of its own).
				d := startDaemon(t, l.text, fmt.Sprintf("[ -f %[1]q ] && . %[1]q\n%[2]s", state, l.text), env, dir)
				d.exitOK = true // finishRun checks its status
				daemons = append(daemons, d)
				if !decidedBelow(g.lines[i+1:], l.text) {
					h.finishRun(t, d, 0, env, dir, state)
				} else if d.waitText(t, "waits for approval", 60*time.Second) {
					waitingRuns = append(waitingRuns, waitingRun{l, d})
				}
			default:
				h.runLine(t, l.text, k, env, dir, state)
			}
		})
	}
	for _, r := range waitingRuns {
		t.Run(lineName(r.l)+" (ends once decided)", func(t *testing.T) {
			// The calls announced so far were the lines' to decide.
			h.finishRun(t, r.d, len(announceRe.FindAllString(r.d.out.String(), -1)), env, dir, state)
		})
	}
}

// usedBelow reports whether a line among lines that runs talks to addr
// (a server the group started: it stays up for them, as in a terminal of
// its own).
func usedBelow(lines []docLine, addr string) bool {
	_, port, _ := strings.Cut(addr, ":")
	for _, l := range lines {
		if l.skip == "" && !l.ref && (strings.Contains(l.text, addr) || strings.Contains(l.text, "localhost:"+port)) {
			return true
		}
	}
	return false
}

// decidedBelow reports whether an agcore approve line among lines names
// the turn the durable run line submits: the run waits for it.
func decidedBelow(lines []docLine, run string) bool {
	session, turn, ok := durableTurn(run)
	if !ok {
		return false
	}
	for _, l := range lines {
		ws := words(withoutComment(l.text))
		if l.skip == "" && len(ws) > 1 && ws[0] == "agcore" && ws[1] == "approve" && flagValue(ws, "--session") == session && flagValue(ws, "--turn") == turn {
			return true
		}
	}
	return false
}

// announceRe matches a durable run's announcement of a call that waits
// for approval, with the command line that decides it.
var announceRe = regexp.MustCompile(`waits for approval: (.*) \(or --deny\)`)

// finishRun waits for a durable run to end with status 0. A call it
// announces as waiting for approval, past the first handled ones, is
// approved as the announcement says: the harness runs the command line
// printed, as the user would in another terminal.
func (h *harness) finishRun(t *testing.T, d *daemon, handled int, env []string, dir, state string) {
	t.Helper()
	within := 90 * time.Second
	deadline := time.Now().Add(within)
	for {
		ms := announceRe.FindAllStringSubmatch(d.out.String(), -1)
		for ; handled < len(ms); handled++ {
			t.Logf("%s announced a call waiting for approval; running, as printed: %s", d.name, ms[handled][1])
			h.runLine(t, ms[handled][1], lineKind{}, env, dir, state)
		}
		select {
		case <-d.done:
			if d.err != nil {
				t.Errorf("failed (%v)\n$ %s\n%s", d.err, d.name, tail(d.out.String()))
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			d.kill()
			t.Errorf("did not finish within %s\n$ %s\n%s", within, d.name, tail(d.out.String()))
			return
		}
	}
}

// clearLive deletes the live-output streams keys names, by Redis URL
// (only those keys: the database may be shared).
func clearLive(t *testing.T, keys map[string][]string) {
	t.Helper()
	for u, ks := range keys {
		opt, err := redis.ParseURL(u)
		if err != nil {
			t.Errorf("clearing the live output of %v: %v", ks, err)
			continue
		}
		rdb := redis.NewClient(opt)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = rdb.Del(ctx, ks...).Err()
		cancel()
		rdb.Close()
		if err != nil {
			t.Errorf("clearing the live output %v at %s: %v", ks, u, err)
		}
	}
}

func (h *harness) portLock(p int) *sync.Mutex {
	h.portMu.Lock()
	defer h.portMu.Unlock()
	if h.ports[p] == nil {
		h.ports[p] = &sync.Mutex{}
	}
	return h.ports[p]
}

// portFileLock takes an exclusive flock(2) on a file named after port p
// in the temporary directory, so that test processes running at once on
// one machine (the runs of other checkouts) take a documented fixed port
// one at a time too, as portLock makes this process's groups do; the
// func it returns releases it (the system does, should the process die).
func portFileLock(t *testing.T, p int) func() {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), fmt.Sprintf("agcore-readme-port-%d.lock", p)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() { f.Close() }
}

// available reports whether what the line needs is here, and otherwise
// reports it missing (a failure under CI).
func (h *harness) available(t *testing.T, text string) bool {
	t.Helper()
	k := kindOf(text)
	for _, tool := range k.tools {
		if tool == "temporal" {
			continue
		}
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, "%s is not on PATH (the documented command runs it)", tool)
			return false
		}
		if tool == "npx" && os.Getenv("AGCORE_MCP_SERVER_DIR") == "" {
			testenv.Missing(t, "npx would fetch the MCP server from npm: eval \"$(.ci/mcp-setup.sh)\" installs it and sets AGCORE_MCP_SERVER_DIR")
			return false
		}
	}
	if strings.Contains(text, "redis://") && os.Getenv("AGCORE_TEST_REDIS") == "" {
		testenv.Missing(t, "the command uses Redis at the address it names; set AGCORE_TEST_REDIS (e.g. redis://127.0.0.1:6379/15) when a local Redis listens on 127.0.0.1:6379")
		return false
	}
	if strings.Contains(text, "postgres://") && os.Getenv("AGCORE_TEST_POSTGRES") == "" {
		testenv.Missing(t, "the command uses PostgreSQL at the address it names; set AGCORE_TEST_POSTGRES when a local PostgreSQL listens on 127.0.0.1:5432")
		return false
	}
	if (k.durable || k.temporalServer) && !h.temporalReady(t) {
		return false
	}
	if (strings.Contains(text, "--provider ollama") || strings.Contains(text, ":11434")) && !h.fixed[11434] {
		testenv.Missing(t, "127.0.0.1:11434 (Ollama's default) is taken, so the fake provider cannot listen there")
		return false
	}
	if (strings.Contains(text, "--provider vllm") || strings.Contains(text, ":8000")) && !h.fixed[8000] {
		testenv.Missing(t, "127.0.0.1:8000 (vLLM's default) is taken, so the fake provider cannot listen there")
		return false
	}
	return true
}

// temporalReady reports whether the Temporal CLI is available, and builds
// agcore-temporal from the temporal/ module onto PATH (once).
func (h *harness) temporalReady(t *testing.T) bool {
	t.Helper()
	cli := os.Getenv("AGCORE_TEMPORAL_CLI")
	if cli == "" {
		testenv.Missing(t, "durable runs need the Temporal dev server: eval \"$(.ci/temporal-setup.sh)\" sets AGCORE_TEMPORAL_CLI")
		return false
	}
	h.temporalOnce.Do(func() {
		if err := os.Symlink(cli, filepath.Join(h.bin, "temporal")); err != nil {
			h.temporalErr = err
			return
		}
		build := exec.Command("go", "build", "-o", filepath.Join(h.bin, "agcore-temporal"), "./cmd/agcore-temporal")
		build.Dir = filepath.Join(h.repo, "temporal")
		build.Env = append(os.Environ(), "GOPROXY=off")
		if out, err := build.CombinedOutput(); err != nil {
			h.temporalErr = fmt.Errorf("building agcore-temporal from the module cache (cd temporal && go mod download fills it): %v\n%s", err, out)
		}
	})
	if h.temporalErr != nil {
		t.Fatal(h.temporalErr)
	}
	return true
}

// runLine runs one command with bash and expects exit status 0. Shell
// variables it assigns are kept in state for the block's next lines.
func (h *harness) runLine(t *testing.T, text string, k lineKind, env []string, dir, state string) {
	t.Helper()
	timeout := 90 * time.Second
	if k.goCmd {
		timeout = 4 * time.Minute
	}
	script := fmt.Sprintf(`set -o pipefail
[ -f %[1]q ] && . %[1]q
__readme_before=" $(compgen -v | tr '\n' ' ') "
%[2]s
__readme_rc=$?
for __readme_v in $(compgen -v); do
	case "$__readme_before" in *" $__readme_v "*) continue;; esac
	case "$__readme_v" in __readme*) continue;; esac
	declare -p "$__readme_v"
done >> %[1]q 2>/dev/null
exit $__readme_rc
`, state, text)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if k.chat {
		cmd.Stdin = strings.NewReader("Hello\n")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("did not finish within %s\nstdout:\n%s\nstderr:\n%s", timeout, tail(stdout.String()), tail(stderr.String()))
		return
	}
	if err != nil {
		t.Errorf("failed (%v) after %s\n$ %s\nstdout:\n%s\nstderr:\n%s", err, time.Since(start).Round(time.Millisecond), text, tail(stdout.String()), tail(stderr.String()))
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}

// copyDir copies a directory tree: directories, regular files with their
// modes, and symbolic links as links (what cp -a keeps of a test home or
// project; done here, it spares a process per copy).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(to, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, info.Mode().Perm())
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, data, info.Mode().Perm())
		}
		return nil // sockets and the like: not part of a test tree
	})
	if err != nil {
		t.Fatalf("copying %s: %v", from, err)
	}
}

// daemon is a long-running documented command.
type daemon struct {
	name   string
	exitOK bool // any exit status will do (a harness helper, not a documented line)
	cmd    *exec.Cmd
	out    *syncBuffer
	done   chan struct{}
	err    error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startDaemon starts text with bash in its own process group.
func startDaemon(t *testing.T, name, text string, env []string, dir string) *daemon {
	t.Helper()
	d := &daemon{name: name, out: &syncBuffer{}, done: make(chan struct{})}
	d.cmd = exec.Command("bash", "-c", text)
	d.cmd.Dir, d.cmd.Env = dir, env
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { d.err = d.cmd.Wait(); close(d.done) }()
	return d
}

// waitPort waits until addr accepts connections, failing the test if the
// command exits or the time runs out.
func (d *daemon) waitPort(t *testing.T, addr string, within time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case <-d.done:
			t.Errorf("%s exited (%v) before listening on %s:\n%s", d.name, d.err, addr, tail(d.out.String()))
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("%s did not listen on %s within %s:\n%s", d.name, addr, within, tail(d.out.String()))
	d.kill()
	return false
}

// waitServe waits until agcore serve says it listens, and then for its
// port: a port alone may be another program's (on a shared machine, another
// run of these tests), which would make the lines below talk to it and a
// SIGINT reach this one before it handles signals.
func (d *daemon) waitServe(t *testing.T, addr string, within time.Duration) bool {
	t.Helper()
	return d.waitText(t, "listening on", within) && d.waitPort(t, addr, within)
}

// waitOutput waits until the command has written something and is still
// running a moment later (a worker has no port to wait for).
func (d *daemon) waitOutput(t *testing.T, within time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) && d.out.String() == "" {
		select {
		case <-d.done:
			t.Errorf("%s exited (%v):\n%s", d.name, d.err, tail(d.out.String()))
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	select {
	case <-d.done:
		t.Errorf("%s exited (%v):\n%s", d.name, d.err, tail(d.out.String()))
		return false
	case <-time.After(time.Second):
		return true
	}
}

// waitText waits until the command has written text.
func (d *daemon) waitText(t *testing.T, text string, within time.Duration) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if strings.Contains(d.out.String(), text) {
			return true
		}
		select {
		case <-d.done:
			t.Errorf("%s exited (%v) before writing %q:\n%s", d.name, d.err, text, tail(d.out.String()))
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Errorf("%s did not write %q within %s:\n%s", d.name, text, within, tail(d.out.String()))
	d.kill()
	return false
}

func (d *daemon) kill() {
	syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
	}
}

// stop interrupts the command as Ctrl-C would (SIGINT to its process
// group) and expects a clean exit: status 0, or 130 (the conventional
// status after Ctrl-C), within 20 s.
func (d *daemon) stop(t *testing.T) {
	t.Helper()
	select {
	case <-d.done:
		return // already reported
	default:
	}
	syscall.Kill(-d.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		d.kill()
		t.Errorf("%s did not exit within 20s of SIGINT:\n%s", d.name, tail(d.out.String()))
		return
	}
	var ee *exec.ExitError
	if d.err != nil && !d.exitOK && !(errors.As(d.err, &ee) && ee.ExitCode() == 130) {
		t.Errorf("%s did not exit cleanly after SIGINT (%v):\n%s", d.name, d.err, tail(d.out.String()))
	}
}

// serveAddr is where a documented agcore serve line listens, and its
// token if it sets one.
func serveAddr(text string) (addr, token string) {
	addr = "127.0.0.1:8080"
	if m := regexp.MustCompile(`--addr[ =](\S+)`).FindStringSubmatch(text); m != nil {
		addr = strings.Replace(m[1], "0.0.0.0", "127.0.0.1", 1)
	}
	if m := regexp.MustCompile(`AGCORE_SERVE_TOKENS=([^\s,]+)`).FindStringSubmatch(text); m != nil {
		if _, secret, ok := strings.Cut(m[1], "="); ok {
			token = secret
		}
	}
	return addr, token
}

// exerciseServe lists the models and runs one Chat Completions turn.
func exerciseServe(t *testing.T, addr, token string) {
	t.Helper()
	do := func(method, path, body string) {
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		c := &http.Client{Timeout: 60 * time.Second}
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("%s %s: %v", method, path, err)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %s: %s\n%s", method, path, resp.Status, b)
		}
	}
	do("GET", "/v1/models", "")
	do("POST", "/v1/chat/completions", `{"model":"agcore","messages":[{"role":"user","content":"Hi"}]}`)
}

// approvalPrompt is the prompt of the turn the harness starts for agcore
// approve's examples.
const approvalPrompt = "Write notes.md (a call that waits for approval)"

// approvalCalls are the prompts the fake model answers with a write_file
// call (which waits for approval), when write_file is offered: the
// harness's own turn for agcore approve's examples, and the documented
// durable turns.
var approvalCalls = map[string]call{
	approvalPrompt:            {id: "call_1", name: "write_file", args: `{"path":"notes.md","content":"notes"}`},
	"Tidy the notes in docs/": {id: "call_1", name: "write_file", args: `{"path":"docs/notes.md","content":"# Notes\n\n- One.\n- Two.\n"}`},
}

// fakeProviders answers every provider's wire format with a short answer:
// Chat Completions, the Responses API, Anthropic Messages and Gemini, each
// streamed or not, and the model lists.
func fakeProviders(t *testing.T) http.Handler {
	responses := fixture(t, "openai-responses/responses-stream-text.sse")
	gemini := fixture(t, "gemini/stream-text.sse")
	text := "This is the fake provider's answer."
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body struct {
			Stream   bool `json:"stream"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		json.Unmarshal(raw, &body)
		// The turns of approvalCalls call write_file, which waits for
		// approval; once it is decided (the last message is its
		// result), the answer is text.
		offered := false
		for _, tl := range body.Tools {
			offered = offered || tl.Function.Name == "write_file"
		}
		if n := len(body.Messages); n > 0 && offered && body.Messages[n-1].Role == "user" {
			for prompt, c := range approvalCalls {
				if strings.Contains(fmt.Sprint(body.Messages[n-1].Content), prompt) {
					openaiReply(turn{calls: []call{c}, in: 12, out: 8})(w, r)
					return
				}
			}
		}
		p := r.URL.Path
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(p, "/models"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"object":"list","data":[{"id":"llama3.2","object":"model","type":"model","owned_by":"fake"},{"id":"qwen3","object":"model","type":"model","owned_by":"fake"}],"models":[{"name":"models/gemini-2.5-flash"}]}`)
		case strings.HasSuffix(p, "/chat/completions") && body.Stream:
			openaiReply(turn{text: text, in: 12, out: 8})(w, r)
		case strings.HasSuffix(p, "/chat/completions"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":8,"total_tokens":20}}`, text)
		case strings.HasSuffix(p, "/responses"):
			responses(w, r)
		case strings.HasSuffix(p, "/v1/messages") && body.Stream:
			anthropicReply(turn{text: text, in: 12, out: 8})(w, r)
		case strings.HasSuffix(p, "/v1/messages"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":8}}`, text)
		case strings.Contains(p, ":streamGenerateContent"):
			gemini(w, r)
		case strings.Contains(p, ":generateContent"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"candidates":[{"content":{"parts":[{"text":%q}],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":8,"totalTokenCount":20}}`, text)
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":"the fake provider does not serve %s %s","type":"invalid_request_error"}}`, r.Method, p)
		}
	})
}
