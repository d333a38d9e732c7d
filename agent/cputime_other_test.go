//go:build !unix

package agent_test

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
