// Package sessiontest is the contract every [session.Store] must pass, as a
// test suite any store (agcore's own or a third party's) can run:
//
//	func TestContract(t *testing.T) {
//		sessiontest.Run(t, func(t *testing.T) session.Store {
//			s, err := mystore.Open(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// Run checks, each in a named subtest: the round trip of every content
// block kind and of tool-result messages, message order across turns,
// atomicity (a turn that cannot be encoded stores nothing), idempotent
// append, isolation between sessions, paging (newest first, no duplicates
// or skips), delete, the sentinel errors (ErrExists, ErrNotFound,
// ErrInvalidID for every unsafe id), the running totals (usage, cost, state
// bag, request-hash statistics), defensive copies, the content hashes a
// store hands over with the messages it loads (when it hands over any:
// [session.Session.KnownMessageHash] must agree with [session.MessageHash]),
// concurrent appends, owners (an append to another owner's session fails
// with session.ErrOwner and stores nothing; session.Scoped hides other
// owners' sessions from Load, LoadView, Delete and List; listing pages by
// owner), the metadata kept on append (title, model, tokens, cost, turns,
// times, as List and Load return them), and compaction views (LoadView
// returns the view and the messages after its Upto, with Base; a view is
// replaced with its turn, atomically, and never by a refused or retried
// turn).
//
// [Crash] checks a durable store against SIGKILL: a child process appends
// in a loop and is killed at random moments; after each kill the store must
// open and hold every turn whose Append had returned, whole. A killed
// process leaves the kernel's page cache behind, so this cannot show a
// missing fsync; agcore's stores prove that with power-loss tests of their
// own.
//
// [BenchAppend], [BenchLoad], [BenchList] and [BenchLoadView] measure a
// store the same way for every implementation: the p50 and p99 latency of
// appending a 10-message turn, the time to load a 10,000-message session,
// to list 1,000 sessions of 100 messages, and to load the view of a
// 10,000-message session compacted near its end (against Load).
//
// [EveryBlockKind] and [Conversation] are the messages the suite uses,
// exported for a store's own tests.
//
// This package imports only the standard library, llm and session; it must
// never import a store implementation.
package sessiontest
