package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// A remote row is a library that cannot share this module's dependency
// versions, so it lives in a nested module of its own (Library.Remote) whose
// main program measures itself: the runner builds it with the go command,
// starts it, and sends it "measure MODEL CHUNKS TEXTLEN STREAMS" lines; it
// answers "sample CPU_NS MALLOCS BYTES WALL_NS" or "error MESSAGE". With
// -conc it runs one concurrency round and prints "result JSON". See
// peers/fantasyopenai for the one such row.

// meter measures one library: in this process or in a remote child.
type meter interface {
	measure(ctx context.Context, n, streams int) (Sample, error)
	close()
}

type localMeter struct{ fn StreamFunc }

func (m localMeter) measure(ctx context.Context, n, streams int) (Sample, error) {
	return Measure(ctx, m.fn, n, streams)
}

func (localMeter) close() {}

// moduleDir returns this module's directory, where the nested modules of
// the remote rows are, as the compiler saw it (the program runs on the
// machine that built it: go run, go test).
func moduleDir() string {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Dir(file)
	}
	wd, _ := os.Getwd()
	return wd
}

// goCommand returns the go command that builds the remote rows.
func goCommand() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// remotes builds the remote rows' programs into a temporary directory.
type remotes struct {
	dir  string
	bins map[string]string // library name → program
}

func (r *remotes) build(ctx context.Context, lib Library) (string, error) {
	if bin, ok := r.bins[lib.Name]; ok {
		return bin, nil
	}
	if r.dir == "" {
		d, err := os.MkdirTemp("", "agcore-bench-")
		if err != nil {
			return "", err
		}
		r.dir, r.bins = d, map[string]string{}
	}
	bin := filepath.Join(r.dir, filepath.Base(lib.Remote))
	cmd := exec.CommandContext(ctx, goCommand(), "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(moduleDir(), lib.Remote)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v: %s", lib.Remote, err, strings.TrimSpace(string(out)))
	}
	r.bins[lib.Name] = bin
	return bin, nil
}

func (r *remotes) cleanup() {
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
}

type remoteMeter struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startRemote(bin, baseURL string) (*remoteMeter, error) {
	cmd := exec.Command(bin, "-base", baseURL)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &remoteMeter{cmd: cmd, in: in, out: bufio.NewScanner(out)}, nil
}

func (m *remoteMeter) measure(ctx context.Context, n, streams int) (Sample, error) {
	if err := ctx.Err(); err != nil {
		return Sample{}, err
	}
	if _, err := fmt.Fprintf(m.in, "measure %s %d %d %d\n", ModelName(n, 0), n, expectedLen(n), streams); err != nil {
		return Sample{}, err
	}
	if !m.out.Scan() {
		if err := m.out.Err(); err != nil {
			return Sample{}, err
		}
		return Sample{}, errors.New("remote row exited")
	}
	line := m.out.Text()
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return Sample{}, errors.New(msg)
	}
	f := strings.Fields(line)
	if len(f) != 5 || f[0] != "sample" {
		return Sample{}, fmt.Errorf("remote row said %q", line)
	}
	var v [4]int64
	for i, s := range f[1:] {
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Sample{}, fmt.Errorf("remote row said %q", line)
		}
		v[i] = x
	}
	return Sample{Streams: streams, Chunks: n * streams, CPU: time.Duration(v[0]), Mallocs: uint64(v[1]), Bytes: uint64(v[2]), Wall: time.Duration(v[3])}, nil
}

func (m *remoteMeter) close() {
	m.in.Close()
	done := make(chan struct{})
	go func() { m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		m.cmd.Process.Kill()
		<-done
	}
}

// runRemoteConcurrency runs one concurrency round of a remote row in a
// fresh process of its program.
func runRemoteConcurrency(ctx context.Context, bin string, args ConcurrencyArgs) (ConcurrencyResult, error) {
	var res ConcurrencyResult
	cmd := exec.CommandContext(ctx, bin, "-base", args.BaseURL, "-conc",
		"-streams", strconv.Itoa(args.Streams), "-model", ModelName(args.Chunks, args.Pace),
		"-chunks", strconv.Itoa(args.Chunks), "-textlen", strconv.Itoa(expectedLen(args.Chunks)))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return res, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	for line := range strings.Lines(string(out)) {
		if j, ok := strings.CutPrefix(line, "result "); ok {
			err := json.Unmarshal([]byte(j), &res)
			return res, err
		}
	}
	return res, fmt.Errorf("no result from %s: %s", bin, strings.TrimSpace(stderr.String()))
}

// newMeter builds lib's client: in this process, or its remote program
// (built by rs) started against env.BaseURL.
func newMeter(ctx context.Context, lib Library, env Env, rs *remotes) (meter, error) {
	if lib.Remote == "" {
		fn, err := lib.New(ctx, env)
		if err != nil {
			return nil, err
		}
		return localMeter{fn}, nil
	}
	bin, err := rs.build(ctx, lib)
	if err != nil {
		return nil, err
	}
	return startRemote(bin, env.BaseURL)
}
