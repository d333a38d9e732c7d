//go:build race

package compact

// raceEnabled: the race detector makes the long deterministic simulations
// (single goroutine, nothing for it to find) many times slower; under it
// they run shortened, and .ci/run also runs them whole without it.
const raceEnabled = true

// RaceEnabled is raceEnabled for the external tests.
const RaceEnabled = raceEnabled
