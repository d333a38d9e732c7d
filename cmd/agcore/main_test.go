package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testenv"
)

// The end-to-end tests build the agcore binary once and run it as a user
// would, against fake providers served by this test process.

var binary string // the agcore binary under test

func TestMain(m *testing.M) {
	// Most of these tests wait: on the processes they start, on a fake
	// provider, on a server's shutdown. Unless -parallel is given, more of
	// them run at once than the default of one per CPU.
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		flag.Set("test.parallel", fmt.Sprint(4*runtime.GOMAXPROCS(0)))
	}
	dir, err := os.MkdirTemp("", "agcore-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Chmod(dir, 0o755) // the tests run it as another user too
	binary = filepath.Join(dir, "agcore")
	if runtime.GOOS == "windows" {
		binary += ".exe"
	}
	if err := buildAgcore(binary); err != nil {
		fmt.Fprintln(os.Stderr, "building agcore:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// skipShort skips t under go test -short, saying why: a slow test, or a
// variant of one whose first variant runs. The full run (CI's) runs it.
func skipShort(t *testing.T, why string) {
	t.Helper()
	testenv.Short(t, why)
}

// cli is one environment to run the binary in: its own AGCORE_HOME and
// working directory, and no provider keys unless a test adds them.
type cli struct {
	t    *testing.T
	home string // AGCORE_HOME
	dir  string // the working directory
	env  map[string]string
}

func newCLI(t *testing.T) *cli {
	t.Helper()
	c := &cli{t: t, home: t.TempDir(), dir: t.TempDir(), env: map[string]string{}}
	c.env["AGCORE_HOME"] = c.home
	c.env["HOME"] = c.home
	c.env["PATH"] = os.Getenv("PATH")
	c.env["AGCORE_RETRIES"] = "0" // the fakes fail on purpose; do not wait for backoffs
	return c
}

// openai points the CLI at a fake OpenAI server with key.
func (c *cli) openai(srv *fake, key string) *cli {
	c.env["AGCORE_PROVIDER"] = "openai"
	c.env["OPENAI_BASE_URL"] = srv.URL + "/v1"
	c.env["OPENAI_API_KEY"] = key
	c.env["AGCORE_MODEL"] = "gpt-4o-mini"
	return c
}

// result is what one run of the binary gave.
type result struct {
	stdout, stderr string
	code           int
}

// run runs the binary with args and stdin, and waits for it.
func (c *cli) run(stdin string, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := c.command(ctx, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		c.t.Fatalf("running agcore %v: %v", args, err)
	}
	return r
}

func (c *cli) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Dir = c.dir
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// ok runs the binary and fails the test unless it exits 0.
func (c *cli) ok(args ...string) result {
	c.t.Helper()
	r := c.run("", args...)
	if r.code != 0 {
		c.t.Fatalf("agcore %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// event is one --json event, decoded.
type event map[string]any

func (e event) typ() string { s, _ := e["type"].(string); return s }

// events decodes newline-delimited JSON events, checking every line is one.
func events(t *testing.T, stdout string) []event {
	t.Helper()
	var out []event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("stdout line is not a JSON object: %q: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// ofType returns the events of type typ.
func ofType(evs []event, typ string) []event {
	var out []event
	for _, e := range evs {
		if e.typ() == typ {
			out = append(out, e)
		}
	}
	return out
}

// deltas joins the text of the events of type typ.
func deltas(evs []event, typ string) string {
	var b strings.Builder
	for _, e := range ofType(evs, typ) {
		s, _ := e["text"].(string)
		b.WriteString(s)
	}
	return b.String()
}

// last returns the last event, or fails.
func last(t *testing.T, evs []event) event {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	return evs[len(evs)-1]
}

// storedSession is `sessions show --json`.
type storedSession struct {
	ID       string            `json:"id"`
	Messages []json.RawMessage `json:"messages"`
}

func (c *cli) show(id string, args ...string) storedSession {
	c.t.Helper()
	r := c.ok(append([]string{"sessions", "show", "--json", id}, args...)...)
	var s storedSession
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil {
		c.t.Fatalf("sessions show --json: %v\n%s", err, r.stdout)
	}
	return s
}

// writeFiles creates files (path → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
