// Package llmtest provides a scripted [llm.Model] for tests and offline
// examples.
//
// A [Model] plays a list of [Step]s in order, one per model call, through
// either Generate or Stream: a text answer, tool calls, thinking, an error, an
// error in the middle of a stream, or a function that computes the answer.
// Streams are cut into small deltas so code that consumes them sees what a
// real provider sends. Every request is recorded (deep-copied) and can be
// inspected with [Model.Requests]. [Model.Verify] makes the test fail at
// cleanup if a step was never used or a call found no step left.
//
//	m := llmtest.New(
//		llmtest.Reply(llmtest.Call("call_1", "get_weather", `{"city":"Paris"}`)),
//		llmtest.Text("It is sunny in Paris."),
//	).Verify(t)
//
// This package imports only llm and the standard library; it must never
// import any other agcore package.
package llmtest
