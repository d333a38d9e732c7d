//go:build !unix

package replay_test

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
