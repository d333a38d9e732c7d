package serve

import "time"

// SetRemotePendingTimeout sets how long GET /v1/approvals waits for a
// remote runner's answer about one turn, until the returned func undoes
// it (tests only).
func SetRemotePendingTimeout(d time.Duration) (undo func()) {
	old := remotePendingTimeout
	remotePendingTimeout = d
	return func() { remotePendingTimeout = old }
}
