package reliability

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/internal/testkit/faultserver"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/sqlite"
	"github.com/agcore/agcore/tool"
)

const (
	// loadEnv=full runs the load test at full size.
	loadEnv = "AGCORE_LOAD"
	// loadServerEnv makes the test binary a load server: "chunks,interval".
	loadServerEnv = "AGCORE_RELIABILITY_LOAD_SERVER"
)

// loadScenario is one load run.
type loadScenario struct {
	name     string
	n        int           // concurrent agent turns
	chunks   int           // text chunks each final answer streams
	interval time.Duration // between chunks
	tools    bool          // each turn first calls both tools
}

// TestLoad runs concurrent agent turns against a local server in a child
// process, half OpenAI-compatible, half Anthropic: with tools, each turn
// calls both tools and then streams its answer; without, each turn is one
// stream. Zero errors, every session persisted; peak RSS, goroutines and
// heap are reported. By default the sizes are reduced; AGCORE_LOAD=full
// runs 1,000 turns with tools (200 chunks, 20 ms apart) and 5,000 streams
// without.
func TestLoad(t *testing.T) {
	scenarios := []loadScenario{
		{name: "turns with tools", n: 100, chunks: 20, interval: 5 * time.Millisecond, tools: true},
		{name: "streams without tools", n: 200, chunks: 20, interval: 5 * time.Millisecond},
	}
	if os.Getenv(loadEnv) == "full" {
		scenarios = []loadScenario{
			{name: "turns with tools", n: 1000, chunks: 200, interval: 20 * time.Millisecond, tools: true},
			{name: "streams without tools", n: 5000, chunks: 200, interval: 20 * time.Millisecond},
		}
	} else if testing.Short() {
		scenarios[0].n, scenarios[1].n = 20, 40
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { runLoad(t, sc) })
	}
}

func runLoad(t *testing.T, sc loadScenario) {
	url, stop := startLoadServer(t, sc.chunks, sc.interval)
	defer stop()

	dir := t.TempDir()
	var store session.Store
	var err error
	if sc.tools {
		store, err = sqlite.Open(t.Context(), filepath.Join(dir, "sessions.db"))
	} else {
		store, err = filestore.Open(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore(store)

	tr := &http.Transport{MaxIdleConns: sc.n, MaxIdleConnsPerHost: sc.n, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	model := "load-plain"
	if sc.tools {
		model = "load-tools"
	}
	agents := make([]*agent.Agent, 2)
	for i, f := range []faultserver.Format{faultserver.OpenAI, faultserver.Anthropic} {
		base := url
		if f == faultserver.OpenAI {
			base += "/v1"
		}
		ad := newAdapter(adapterConfig{format: f, base: base, key: "load-key", client: client, idle: time.Minute, model: model})
		b := pipeline(ad, nil, 1)
		if !sc.tools {
			b.tools = []tool.Tool{}
		}
		agents[i] = newAgent(b, store, nil)
	}
	want := strings.Repeat("lorem ", sc.chunks)

	runtime.GC()
	debug.FreeOSMemory()
	base := sample()
	var peak sampleStats
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	var active atomic.Int64
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			s := sample()
			s.active = int(active.Load())
			peak.max(s)
			select {
			case <-tick.C:
			case <-stopSampling:
				return
			}
		}
	}()

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	errs := make([]error, sc.n)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range sc.n {
		wg.Go(func() {
			<-gate
			a := agents[i%2]
			s := a.RunStream(ctx, []llm.Message{llm.UserText("load " + strconv.Itoa(i))}, &agent.RunOptions{SessionID: fmt.Sprintf("load-%d", i)})
			counted := false
			for u, err := range s.Updates() {
				if err != nil {
					break
				}
				if u.Kind == agent.UpdateText && !counted {
					counted = true
					active.Add(1)
				}
			}
			if counted {
				active.Add(-1)
			}
			resp, err := s.Wait()
			if err == nil {
				err = resp.PersistErr()
			}
			if err == nil && resp.Text() != want {
				err = fmt.Errorf("answer of %d bytes, want %d", len(resp.Text()), len(want))
			}
			errs[i] = err
		})
	}
	close(gate)
	wg.Wait()
	took := time.Since(start)
	close(stopSampling)
	<-sampled

	failed := 0
	for i, err := range errs {
		if err != nil {
			if failed < 5 {
				t.Errorf("turn %d: %v", i, err)
			}
			failed++
		}
	}
	for i := range sc.n {
		checkSession(t, store, fmt.Sprintf("load-%d", i), 1)
	}
	requests := stop()
	wantReq := sc.n
	if sc.tools {
		wantReq *= 2
	}
	if requests != wantReq {
		t.Errorf("the server answered %d requests, want %d", requests, wantReq)
	}
	perStream := func(v, b uint64) string {
		if v < b || peak.active == 0 {
			return "n/a"
		}
		return fmt.Sprintf("%.1f KiB", float64(v-b)/1024/float64(peak.active))
	}
	t.Logf("%s: %d concurrent turns (%d chunks each, %v apart; half OpenAI-compatible, half Anthropic; %d requests) in %v: %d errors, %d sessions persisted and valid\n"+
		"  peak RSS %.1f MiB (baseline %.1f MiB), peak goroutines %d (baseline %d), peak Go heap %.1f MiB (baseline %.1f MiB), peak active streams %d\n"+
		"  memory per active stream: %s RSS, %s Go heap",
		sc.name, sc.n, sc.chunks, sc.interval, requests, took.Round(time.Millisecond), failed, sc.n,
		mib(peak.rss), mib(base.rss), peak.goroutines, base.goroutines, mib(peak.heap), mib(base.heap), peak.active,
		perStream(peak.rss, base.rss), perStream(peak.heap, base.heap))

	// The headline figures, bounded where they are functional: the turns
	// really ran side by side, and each active stream costs a bounded
	// amount of memory (measured at about 50-80 KiB of Go heap and under
	// 100 KiB of RSS; the race detector's shadow memory multiplies RSS,
	// not the heap). The bounds leave room for a noisy machine and catch
	// a stream that buffers its whole answer or leaks per-chunk garbage.
	// A fifth of the turns streaming at once proves the load overlapped
	// (measured: 91 to 199 of 200 depending on the machine's load; the
	// 20 ms sampler misses short peaks).
	if peak.active < max(2, sc.n/5) {
		t.Errorf("at most %d of %d streams were active at once: the load did not overlap", peak.active, sc.n)
	}
	if peak.active > 0 && peak.heap > base.heap {
		if per := (peak.heap - base.heap) / uint64(peak.active); per > maxHeapPerStream {
			t.Errorf("Go heap per active stream %d KiB, want at most %d KiB", per>>10, maxHeapPerStream>>10)
		}
	}
	if peak.active > 0 && peak.rss > base.rss && base.rss > 0 {
		if per := (peak.rss - base.rss) / uint64(peak.active); per > maxRSSPerStream {
			t.Errorf("RSS per active stream %d KiB, want at most %d KiB", per>>10, maxRSSPerStream>>10)
		}
	}
}

// maxHeapPerStream bounds the Go heap one active stream may hold.
const maxHeapPerStream = 256 << 10

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// sampleStats is one sample of the process's resources, or the maximum of
// several.
type sampleStats struct {
	rss, heap  uint64
	goroutines int
	active     int
}

func (p *sampleStats) max(s sampleStats) {
	p.rss = max(p.rss, s.rss)
	p.heap = max(p.heap, s.heap)
	p.goroutines = max(p.goroutines, s.goroutines)
	p.active = max(p.active, s.active)
}

var heapMetric = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}

func sample() sampleStats {
	ms := make([]metrics.Sample, len(heapMetric))
	copy(ms, heapMetric)
	metrics.Read(ms)
	return sampleStats{rss: rssBytes(), heap: ms[0].Value.Uint64(), goroutines: runtime.NumGoroutine()}
}

// rssBytes is the process's resident set size (Linux; 0 elsewhere).
func rssBytes() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// startLoadServer starts this test binary as a load server in a child
// process, so the measurements above are the client's alone. stop ends it
// and returns how many requests it answered.
func startLoadServer(t *testing.T, chunks int, interval time.Duration) (url string, stop func() int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), loadServerEnv+"="+strconv.Itoa(chunks)+","+interval.String())
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("load server: %v", err)
	}
	var once sync.Once
	requests := 0
	stop = func() int {
		once.Do(func() {
			in.Close()
			if l, err := r.ReadString('\n'); err == nil {
				requests, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(l, "requests ")))
			}
			cmd.Wait()
		})
		return requests
	}
	return strings.TrimSpace(line), stop
}

// loadServer serves streams until its stdin closes, then prints how many
// requests it answered. A "load-tools" request without tool results gets
// both tool calls; every other request the streamed answer.
func loadServer() {
	spec := strings.Split(os.Getenv(loadServerEnv), ",")
	chunks, _ := strconv.Atoi(spec[0])
	interval, _ := time.ParseDuration(spec[1])
	reply := faultserver.Reply{Text: strings.Repeat("lorem ", chunks), Chunks: chunks, Interval: interval}
	s := faultserver.New(faultserver.WithoutRecording(), faultserver.WithHandler(func(r faultserver.Request) faultserver.Step {
		if r.Model == "load-tools" && r.ToolResults == 0 {
			return faultserver.Step{Reply: toolCalls("call")}
		}
		return faultserver.Step{Reply: reply}
	}))
	fmt.Println(s.URL)
	io.Copy(io.Discard, os.Stdin)
	n := s.Requests()
	s.Close()
	fmt.Printf("requests %d\n", n)
}
