// Package scaleout holds the scale-out proof of the shared session stores
// (tests only): several processes run the agent, with a scripted model and
// a tool, over one PostgreSQL or Redis store, on random sessions, and the
// store must end with every acknowledged turn exactly once, whole, and no
// turn's messages interleaved with another's. CheckTurns is that check,
// also run by the agcore command's test of several `agcore run` processes
// over one store (cmd/agcore/store_scaleout_test.go).
package scaleout
