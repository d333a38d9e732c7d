// Package testkit is the root of agcore's test rigs: everything under
// internal/testkit exists for tests, benchmarks and examples only (the
// misbehaving server, the reliability and scale-out suites, the
// cache-share replay, the size probe, the skip reporter and wait helpers).
// The production helpers live beside it in internal/ (httpx, sse,
// jsonscan, redact).
//
// Its own tests keep the module's shape: no production package depends on
// a test rig, no import runs upward through the layers ARCHITECTURE.md
// draws (TestLayers), and the request walk ARCHITECTURE.md gives names
// functions that exist (TestRequestWalk).
package testkit
