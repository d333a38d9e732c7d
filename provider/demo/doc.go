// Package demo is the scripted demo model: an [llm.Model] that needs no
// network and no key, behind `agcore demo`, `--provider demo` of the agcore
// command and of the Temporal worker (agcore-temporal), and the "demo"
// entry of package provider/registry.
//
// It drives a real session with the real file tools, but it is not a
// language model: it follows a fixed plan (list the directory, read a few
// of its files in parallel, summarize what they say), and every step is
// computed from the request it receives — the files it reads are the ones
// the listing showed, and the summary is made from the text the tools
// returned. A request that does not offer list_dir and read_file (the
// names of package tool/fstool) gets one text answer saying so (and
// naming the instructions it answers under). Agents working together
// follow a plan too (multi.go): a request offering transfer_to_* tools is
// handed over once per turn, to the agent the user's message names (else
// the first); one offering agent tools (agent.AsTool's {"input": string})
// asks each once and answers with their answers.
//
// A request for structured output is answered at once, without the plan:
// a json_schema response format (Request.ResponseFormat) with a text
// holding a JSON value made from the schema, a tool choice naming one tool
// (package structured's forced answer tool) with a call of that tool whose
// arguments are made from its parameters. The value is the same each time
// and validates against the schema: every property; the const or first
// enum value; numbers at their lower bound; strings "example <property>"
// (see exampleOf for formats and lengths). It is a placeholder, not an
// extraction: the demo does not read the prompt.
//
//	m := &demo.Model{}                          // streams at once
//	m := &demo.Model{Delay: 30 * time.Millisecond} // at a readable pace
//
// This package imports only llm, compact (its token estimator, for the
// usage it reports) and the standard library; it must never import an
// adapter, the agent or the CLI.
package demo
