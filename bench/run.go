package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// Config is what one run of the table measures.
type Config struct {
	// Rounds of the CPU/allocation measurement; each round measures every
	// library at every size, in a rotated order, and the table shows the
	// median over rounds.
	Rounds int
	// Sizes are the stream lengths in chunks, ascending; the largest is the
	// table's headline, and the smallest and the largest give the flatness
	// ratio.
	Sizes []int
	// CellChunks is roughly how many chunks one measurement consumes: a
	// size-n cell makes CellChunks/n streams (at least one).
	CellChunks int
	// ConcStreams concurrent streams of ConcChunks chunks, Pace apart, are
	// run ConcRounds times per library, each time in a fresh child process;
	// ConcStreams 0 skips the scenario.
	ConcStreams int
	ConcChunks  int
	Pace        time.Duration
	ConcRounds  int
	// Libraries selects rows by name; empty means all.
	Libraries []string
	// ServerURL is an already running server (see cmd/llmserver); empty
	// starts one as a child process.
	ServerURL string
	// Log receives progress lines; nil discards them.
	Log io.Writer
}

// DefaultConfig is the full run: 7 rounds at 100, 1,000 and 10,000 chunks,
// and 3 rounds of 500 concurrent streams of 100 chunks paced 20 ms apart.
func DefaultConfig() Config {
	return Config{
		Rounds:      7,
		Sizes:       []int{100, 1_000, 10_000},
		CellChunks:  20_000,
		ConcStreams: 500,
		ConcChunks:  100,
		Pace:        20 * time.Millisecond,
		ConcRounds:  3,
	}
}

// QuickConfig is a smoke run of a few seconds: one round, small streams and
// 20 concurrent streams. Its numbers mean little.
func QuickConfig() Config {
	return Config{
		Rounds:      1,
		Sizes:       []int{10, 100, 1_000},
		CellChunks:  1_000,
		ConcStreams: 20,
		ConcChunks:  10,
		Pace:        5 * time.Millisecond,
		ConcRounds:  1,
	}
}

// Stat is one library's cost at one stream length: medians over rounds.
type Stat struct {
	NsPerChunk     float64
	AllocsPerChunk float64
	BytesPerChunk  float64
	Rounds         int
}

// Row is one library's results.
type Row struct {
	Library Library
	// Sizes maps a stream length to its cost.
	Sizes map[int]Stat
	// Conc is the median concurrency round; nil when not run or failed.
	Conc *ConcurrencyResult
	// Err says why the row is incomplete.
	Err string
}

// Result is one run of the table.
type Result struct {
	Date    time.Time
	Machine Machine
	Config  Config
	Rows    []Row
	Elapsed time.Duration
}

func (c Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, format+"\n", args...)
	}
}

// Run measures every selected library as cfg says and returns the table.
// A library that fails keeps its row with Err set; Run itself fails only
// when it cannot start.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if len(cfg.Sizes) == 0 || cfg.Rounds < 1 || cfg.CellChunks < 1 {
		return nil, fmt.Errorf("bench: config needs sizes, rounds and cell chunks")
	}
	cfg.Sizes = slices.Sorted(slices.Values(cfg.Sizes))
	libs, err := SelectLibraries(cfg.Libraries)
	if err != nil {
		return nil, err
	}
	res := &Result{Date: time.Now(), Machine: ThisMachine(), Config: cfg}
	t0 := time.Now()

	baseURL := cfg.ServerURL
	if baseURL == "" {
		u, stop, err := StartServer(ctx)
		if err != nil {
			return nil, err
		}
		defer stop()
		baseURL = u
	}
	cfg.logf("server %s; %d libraries; %d rounds × sizes %v", baseURL, len(libs), cfg.Rounds, cfg.Sizes)
	env := Env{BaseURL: baseURL, HTTP: NewHTTPClient()}

	rows := make([]Row, len(libs))
	fns := make([]meter, len(libs))
	samples := make([]map[int][]Sample, len(libs))
	rs := &remotes{}
	defer rs.cleanup()
	for i, lib := range libs {
		rows[i] = Row{Library: lib, Sizes: map[int]Stat{}}
		samples[i] = map[int][]Sample{}
		m, err := newMeter(ctx, lib, env, rs)
		if err == nil {
			defer m.close()
			// Warm up: connections, lazily built state, code paths.
			_, err = m.measure(ctx, cfg.Sizes[0], 2)
		}
		if err != nil {
			rows[i].Err = err.Error()
			cfg.logf("%s: %v", lib.Name, err)
			continue
		}
		fns[i] = m
	}

	for r := range cfg.Rounds {
		for _, n := range cfg.Sizes {
			streams := max(1, cfg.CellChunks/n)
			for k := range libs {
				i := (k + r) % len(libs)
				if fns[i] == nil {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				s, err := fns[i].measure(ctx, n, streams)
				if err != nil {
					rows[i].Err = fmt.Sprintf("%d-chunk stream: %v", n, err)
					cfg.logf("%s: %s", libs[i].Name, rows[i].Err)
					fns[i] = nil
					continue
				}
				samples[i][n] = append(samples[i][n], s)
			}
		}
		cfg.logf("round %d/%d done (%s)", r+1, cfg.Rounds, time.Since(t0).Round(time.Second))
	}
	for i := range rows {
		for n, ss := range samples[i] {
			rows[i].Sizes[n] = Stat{
				NsPerChunk:     median(ss, Sample.NsPerChunk),
				AllocsPerChunk: median(ss, Sample.AllocsPerChunk),
				BytesPerChunk:  median(ss, Sample.BytesPerChunk),
				Rounds:         len(ss),
			}
		}
	}

	if cfg.ConcStreams > 0 && cfg.ConcRounds > 0 {
		conc := make([][]ConcurrencyResult, len(libs))
		concFailed := make([]bool, len(libs))
		for r := range cfg.ConcRounds {
			for k := range libs {
				i := (k + r) % len(libs)
				if fns[i] == nil || concFailed[i] {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				args := ConcurrencyArgs{
					Library: libs[i].Name, BaseURL: baseURL,
					Streams: cfg.ConcStreams, Chunks: cfg.ConcChunks, Pace: cfg.Pace,
				}
				var cr ConcurrencyResult
				var err error
				if libs[i].Remote != "" {
					cr, err = runRemoteConcurrency(ctx, rs.bins[libs[i].Name], args)
				} else {
					cr, err = RunConcurrency(ctx, args)
				}
				if err == nil && cr.Errors > 0 {
					err = fmt.Errorf("%d of %d streams failed, first: %s", cr.Errors, cr.Streams, cr.FirstErr)
				}
				if err != nil {
					rows[i].Err = fmt.Sprintf("concurrency: %v", err)
					cfg.logf("%s: %s", libs[i].Name, rows[i].Err)
					concFailed[i] = true
					continue
				}
				conc[i] = append(conc[i], cr)
			}
			cfg.logf("concurrency round %d/%d done (%s)", r+1, cfg.ConcRounds, time.Since(t0).Round(time.Second))
		}
		for i, cs := range conc {
			if len(cs) > 0 {
				slices.SortFunc(cs, func(a, b ConcurrencyResult) int {
					return cmpFloat(a.PerStream(), b.PerStream())
				})
				m := cs[len(cs)/2]
				rows[i].Conc = &m
			}
		}
	}
	res.Rows = rows
	res.Elapsed = time.Since(t0)
	return res, nil
}

func median(ss []Sample, f func(Sample) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
