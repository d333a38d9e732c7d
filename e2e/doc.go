// Package e2e holds end-to-end tests that need dependencies agcore itself
// must not carry: a real OpenTelemetry Collector receiver for the CLI's
// OTLP export. It is a module of its own (like bench/), so none of them
// enters agcore's go.mod.
package e2e
