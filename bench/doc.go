// Package bench measures what it costs a Go client to consume a streamed
// LLM answer: agcore's adapters and agent against a hand-written floor and
// against other Go libraries (openai-go, anthropic-sdk-go, langchaingo,
// fantasy, eino), all reading the same server-sent-event streams from one
// local server.
//
// It is a separate module so that none of the peers enters agcore's own
// dependencies. The command ./cmd/benchtable prints the comparison table;
// ./cmd/llmserver runs the stream server alone; `go test -bench .` runs the
// same streams as ordinary Go benchmarks. See README.md for the method.
//
// The server takes its orders from the request's model name, which every
// library sends in the body: "bench-n1000" asks for 1,000 text chunks,
// "bench-n1000-p20" for 1,000 chunks paced 20 ms apart (see [ModelName]).
package bench
