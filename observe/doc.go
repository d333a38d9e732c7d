// Package observe is the seam between agcore and a telemetry
// implementation, small enough for every layer to import: it uses only the
// standard library, so a program that does not trace links nothing more.
//
// agcore's core packages never import OpenTelemetry. Instead, an
// [Observer] travels in the context of a run, and the places that do work
// below the model pipeline ask the context for it. An agent's telemetry
// (agent.Telemetry, agcore's one telemetry seam, which package otelagent
// implements) is an Observer that also wraps the pipeline: the agent puts
// it in each run's context with [With] (and the telemetry may put a more
// specific one there as the run starts). Then:
//
//   - [Start] opens a span for an internal phase of a run: the budget
//     policy's compaction ([PhaseCompaction], by package compact, only when
//     a request is compressed) and the turn's persistence
//     ([PhasePersistence], by package agent);
//
//   - [Inject] writes the trace context of the current span as text
//     headers (W3C traceparent, tracestate, baggage): internal/httpx puts
//     them on every request the provider adapters send, package mcp on
//     every MCP tool call (in the request's _meta and, over HTTP, as
//     headers), and a tool of yours can do the same to join the trace:
//
//     req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
//     observe.Inject(ctx, req.Header.Set)
//
// With no Observer in the context both are no-ops that cost a context
// lookup and allocate nothing.
//
// This package imports only the standard library; it must never import
// another agcore package.
package observe
