// Package reliability holds agcore's proof under load, faults and bad input
// (issue 7): tests only, through the public API of the whole stack.
//
//   - TestFaultMatrix: every fault of package internal/faultserver, against
//     both wire formats, blocking and streaming, through the agent, the tool
//     loop, the retry middleware and a real store.
//   - TestCrashConsistency (and TestCrashConsistencyLong, 200 kills per
//     store with AGCORE_CRASH=long): a child process running agent turns
//     with tool calls into the file and SQLite stores is killed with SIGKILL
//     at random moments.
//   - TestLoad: concurrent agent turns and streams against a local server in
//     a child process, reduced by default; AGCORE_LOAD=full runs 1,000 turns
//     with tools and 5,000 streams without.
//   - TestCancellation: cancelling at random points returns promptly,
//     persists nothing partial and leaks nothing.
//   - TestCanaryKey and the confinement tests: no secret in any output, no
//     way out of a root.
//
// The package has no non-test code besides this comment.
package reliability
