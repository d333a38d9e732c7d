package stored

import (
	"time"

	"github.com/agcore/agcore/session"
)

// The helpers the SQL stores' records share (session.Records over a table
// with an expiry in Unix nanoseconds, 0 for none).

// ExpiresOf is the stored expiry of t: its Unix nanoseconds, 0 for none.
func ExpiresOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// TimeOf is the expiry stored as ns (0: none).
func TimeOf(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// NonNil is b, or an empty value for nil (the value column is NOT NULL).
func NonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Written is rec as stored at version: its own copy of the value, and the
// expiry as the store keeps it.
func Written(rec session.Record, version int64) session.Record {
	rec.Version = version
	rec.Value = append([]byte{}, rec.Value...)
	if !rec.Expires.IsZero() {
		rec.Expires = TimeOf(rec.Expires.UnixNano())
	}
	return rec
}
