//go:build !unix

package viz

import "time"

// processCPU is not available here.
func processCPU() (time.Duration, bool) { return 0, false }
