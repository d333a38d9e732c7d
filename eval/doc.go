// Package eval measures an agent against sets of cases: a case is one or
// more user turns, each with what is expected of it (the tool trajectory,
// calls made by sub-agents and after handoffs included, each marked with
// the agent that made it; the final answer; the answering agent; limits on
// cost, tokens, steps and latency; a rubric for an LLM judge), and [Run]
// runs the cases against an agent, concurrently and bounded, each in a
// fresh session (or the case's initial state), and scores them with
// [Scorer]s, each with its threshold. A case passes when every scorer that
// applies meets its threshold.
//
// Sets are read from agcore's own JSON format ([Parse], its JSON Schema in
// [SchemaJSON]), from Google ADK's eval set files (*.evalset.json and the
// older *.test.json list) with ADK's test_config.json ([ParseADK],
// [ParseADKConfig]), read as ADK reads them, and made from replay records
// ([FromRecord]: the recorded trajectory and answer become the
// expectation).
//
// A case with a record runs offline: an agent built over [Offline] answers
// the case's model calls from the record, and the report names the cases
// whose requests drifted from the recorded ones (a changed prompt, tool or
// parameter). Options.Repeat runs each case N times and reports its pass
// rate and the spread of each score.
//
// The [Report] is one JSON object ([Report.WriteJSON]), JUnit XML
// ([Report.WriteJUnit]) or a table ([Report.WriteTable]); [Compare] lists
// the regressions and improvements against an earlier report. Package
// eval/evaltest runs a set as subtests of a Go test.
//
// Package eval is layer 7 of ARCHITECTURE.md: it imports agent, replay,
// middleware, structured (the judge's verdict) and the layers below, and
// jsonschema-go (answers checked against a schema); it must never import
// cmd, serve, otelagent or a provider adapter.
package eval
