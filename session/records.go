package session

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
	"unicode/utf8"
)

// Record is one keyed value of a store's [Records]: what the processes
// sharing a store keep beside the sessions (a server's response objects,
// A2A tasks, tool calls waiting for approval, leases).
type Record struct {
	// Key names the record within its namespace: 1 to MaxRecordKeyLen
	// bytes of UTF-8 without NUL.
	Key string
	// Value is the record's content, opaque to the store.
	Value []byte
	// Version is set by the store on every write to a value drawn at
	// random (never 0); UpdateRecord and DeleteRecord can be made
	// conditional on it. A read returns the current one.
	Version int64
	// Expires, when not zero, is when the record stops existing: an
	// expired record is never returned, and its key is free again for
	// CreateRecord. Stores compare it with their process's clock (Redis
	// with the server's), so the clocks of the processes sharing a store
	// must agree to well under the shortest lifetime they give.
	Expires time.Time
}

// Records is a store's keyed-record facility: small values under a
// namespace and a key, with compare-and-swap writes and optional expiry,
// shared by every process of the store. Every store of agcore implements
// it (see [RecordsOf]); their implementations pass the contract suite in
// package sessiontest (RunRecords).
//
// Records are not part of any session: deleting a session leaves them.
// Namespaces are 1 to 64 bytes of the characters [ValidateID] accepts.
type Records interface {
	// GetRecord returns the record key of namespace ns; ErrNotFound if
	// there is none (or it expired).
	GetRecord(ctx context.Context, ns, key string) (Record, error)
	// PutRecord writes rec (its Key, Value and Expires) whatever the key
	// holds, and returns it with its new Version.
	PutRecord(ctx context.Context, ns string, rec Record) (Record, error)
	// CreateRecord writes rec only if its key holds no record (an expired
	// one counts as none); ErrExists if it does.
	CreateRecord(ctx context.Context, ns string, rec Record) (Record, error)
	// UpdateRecord writes rec only if the record stored under its key has
	// the Version rec names: ErrConflict if it has another, ErrNotFound if
	// there is none.
	UpdateRecord(ctx context.Context, ns string, rec Record) (Record, error)
	// DeleteRecord removes the record key; with a non-zero version, only
	// if the record has that version (ErrConflict if not). ErrNotFound if
	// there is none.
	DeleteRecord(ctx context.Context, ns, key string, version int64) error
	// ListRecords returns the records of ns whose keys start with prefix,
	// in byte order of their keys.
	ListRecords(ctx context.Context, ns, prefix string) ([]Record, error)
}

// ErrConflict is returned (wrapped) by Records' conditional writes when
// the record changed since the version they name.
var ErrConflict = errors.New("session: record changed meanwhile")

// MaxRecordKeyLen is the longest record key, in bytes.
const MaxRecordKeyLen = 512

// RecordsOf returns the Records of st: st itself when it implements
// Records, or the store inside an [Opened] or a [Scoped] store. It
// reports false for a store without records (a custom one).
func RecordsOf(st Store) (Records, bool) {
	for range 8 { // wrappers are shallow; never loop forever
		if r, ok := st.(Records); ok {
			return r, true
		}
		switch s := st.(type) {
		case *Opened:
			st = s.Store
		case *scoped:
			st = s.st
		case interface{ Unwrap() Store }:
			st = s.Unwrap()
		default:
			return nil, false
		}
		if st == nil {
			return nil, false
		}
	}
	return nil, false
}

// CheckRecord reports whether ns and key may name a record; stores call
// it first. Its error wraps ErrInvalidID.
func CheckRecord(ns, key string) error {
	switch {
	case ns == "" || len(ns) > 64 || ValidateID(ns) != nil:
		return fmt.Errorf("%w: record namespace %q (1 to 64 of A-Z a-z 0-9 . _ -)", ErrInvalidID, ns)
	case key == "" || len(key) > MaxRecordKeyLen:
		return fmt.Errorf("%w: record key of %d bytes (1 to %d)", ErrInvalidID, len(key), MaxRecordKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: record key %q is not UTF-8", ErrInvalidID, key)
	}
	for i := 0; i < len(key); i++ {
		if key[i] == 0 {
			return fmt.Errorf("%w: record key %q holds NUL", ErrInvalidID, key)
		}
	}
	return nil
}

// NewRecordVersion draws a record version for a store's write: random,
// positive, never 0.
func NewRecordVersion() int64 { return rand.Int64N(1<<62) + 1 }

// Live reports whether rec exists at now: it has no expiry or expires
// after now.
func (rec Record) Live(now time.Time) bool {
	return rec.Expires.IsZero() || rec.Expires.After(now)
}

// RecordRange is implemented by the [Records] that list a range of a
// prefix's keys, reading only the records in it: an event log kept as
// records (one per batch, keyed by its last event's number) is read after
// event N without reading what came before. Every store of agcore
// implements it; [ListRecordsAfter] falls back to ListRecords for one that
// does not.
type RecordRange interface {
	// ListRecordsAfter returns the records of ns whose keys start with
	// prefix and sort after after (byte order), in byte order of their
	// keys. An after that sorts before prefix lists the whole prefix.
	ListRecordsAfter(ctx context.Context, ns, prefix, after string) ([]Record, error)
}

// ListRecordsAfter returns the records of ns whose keys start with prefix
// and sort after after, in byte order of their keys: through r's
// [RecordRange] when it has one, else by filtering ListRecords.
func ListRecordsAfter(ctx context.Context, r Records, ns, prefix, after string) ([]Record, error) {
	if rr, ok := r.(RecordRange); ok {
		return rr.ListRecordsAfter(ctx, ns, prefix, after)
	}
	all, err := r.ListRecords(ctx, ns, prefix)
	if err != nil {
		return nil, err
	}
	i := 0
	for i < len(all) && all[i].Key <= after {
		i++
	}
	return all[i:], nil
}
