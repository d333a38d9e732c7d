//go:build !race

package compact

// raceEnabled: see race_on_test.go.
const raceEnabled = false

// RaceEnabled is raceEnabled for the external tests.
const RaceEnabled = raceEnabled
