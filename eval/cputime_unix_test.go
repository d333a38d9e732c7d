//go:build unix

package eval_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user + system, every thread) the process
// has used, or false where it cannot be read.
func cpuTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
