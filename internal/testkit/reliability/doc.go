// Package reliability holds agcore's proof under load, faults and bad input
// (issue 7): tests only, through the public API of the whole stack, against
// the local misbehaving server of package internal/testkit/faultserver. Every test
// here reaches 127.0.0.1 only.
//
//   - TestFaultMatrix: every fault (429 with Retry-After, 500, 502, 503,
//     529, an in-band overloaded_error, connection resets, a stream without
//     its final event, a malformed chunk, an oversized event, stalls, a huge
//     body) × {OpenAI-compatible, Anthropic} × {blocking, streaming}, through
//     the agent, the tool loop, the retry middleware (fake clock) and a real
//     store: a retry that succeeds where the rules allow one, else the right
//     typed error; the session unchanged after every failure; no goroutine
//     left. The matrix is printed with -v.
//   - TestCrashConsistency: a child process running agent turns with tool
//     calls into the file store and the SQLite store is killed with SIGKILL
//     at random moments, 20 times per store (5 with -short;
//     AGCORE_CRASH_KILLS=N overrides); TestCrashConsistencyLong does 200 per
//     store when AGCORE_CRASH=long.
//   - TestLoad: concurrent agent turns streaming from a server in a child
//     process; reduced by default, AGCORE_LOAD=full runs 1,000 turns with two
//     tools each (200 chunks, 20 ms apart) and 5,000 streams without tools,
//     reporting peak RSS, goroutines and memory per active stream.
//   - TestCancellation: cancelling before the first byte, mid-stream,
//     mid-tool, during persistence and at random moments returns promptly
//     (p99 reported), persists nothing partial and leaks nothing.
//   - TestCanaryKeyNeverLeaks, TestCanaryKeyNeverLeaksFromTheCLI: a unique
//     fake API key reaches the server and nothing else (logs at debug level,
//     errors, responses, stores, the CLI's --json output and log file).
//   - TestSessionIDsCannotEscapeTheStore, TestToolPathsCannotEscapeTheRoot,
//     TestToolResultsAreSizeLimited, TestErrorBodiesAreSizeLimited.
//
// The fuzz targets of every parser live beside the parsers; .ci/fuzz.sh
// runs them all.
package reliability
