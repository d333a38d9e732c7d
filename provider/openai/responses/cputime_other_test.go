//go:build !unix

package responses

import "time"

// processCPU is not measured here; the cpu-ns/chunk metric reads 0.
func processCPU() time.Duration { return 0 }
