// Package mcpconformance runs the MCP project's conformance suite
// (@modelcontextprotocol/conformance, installed by
// .ci/mcp-conformance-setup.sh) against agcore: its client scenarios
// against the mcp package (the driver in ./client) and against agcore run
// --mcp-url with a scripted model, its server scenarios against agcore mcp
// serve. Scenarios expected to fail are listed in expected-failures.txt,
// each with its reason; a listed scenario that passes fails the test too,
// so the list only shrinks.
//
// It is a test rig: nothing outside tests imports it.
package mcpconformance
