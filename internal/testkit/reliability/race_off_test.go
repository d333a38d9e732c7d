//go:build !race

package reliability

// maxRSSPerStream bounds the resident memory one active stream adds
// (measured at 57-83 KiB).
const maxRSSPerStream = 512 << 10
