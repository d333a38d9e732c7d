//go:build race

package main_test

// raceEnabled: the race detector is on. It instruments this test process
// only (the agcore binary the tests run is built without it), so a test
// whose cost is its own setup runs a smaller setup under it; .ci/run also
// runs such a test whole, without the detector.
const raceEnabled = true
