// Package providertest is the contract every provider adapter (an
// [llm.Model] that speaks a wire API over HTTP) must pass, as a test suite
// any adapter, agcore's own or a third party's, runs in one call:
//
//	func TestConformance(t *testing.T) {
//		providertest.Run(t, providertest.Adapter{
//			New: func(c providertest.Config) llm.Model {
//				return myprovider.New(myprovider.WithBaseURL(c.BaseURL), myprovider.WithAPIKey(c.APIKey),
//					myprovider.WithHTTPClient(c.HTTPClient), myprovider.WithIdleTimeout(c.IdleTimeout))
//			},
//			Opening:   []byte("data: {...first text delta...}\n\n"),
//			More:      []byte("data: {...one more text delta...}\n\n"),
//			ErrorBody: func(status int, msg string) []byte { return []byte(`{"error":{"message":"` + msg + `"}}`) },
//			Streams:   []string{"testdata/stream-text.sse"},
//			ToolCalls: "testdata/stream-tools.sse",
//		})
//	}
//
// Run checks, each in a named subtest: recorded traffic replayed in every
// piece size (at once, byte by byte, in pieces that split lines and
// characters) gives the same answer and keeps the stream contract
// ([CheckEvents]); the error-kind table (HTTP status to [llm.ErrorKind],
// the provider's message kept, Retry-After read) on both calls; an API key
// echoed by the server never appears in an error; cancelling the context
// mid-stream ends the stream with a cancellation, breaking out of the range
// closes the request, a connection cut mid-stream is a network error, a
// silent server an idle timeout, and none of these leaks a goroutine;
// usage; tool-call assembly (ids, names, JSON arguments); thinking and
// signatures sent back unchanged; the structured-output request fields;
// citations.
//
// [Serve], [Drain], [CheckEvents] and [CheckGolden] are the pieces the
// suite is made of, exported for an adapter's own tests.
//
// This package imports only the standard library, llm and goleak; it must
// never import an adapter.
package providertest
