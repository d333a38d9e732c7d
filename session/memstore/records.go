package memstore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/session"
)

// records is the store's session.Records: a map per namespace. The
// zero value is ready.
type records struct {
	mu sync.Mutex
	ns map[string]map[string]session.Record
}

var _ session.Records = (*Store)(nil)

// recs returns the store's records.
func (s *Store) recs() *records { return &s.records }

func recordErr(ctx context.Context, ns, key string) error {
	if err := session.CheckRecord(ns, key); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	return ctx.Err()
}

// get returns the live record key of ns; the caller holds r.mu.
func (r *records) get(ns, key string, now time.Time) (session.Record, bool) {
	rec, ok := r.ns[ns][key]
	if ok && !rec.Live(now) {
		delete(r.ns[ns], key)
		return session.Record{}, false
	}
	return rec, ok
}

func (r *records) set(ns string, rec session.Record) session.Record {
	m := r.ns[ns]
	if m == nil {
		m = make(map[string]session.Record)
		if r.ns == nil {
			r.ns = make(map[string]map[string]session.Record)
		}
		r.ns[ns] = m
	}
	if rec.Value == nil {
		rec.Value = []byte{}
	}
	kept := rec
	kept.Value = bytes.Clone(rec.Value)
	kept.Version = session.NewRecordVersion()
	m[rec.Key] = kept
	// The caller's own value, not copied again: the store keeps its copy.
	rec.Version = kept.Version
	return rec
}

func clone(rec session.Record) session.Record {
	rec.Value = bytes.Clone(rec.Value)
	if rec.Value == nil {
		rec.Value = []byte{}
	}
	return rec
}

// GetRecord implements session.Records.
func (s *Store) GetRecord(ctx context.Context, ns, key string) (session.Record, error) {
	if err := recordErr(ctx, ns, key); err != nil {
		return session.Record{}, err
	}
	r := s.recs()
	r.mu.Lock()
	defer r.mu.Unlock()
	rec, ok := r.get(ns, key, time.Now())
	if !ok {
		return session.Record{}, fmt.Errorf("memstore: record %s/%q: %w", ns, key, session.ErrNotFound)
	}
	return clone(rec), nil
}

// PutRecord implements session.Records.
func (s *Store) PutRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	if err := recordErr(ctx, ns, rec.Key); err != nil {
		return session.Record{}, err
	}
	r := s.recs()
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.set(ns, rec), nil
}

// CreateRecord implements session.Records.
func (s *Store) CreateRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	if err := recordErr(ctx, ns, rec.Key); err != nil {
		return session.Record{}, err
	}
	r := s.recs()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.get(ns, rec.Key, time.Now()); ok {
		return session.Record{}, fmt.Errorf("memstore: record %s/%q: %w", ns, rec.Key, session.ErrExists)
	}
	return r.set(ns, rec), nil
}

// UpdateRecord implements session.Records.
func (s *Store) UpdateRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	if err := recordErr(ctx, ns, rec.Key); err != nil {
		return session.Record{}, err
	}
	r := s.recs()
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, ok := r.get(ns, rec.Key, time.Now())
	switch {
	case !ok:
		return session.Record{}, fmt.Errorf("memstore: record %s/%q: %w", ns, rec.Key, session.ErrNotFound)
	case cur.Version != rec.Version:
		return session.Record{}, fmt.Errorf("memstore: record %s/%q: %w", ns, rec.Key, session.ErrConflict)
	}
	return r.set(ns, rec), nil
}

// DeleteRecord implements session.Records.
func (s *Store) DeleteRecord(ctx context.Context, ns, key string, version int64) error {
	if err := recordErr(ctx, ns, key); err != nil {
		return err
	}
	r := s.recs()
	r.mu.Lock()
	defer r.mu.Unlock()
	cur, ok := r.get(ns, key, time.Now())
	switch {
	case !ok:
		return fmt.Errorf("memstore: record %s/%q: %w", ns, key, session.ErrNotFound)
	case version != 0 && cur.Version != version:
		return fmt.Errorf("memstore: record %s/%q: %w", ns, key, session.ErrConflict)
	}
	delete(r.ns[ns], key)
	return nil
}

// ListRecords implements session.Records.
func (s *Store) ListRecords(ctx context.Context, ns, prefix string) ([]session.Record, error) {
	if err := recordErr(ctx, ns, "-"); err != nil {
		return nil, err
	}
	r := s.recs()
	r.mu.Lock()
	now := time.Now()
	var out []session.Record
	for k := range r.ns[ns] {
		if rec, ok := r.get(ns, k, now); ok && strings.HasPrefix(k, prefix) {
			out = append(out, clone(rec))
		}
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b session.Record) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// ListRecordsAfter implements session.RecordRange.
func (s *Store) ListRecordsAfter(ctx context.Context, ns, prefix, after string) ([]session.Record, error) {
	if err := recordErr(ctx, ns, "-"); err != nil {
		return nil, err
	}
	r := s.recs()
	r.mu.Lock()
	now := time.Now()
	var out []session.Record
	for k := range r.ns[ns] {
		if k <= after || !strings.HasPrefix(k, prefix) {
			continue
		}
		if rec, ok := r.get(ns, k, now); ok {
			out = append(out, clone(rec))
		}
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b session.Record) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}
