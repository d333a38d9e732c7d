package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

// The records table (session.Records) is a migration step of its own,
// apart from the schema's user_version: it is made on the first use of
// the store's records, so a database opened only to read sessions gains
// nothing, and one of an older agcore gains the table when a newer one
// first needs it. Records are read and written on the writer connection:
// each operation is one statement, so a conditional write is atomic, also
// across processes.
const recordsDDL = `CREATE TABLE IF NOT EXISTS agcore_records (
	ns      TEXT    NOT NULL,
	key     TEXT    NOT NULL,
	value   BLOB    NOT NULL,
	version INTEGER NOT NULL,
	expires INTEGER NOT NULL DEFAULT 0, -- Unix nanoseconds, UTC; 0: never
	PRIMARY KEY (ns, key)
) STRICT, WITHOUT ROWID`

var _ session.Records = (*Store)(nil)

// records makes sure the records table exists.
func (s *Store) records(ctx context.Context, ns, key string) error {
	if err := session.CheckRecord(ns, key); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.recordsReady.Load() {
		return nil
	}
	if _, err := s.w.ExecContext(ctx, recordsDDL); err != nil {
		return fmt.Errorf("sqlite: making the records table: %w", err)
	}
	s.recordsReady.Store(true)
	return nil
}

func recErr(op, ns, key string, err error) error {
	return fmt.Errorf("sqlite: %s record %s/%q: %w", op, ns, key, err)
}

// GetRecord implements session.Records.
func (s *Store) GetRecord(ctx context.Context, ns, key string) (session.Record, error) {
	if err := s.records(ctx, ns, key); err != nil {
		return session.Record{}, err
	}
	rec := session.Record{Key: key}
	var exp int64
	err := s.w.QueryRowContext(ctx, `SELECT value, version, expires FROM agcore_records
		WHERE ns = ? AND key = ? AND (expires = 0 OR expires > ?)`, ns, key, time.Now().UnixNano()).Scan(&rec.Value, &rec.Version, &exp)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return session.Record{}, recErr("get", ns, key, session.ErrNotFound)
	case err != nil:
		return session.Record{}, recErr("get", ns, key, err)
	}
	rec.Value = stored.NonNil(rec.Value)
	rec.Expires = stored.TimeOf(exp)
	return rec, nil
}

// PutRecord implements session.Records.
func (s *Store) PutRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	if err := s.records(ctx, ns, rec.Key); err != nil {
		return session.Record{}, err
	}
	v := session.NewRecordVersion()
	_, err := s.w.ExecContext(ctx, `INSERT INTO agcore_records (ns, key, value, version, expires) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, version = excluded.version, expires = excluded.expires`,
		ns, rec.Key, stored.NonNil(rec.Value), v, stored.ExpiresOf(rec.Expires))
	if err != nil {
		return session.Record{}, recErr("put", ns, rec.Key, err)
	}
	return stored.Written(rec, v), nil
}

// CreateRecord implements session.Records: the insert takes the key of an
// expired record over, atomically.
func (s *Store) CreateRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	if err := s.records(ctx, ns, rec.Key); err != nil {
		return session.Record{}, err
	}
	v := session.NewRecordVersion()
	res, err := s.w.ExecContext(ctx, `INSERT INTO agcore_records (ns, key, value, version, expires) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, version = excluded.version, expires = excluded.expires
		WHERE agcore_records.expires <> 0 AND agcore_records.expires <= ?`,
		ns, rec.Key, stored.NonNil(rec.Value), v, stored.ExpiresOf(rec.Expires), time.Now().UnixNano())
	if err != nil {
		return session.Record{}, recErr("create", ns, rec.Key, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return session.Record{}, recErr("create", ns, rec.Key, session.ErrExists)
	}
	return stored.Written(rec, v), nil
}

// UpdateRecord implements session.Records.
func (s *Store) UpdateRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	if err := s.records(ctx, ns, rec.Key); err != nil {
		return session.Record{}, err
	}
	v := session.NewRecordVersion()
	res, err := s.w.ExecContext(ctx, `UPDATE agcore_records SET value = ?, version = ?, expires = ?
		WHERE ns = ? AND key = ? AND version = ? AND (expires = 0 OR expires > ?)`,
		stored.NonNil(rec.Value), v, stored.ExpiresOf(rec.Expires), ns, rec.Key, rec.Version, time.Now().UnixNano())
	if err != nil {
		return session.Record{}, recErr("update", ns, rec.Key, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return session.Record{}, s.missOrConflict(ctx, "update", ns, rec.Key)
	}
	return stored.Written(rec, v), nil
}

// missOrConflict tells why a conditional write changed nothing.
func (s *Store) missOrConflict(ctx context.Context, op, ns, key string) error {
	_, err := s.GetRecord(ctx, ns, key)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return recErr(op, ns, key, session.ErrNotFound)
	case err != nil:
		return err
	}
	return recErr(op, ns, key, session.ErrConflict)
}

// DeleteRecord implements session.Records.
func (s *Store) DeleteRecord(ctx context.Context, ns, key string, version int64) error {
	if err := s.records(ctx, ns, key); err != nil {
		return err
	}
	res, err := s.w.ExecContext(ctx, `DELETE FROM agcore_records
		WHERE ns = ? AND key = ? AND (expires = 0 OR expires > ?) AND (? = 0 OR version = ?)`,
		ns, key, time.Now().UnixNano(), version, version)
	if err != nil {
		return recErr("delete", ns, key, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return s.missOrConflict(ctx, "delete", ns, key)
	}
	return nil
}

// ListRecords implements session.Records. It also drops the namespace's
// expired records.
func (s *Store) ListRecords(ctx context.Context, ns, prefix string) ([]session.Record, error) {
	if err := s.records(ctx, ns, "-"); err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	if _, err := s.w.ExecContext(ctx, `DELETE FROM agcore_records WHERE ns = ? AND expires <> 0 AND expires <= ?`, ns, now); err != nil {
		return nil, fmt.Errorf("sqlite: list records %s: %w", ns, err)
	}
	// substr counts characters, and a key that starts with prefix has the
	// same characters first: the comparison is exact for UTF-8 text.
	rows, err := s.w.QueryContext(ctx, `SELECT key, value, version, expires FROM agcore_records
		WHERE ns = ? AND substr(key, 1, length(?)) = ? AND (expires = 0 OR expires > ?) ORDER BY key`, ns, prefix, prefix, now)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list records %s: %w", ns, err)
	}
	defer rows.Close()
	var out []session.Record
	for rows.Next() {
		var rec session.Record
		var exp int64
		if err := rows.Scan(&rec.Key, &rec.Value, &rec.Version, &exp); err != nil {
			return nil, fmt.Errorf("sqlite: list records %s: %w", ns, err)
		}
		rec.Value = stored.NonNil(rec.Value)
		rec.Expires = stored.TimeOf(exp)
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list records %s: %w", ns, err)
	}
	return out, nil
}

// ListRecordsAfter implements session.RecordRange: the primary key's
// index reads only the keys after after.
func (s *Store) ListRecordsAfter(ctx context.Context, ns, prefix, after string) ([]session.Record, error) {
	if err := s.records(ctx, ns, "-"); err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	rows, err := s.w.QueryContext(ctx, `SELECT key, value, version, expires FROM agcore_records
		WHERE ns = ? AND key > ? AND substr(key, 1, length(?)) = ? AND (expires = 0 OR expires > ?) ORDER BY key`, ns, after, prefix, prefix, now)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list records %s: %w", ns, err)
	}
	defer rows.Close()
	var out []session.Record
	for rows.Next() {
		var rec session.Record
		var exp int64
		if err := rows.Scan(&rec.Key, &rec.Value, &rec.Version, &exp); err != nil {
			return nil, fmt.Errorf("sqlite: list records %s: %w", ns, err)
		}
		rec.Value = stored.NonNil(rec.Value)
		rec.Expires = stored.TimeOf(exp)
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list records %s: %w", ns, err)
	}
	return out, nil
}
