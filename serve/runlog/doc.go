// Package runlog is the event log of runs that outlive their connection:
// what a running turn emitted (its protocol's events, each numbered and
// already encoded), kept in a session store's records (session.Records)
// so that any process sharing the store resumes the turn's stream after
// event N, while the turn runs and after it ended, within the log's
// retention.
//
// A [Writer] batches a run's events: at most one record write per
// [Log].FlushInterval (50 ms by default) plus the final one, each batch a
// record keyed by the run and its last event's number, so that
// [Log.Read] after event N lists only the batches holding events after N
// (session.ListRecordsAfter) and never reads those before. A log is
// bounded ([Log].MaxBytes): past it, events are no longer stored (the
// process's own readers still get them) except the final one, which is
// always stored. Every batch expires after [Log].Retention.
//
// A Writer keeps a run's events once, in one growing buffer that holds
// them as the record values of their batches: an event is encoded into
// it ([Writer.AppendFunc]; its bytes may go to a client as they are), a
// batch's write is a slice of it (no copy, no per-event encoding), and a
// closed run's buffer serves the next run unless a reader of this
// process took its events.
//
// A [Log] also knows the runs of its own process: their readers follow
// the events in memory, not through the store. Whether a run whose events
// stopped coming is still alive is its protocol's business: [Log.Follow]
// asks the caller (a lease in the protocol's own record), and
// [Log.AppendFinal] lets the caller end the log of a run whose process was
// lost.
//
// Package runlog imports session and internal/jsonw only; it never
// imports an agent, a protocol or a store.
package runlog
