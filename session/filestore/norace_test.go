//go:build !race

package filestore_test

const raceEnabled = false
