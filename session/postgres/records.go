package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

// The records table (session.Records) is a migration step of its own,
// apart from the session schema's versions: it is made on the first use of
// the store's records (CREATE TABLE IF NOT EXISTS, under an advisory lock
// so that processes starting together make it once), so a store opened
// only to read sessions creates nothing, and a database of an older
// agcore gains the table when a newer one first needs it.
const recordsDDL = `CREATE TABLE IF NOT EXISTS agcore_records (
	ns      text COLLATE "C" NOT NULL,
	key     text COLLATE "C" NOT NULL,
	value   bytea NOT NULL,
	version bigint NOT NULL,
	expires bigint NOT NULL DEFAULT 0, -- Unix nanoseconds, UTC; 0: never
	PRIMARY KEY (ns, key)
)`

var _ session.Records = (*Store)(nil)

// records makes sure the records table exists.
func (s *Store) records(ctx context.Context, ns, key string) error {
	if err := session.CheckRecord(ns, key); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.recordsReady.Load() {
		return nil
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('agcore.records.migrate:' || current_schema()))`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, recordsDDL)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: making the records table: %w", unavailable(err))
	}
	s.recordsReady.Store(true)
	return nil
}

func recErr(op, ns, key string, err error) error {
	return fmt.Errorf("postgres: %s record %s/%q: %w", op, ns, key, err)
}

// GetRecord implements session.Records.
func (s *Store) GetRecord(ctx context.Context, ns, key string) (session.Record, error) {
	if err := s.records(ctx, ns, key); err != nil {
		return session.Record{}, err
	}
	rec := session.Record{Key: key}
	var exp int64
	err := s.pool.QueryRow(ctx, `SELECT value, version, expires FROM agcore_records
		WHERE ns = $1 AND key = $2 AND (expires = 0 OR expires > $3)`, ns, key, time.Now().UnixNano()).Scan(&rec.Value, &rec.Version, &exp)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return session.Record{}, recErr("get", ns, key, session.ErrNotFound)
	case err != nil:
		return session.Record{}, recErr("get", ns, key, unavailable(err))
	}
	if rec.Value == nil {
		rec.Value = []byte{}
	}
	rec.Expires = stored.TimeOf(exp)
	return rec, nil
}

// PutRecord implements session.Records.
func (s *Store) PutRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	if err := s.records(ctx, ns, rec.Key); err != nil {
		return session.Record{}, err
	}
	v := session.NewRecordVersion()
	_, err := s.pool.Exec(ctx, `INSERT INTO agcore_records (ns, key, value, version, expires) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, version = excluded.version, expires = excluded.expires`,
		ns, rec.Key, stored.NonNil(rec.Value), v, stored.ExpiresOf(rec.Expires))
	if err != nil {
		return session.Record{}, recErr("put", ns, rec.Key, unavailable(err))
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
	tag, err := s.pool.Exec(ctx, `INSERT INTO agcore_records (ns, key, value, version, expires) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value, version = excluded.version, expires = excluded.expires
		WHERE agcore_records.expires <> 0 AND agcore_records.expires <= $6`,
		ns, rec.Key, stored.NonNil(rec.Value), v, stored.ExpiresOf(rec.Expires), time.Now().UnixNano())
	switch {
	case err != nil:
		return session.Record{}, recErr("create", ns, rec.Key, unavailable(err))
	case tag.RowsAffected() == 0:
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
	tag, err := s.pool.Exec(ctx, `UPDATE agcore_records SET value = $3, version = $4, expires = $5
		WHERE ns = $1 AND key = $2 AND version = $6 AND (expires = 0 OR expires > $7)`,
		ns, rec.Key, stored.NonNil(rec.Value), v, stored.ExpiresOf(rec.Expires), rec.Version, time.Now().UnixNano())
	if err != nil {
		return session.Record{}, recErr("update", ns, rec.Key, unavailable(err))
	}
	if tag.RowsAffected() == 0 {
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
	tag, err := s.pool.Exec(ctx, `DELETE FROM agcore_records
		WHERE ns = $1 AND key = $2 AND (expires = 0 OR expires > $3) AND ($4::bigint = 0 OR version = $4::bigint)`,
		ns, key, time.Now().UnixNano(), version)
	if err != nil {
		return recErr("delete", ns, key, unavailable(err))
	}
	if tag.RowsAffected() == 0 {
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
	if _, err := s.pool.Exec(ctx, `DELETE FROM agcore_records WHERE ns = $1 AND expires <> 0 AND expires <= $2`, ns, now); err != nil {
		return nil, fmt.Errorf("postgres: list records %s: %w", ns, unavailable(err))
	}
	rows, err := s.pool.Query(ctx, `SELECT key, value, version, expires FROM agcore_records
		WHERE ns = $1 AND starts_with(key, $2) AND (expires = 0 OR expires > $3) ORDER BY key`, ns, prefix, now)
	if err != nil {
		return nil, fmt.Errorf("postgres: list records %s: %w", ns, unavailable(err))
	}
	defer rows.Close()
	var out []session.Record
	for rows.Next() {
		var rec session.Record
		var exp int64
		if err := rows.Scan(&rec.Key, &rec.Value, &rec.Version, &exp); err != nil {
			return nil, fmt.Errorf("postgres: list records %s: %w", ns, unavailable(err))
		}
		rec.Value = stored.NonNil(rec.Value)
		rec.Expires = stored.TimeOf(exp)
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list records %s: %w", ns, unavailable(err))
	}
	return out, nil
}

// ListRecordsAfter implements session.RecordRange: the primary key's
// index (COLLATE "C": byte order) reads only the keys after after.
func (s *Store) ListRecordsAfter(ctx context.Context, ns, prefix, after string) ([]session.Record, error) {
	if err := s.records(ctx, ns, "-"); err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	rows, err := s.pool.Query(ctx, `SELECT key, value, version, expires FROM agcore_records
		WHERE ns = $1 AND key > $2 AND starts_with(key, $3) AND (expires = 0 OR expires > $4) ORDER BY key`, ns, after, prefix, now)
	if err != nil {
		return nil, fmt.Errorf("postgres: list records %s: %w", ns, unavailable(err))
	}
	defer rows.Close()
	var out []session.Record
	for rows.Next() {
		var rec session.Record
		var exp int64
		if err := rows.Scan(&rec.Key, &rec.Value, &rec.Version, &exp); err != nil {
			return nil, fmt.Errorf("postgres: list records %s: %w", ns, unavailable(err))
		}
		rec.Value = stored.NonNil(rec.Value)
		rec.Expires = stored.TimeOf(exp)
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list records %s: %w", ns, unavailable(err))
	}
	return out, nil
}
