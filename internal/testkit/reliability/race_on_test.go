//go:build race

package reliability

// maxRSSPerStream bounds the resident memory one active stream adds. The
// race detector's shadow memory makes it several times the plain figure
// (measured at about 1.2 MiB with tools under -race, 80 KiB without).
const maxRSSPerStream = 4 << 20
