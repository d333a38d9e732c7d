package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// CPUTime returns the CPU time (user + system) this process has used, all
// threads included. Unlike wall time it hardly moves when other processes
// compete for the cores.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Sample is the cost of one measured batch of streams.
type Sample struct {
	Streams int           // streams made
	Chunks  int           // text chunks received in all
	CPU     time.Duration // process CPU time
	Wall    time.Duration
	Mallocs uint64 // heap allocations
	Bytes   uint64 // heap bytes allocated
}

// NsPerChunk is CPU nanoseconds per chunk.
func (s Sample) NsPerChunk() float64 { return float64(s.CPU.Nanoseconds()) / float64(s.Chunks) }

// AllocsPerChunk is heap allocations per chunk.
func (s Sample) AllocsPerChunk() float64 { return float64(s.Mallocs) / float64(s.Chunks) }

// BytesPerChunk is heap bytes allocated per chunk.
func (s Sample) BytesPerChunk() float64 { return float64(s.Bytes) / float64(s.Chunks) }

// Measure makes streams sequential streams of n chunks each with fn and
// returns their cost: process CPU time and heap allocation deltas around the
// whole batch, after a GC so that an earlier batch's garbage is not charged
// to this one. Every stream is checked with [Check].
func Measure(ctx context.Context, fn StreamFunc, n, streams int) (Sample, error) {
	model := ModelName(n, 0)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	cpu0 := CPUTime()
	for range streams {
		chunks, textLen, err := fn(ctx, model)
		if err == nil {
			err = Check(n, chunks, textLen)
		}
		if err != nil {
			return Sample{}, err
		}
	}
	cpu1 := CPUTime()
	wall := time.Since(start)
	runtime.ReadMemStats(&m1)
	return Sample{
		Streams: streams,
		Chunks:  n * streams,
		CPU:     cpu1 - cpu0,
		Wall:    wall,
		Mallocs: m1.Mallocs - m0.Mallocs,
		Bytes:   m1.TotalAlloc - m0.TotalAlloc,
	}, nil
}

// procStatus returns a field of /proc/self/status in bytes (VmRSS, VmHWM).
func procStatus(field string) (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		v, ok := bytes.CutPrefix(sc.Bytes(), []byte(field+":"))
		if !ok {
			continue
		}
		f := bytes.Fields(v)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("unexpected %s line %q", field, sc.Bytes())
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		return kb * 1024, err
	}
	return 0, fmt.Errorf("no %s in /proc/self/status", field)
}

// resetPeakRSS makes VmHWM start again from the current RSS (Linux's
// clear_refs 5). It reports whether the kernel allowed it.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// Machine describes where the numbers were taken.
type Machine struct {
	CPUs      int
	CPUModel  string
	GoVersion string
	OS, Arch  string
}

// ThisMachine returns the current machine's description.
func ThisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUModel: "unknown CPU"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range bytes.Lines(b) {
			if k, v, ok := bytes.Cut(line, []byte(":")); ok && string(bytes.TrimSpace(k)) == "model name" {
				m.CPUModel = string(bytes.TrimSpace(v))
				break
			}
		}
	}
	return m
}

// String returns e.g. "2 × Intel(R) Xeon(R) Processor, go1.26.8 linux/amd64".
func (m Machine) String() string {
	return fmt.Sprintf("%d × %s, %s %s/%s", m.CPUs, m.CPUModel, m.GoVersion, m.OS, m.Arch)
}
