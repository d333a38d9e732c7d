package bench

import (
	"context"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	// The quick run re-executes this test binary as its server and
	// concurrency children.
	RunChildIfAsked()
	os.Exit(m.Run())
}

func TestModelNameRoundTrip(t *testing.T) {
	for _, c := range []struct {
		n    int
		pace time.Duration
	}{{0, 0}, {1, 0}, {10_000, 0}, {100, 20 * time.Millisecond}} {
		n, pace := ParseModelName(ModelName(c.n, c.pace))
		if n != c.n || pace != c.pace {
			t.Errorf("ModelName(%d, %s) parses as %d, %s", c.n, c.pace, n, pace)
		}
	}
	for _, name := range []string{"gpt-4o", "bench-nx", "bench-n-1", "bench-n99999999"} {
		if n, pace := ParseModelName(name); n != DefaultChunks || pace != 0 {
			t.Errorf("ParseModelName(%q) = %d, %s; want the default", name, n, pace)
		}
	}
}

func TestExpectedLen(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 1234} {
		if got, want := expectedLen(n), len(ExpectedText(n)); got != want {
			t.Errorf("expectedLen(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestEveryLibraryReadsEveryStream checks each row against an in-process
// server, for every wire's stream shape, paced and not.
func TestEveryLibraryReadsEveryStream(t *testing.T) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	env := Env{BaseURL: srv.URL, HTTP: NewHTTPClient()}
	ctx := context.Background()
	rs := &remotes{}
	defer rs.cleanup()
	for _, lib := range Libraries() {
		t.Run(slug(lib.Name), func(t *testing.T) {
			if lib.Remote != "" {
				// A remote row checks every stream itself.
				m, err := newMeter(ctx, lib, env, rs)
				if err != nil {
					t.Fatal(err)
				}
				defer m.close()
				for _, n := range []int{0, 1, 37} {
					if _, err := m.measure(ctx, n, 2); err != nil {
						t.Errorf("%d chunks: %v", n, err)
					}
				}
				return
			}
			fn, err := lib.New(ctx, env)
			if err != nil {
				t.Fatal(err)
			}
			for _, model := range []string{ModelName(0, 0), ModelName(1, 0), ModelName(37, 0), ModelName(5, time.Millisecond)} {
				n, _ := ParseModelName(model)
				chunks, textLen, err := fn(ctx, model)
				if err == nil {
					err = Check(n, chunks, textLen)
				}
				if err != nil {
					t.Errorf("%s: %v", model, err)
				}
			}
		})
	}
}

// TestQuickRun runs the whole table in quick mode, children included, so
// that the command does not rot.
func TestQuickRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	cfg := QuickConfig()
	var log strings.Builder
	cfg.Log = &log
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := res.Markdown(&out); err != nil {
		t.Fatal(err)
	}
	t.Logf("progress:\n%s\ntable:\n%s", log.String(), out.String())
	for _, row := range res.Rows {
		if row.Err != "" {
			t.Errorf("%s: %s", row.Library.Name, row.Err)
			continue
		}
		if len(row.Sizes) != len(cfg.Sizes) {
			t.Errorf("%s: measured %d sizes, want %d", row.Library.Name, len(row.Sizes), len(cfg.Sizes))
		}
		if row.Conc == nil || row.Conc.PeakRSS <= 0 {
			t.Errorf("%s: no concurrency result", row.Library.Name)
		}
	}
	for _, want := range []string{"| floor-json | openai |", "nproc", "Per stream length"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

// slug turns a row name into a sub-test name: "floor-json (anthropic)" →
// "floor-json-anthropic".
func slug(name string) string {
	return strings.NewReplacer(" (", "-", ")", "", " ", "-").Replace(name)
}

// BenchmarkStream streams from an in-process server and reports, per text
// chunk, CPU time of the whole process (cpu-ns/chunk; the server's share is
// a single write of a pre-rendered body), wall time (ns/chunk), and heap
// allocations (allocs/chunk, B/chunk). Sub-benchmarks are
// library/chunks-per-stream. Remote rows (fantasy on the OpenAI wire) are
// left out: they run in their own process, in benchtable only.
func BenchmarkStream(b *testing.B) {
	srv := httptest.NewServer(Handler())
	defer srv.Close()
	env := Env{BaseURL: srv.URL, HTTP: NewHTTPClient()}
	ctx := context.Background()
	for _, lib := range Libraries() {
		if lib.Remote != "" {
			continue
		}
		fn, err := lib.New(ctx, env)
		if err != nil {
			b.Fatalf("%s: %v", lib.Name, err)
		}
		for _, n := range []int{100, 1_000, 10_000} {
			b.Run(slug(lib.Name)+"/"+shortNum(n), func(b *testing.B) {
				model := ModelName(n, 0)
				b.ReportAllocs()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				cpu0 := CPUTime()
				for b.Loop() {
					chunks, textLen, err := fn(ctx, model)
					if err == nil {
						err = Check(n, chunks, textLen)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				cpu := CPUTime() - cpu0
				runtime.ReadMemStats(&m1)
				total := float64(b.N) * float64(n)
				b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/total, "allocs/chunk")
				b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/total, "B/chunk")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/chunk")
				b.ReportMetric(float64(cpu.Nanoseconds())/total, "cpu-ns/chunk")
			})
		}
	}
}
