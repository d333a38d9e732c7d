// Package evaltest runs an eval set from a Go test: one call ([Run]) runs
// the set against an agent and makes each case a subtest, failing with
// the case's failing scores and the reasons, so `go test -run
// TestEvals/case-id` reruns one case and CI reports each case on its own.
//
//	func TestEvals(t *testing.T) {
//		evaltest.RunFile(t, myAgent(t), "testdata/support.eval.json", nil)
//	}
//
// Package evaltest imports eval and testing; it is a test helper (as
// session/sessiontest is) and must never be imported by production code.
package evaltest
