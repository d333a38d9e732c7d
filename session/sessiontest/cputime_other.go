//go:build !unix

package sessiontest

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
