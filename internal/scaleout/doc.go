// Package scaleout holds the scale-out proof of the shared session stores
// (tests only): several processes run the agent, with a scripted model and
// a tool, over one PostgreSQL or Redis store, on random sessions, and the
// store must end with every acknowledged turn exactly once, whole, and no
// turn's messages interleaved with another's.
package scaleout
