//go:build race

package filestore_test

// raceEnabled is set when the race detector is on; the exhaustive
// power-loss tests then sample fewer cases, as everything runs many times
// slower.
const raceEnabled = true
