package a2aserve

import "time"

// SetRemoteCheckAfter sets remoteCheckAfter for a test and returns the
// function that puts it back.
func SetRemoteCheckAfter(d time.Duration) func() {
	was := remoteCheckAfter
	remoteCheckAfter = d
	return func() { remoteCheckAfter = was }
}
