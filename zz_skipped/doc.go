// Package skipped prints, at the end of `go test ./...`, which tests did
// not run and how to enable them.
//
// Tests that need something from the machine (PostgreSQL, Redis, an npm
// package, a Temporal dev server) skip outside CI when it is missing and
// record the skip through internal/testkit/testenv. go test shows nothing of a
// passing package's output, so this package, whose import path sorts last
// and is therefore run and printed last, waits for the other packages of
// the same go command to finish and writes the recorded skips to the
// terminal (and to its own output, seen with -v). Under -short it writes
// one line: the slow tests -short skipped (recorded by testenv.Short), by
// package, and the tests that missed something, by what they missed, each
// with how to run them. Under CI a missing dependency fails its test
// instead, so there is nothing to report but -short's.
//
// It holds no code but its test.
package skipped
