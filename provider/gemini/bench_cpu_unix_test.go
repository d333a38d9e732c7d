//go:build unix

package gemini

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system, all threads, GC included)
// the test process has used. Benchmarks report it per chunk next to wall
// time, because on a shared machine CPU time is the steadier measure.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
