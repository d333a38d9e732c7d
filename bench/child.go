package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// The runner starts its helpers by running its own executable again with
// these environment variables set, so that one binary (the benchtable
// command or a test binary) holds everything. A program that may be such a
// child calls [RunChildIfAsked] first thing in main (or TestMain).
const (
	childEnv     = "AGCORE_BENCH_CHILD"      // "server" or "concurrency"
	childArgsEnv = "AGCORE_BENCH_CHILD_ARGS" // JSON arguments of the role
	serverBanner = "agcore-bench-server "    // first stdout line of a server child, then its URL
	resultBanner = "agcore-bench-result "    // stdout line of a concurrency child, then JSON
)

// RunChildIfAsked runs the helper role this process was started for, if
// any, and exits; otherwise it returns at once.
func RunChildIfAsked() {
	role := os.Getenv(childEnv)
	if role == "" {
		return
	}
	var err error
	switch role {
	case "server":
		err = serveChild()
	case "concurrency":
		err = concurrencyChild()
	default:
		err = fmt.Errorf("unknown role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench child %s: %v\n", role, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// ListenAndServe serves [Handler] on addr ("127.0.0.1:0" picks a port) and
// calls ready with the server's base URL once it listens. It returns when
// ctx is done.
func ListenAndServe(ctx context.Context, addr string, ready func(baseURL string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	ready("http://" + ln.Addr().String())
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveChild serves until its standard input closes, which happens when the
// parent exits, however it exits.
func serveChild() error {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return ListenAndServe(ctx, "127.0.0.1:0", func(u string) {
		fmt.Printf("%s%s\n", serverBanner, u)
	})
}

// StartServer starts the stream server in a child process and returns its
// base URL and a function that stops it.
func StartServer(ctx context.Context) (baseURL string, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), childEnv+"=server")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return "", nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop = func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	select {
	case line, ok := <-lines:
		if u, found := strings.CutPrefix(line, serverBanner); ok && found {
			return u, stop, nil
		}
		stop()
		return "", nil, fmt.Errorf("bench: server child said %q", line)
	case <-time.After(30 * time.Second):
		stop()
		return "", nil, errors.New("bench: server child did not start within 30s")
	case <-ctx.Done():
		stop()
		return "", nil, ctx.Err()
	}
}

// ConcurrencyArgs describe one concurrency round.
type ConcurrencyArgs struct {
	Library string
	BaseURL string
	Streams int           // concurrent streams
	Chunks  int           // chunks per stream
	Pace    time.Duration // between chunks
}

// ConcurrencyResult is what one concurrency round measured in its own
// process.
type ConcurrencyResult struct {
	Streams int
	// BaselineRSS is the resident set after the client was built and had
	// made one short stream, after a GC that returned free memory to the
	// OS: the binary, the runtime and the library's set-up.
	BaselineRSS int64
	// PeakRSS is the highest resident set while the streams ran (VmHWM
	// after it was reset to the baseline).
	PeakRSS int64
	// PeakReset is false when the kernel refused to reset VmHWM, so that
	// PeakRSS may include earlier peaks.
	PeakReset bool
	Wall      time.Duration
	Errors    int
	FirstErr  string
}

// PerStream is the peak resident memory the streams added, per stream.
func (r ConcurrencyResult) PerStream() float64 {
	return float64(r.PeakRSS-r.BaselineRSS) / float64(r.Streams)
}

// RunConcurrency runs one concurrency round in a fresh child process, so
// that the peak resident set belongs to this library alone.
func RunConcurrency(ctx context.Context, args ConcurrencyArgs) (ConcurrencyResult, error) {
	var res ConcurrencyResult
	exe, err := os.Executable()
	if err != nil {
		return res, err
	}
	a, err := json.Marshal(args)
	if err != nil {
		return res, err
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), childEnv+"=concurrency", childArgsEnv+"="+string(a))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return res, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	for line := range strings.Lines(string(out)) {
		if j, ok := strings.CutPrefix(line, resultBanner); ok {
			err := json.Unmarshal([]byte(j), &res)
			return res, err
		}
	}
	return res, fmt.Errorf("no result from the child: %s", strings.TrimSpace(stderr.String()))
}

func concurrencyChild() error {
	var args ConcurrencyArgs
	if err := json.Unmarshal([]byte(os.Getenv(childArgsEnv)), &args); err != nil {
		return err
	}
	libs, err := SelectLibraries([]string{args.Library})
	if err != nil {
		return err
	}
	ctx := context.Background()
	fn, err := libs[0].New(ctx, Env{BaseURL: args.BaseURL, HTTP: NewHTTPClient()})
	if err != nil {
		return err
	}
	// One short stream first, so that lazily built state is in the baseline.
	if _, err := Measure(ctx, fn, 10, 1); err != nil {
		return fmt.Errorf("warm-up stream: %w", err)
	}
	runtime.GC()
	debug.FreeOSMemory()
	res := ConcurrencyResult{Streams: args.Streams}
	if res.BaselineRSS, err = procStatus("VmRSS"); err != nil {
		return err
	}
	res.PeakReset = resetPeakRSS()

	model := ModelName(args.Chunks, args.Pace)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		start = make(chan struct{})
	)
	for range args.Streams {
		wg.Go(func() {
			<-start
			chunks, textLen, err := fn(ctx, model)
			if err == nil {
				err = Check(args.Chunks, chunks, textLen)
			}
			if err != nil {
				mu.Lock()
				res.Errors++
				if res.FirstErr == "" {
					res.FirstErr = err.Error()
				}
				mu.Unlock()
			}
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	res.Wall = time.Since(t0)
	if res.PeakRSS, err = procStatus("VmHWM"); err != nil {
		return err
	}
	j, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Printf("%s%s\n", resultBanner, j)
	return nil
}
