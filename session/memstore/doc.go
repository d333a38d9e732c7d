// Package memstore is an in-memory [session.Store], for tests, examples and
// short-lived programs: nothing survives the process.
//
// It behaves like the durable stores in every observable way: ids are
// checked with [session.ValidateID], a turn is encoded to the storage JSON
// when it is appended (so a turn another store would reject is rejected
// here too, and nothing of it is kept), and Load returns fresh copies, so
// neither the caller's later changes to an appended turn nor its changes to
// a loaded session reach the stored state. A loaded session carries the
// content hashes of its messages (see [session.Session.SetMessageHashes]),
// computed once when they were appended.
//
// Imported, the package registers "memory:" with session.Open (see
// session.Register); session/stores imports every store.
//
// This package imports only the standard library, llm and session, and
// must never import another store or anything above the session layer.
package memstore
