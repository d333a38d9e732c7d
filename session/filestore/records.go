package filestore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/session"
)

// The records (session.Records) of namespace NS live in the file
// NS.agrecords beside the sessions (no session file has that extension),
// one JSON document holding every record of the namespace. A write
// rewrites the document in NS.agrecords.tmp, fsyncs it, renames it into
// place and fsyncs the directory, so a namespace's file is always one
// whole state. The store keeps what it read in memory: like the
// sessions, the records assume one Store per directory.
const recordsExt = ".agrecords"

// records is the store's record state. The zero value is ready.
type records struct {
	mu sync.Mutex
	ns map[string]map[string]fileRecord // loaded namespaces
}

// fileRecord is a record as the file holds it.
type fileRecord struct {
	Key     string `json:"key"`
	Value   []byte `json:"value"`
	Version int64  `json:"version"`
	Expires int64  `json:"expires,omitempty"` // Unix nanoseconds
}

func (f fileRecord) record() session.Record {
	rec := session.Record{Key: f.Key, Value: bytes.Clone(f.Value), Version: f.Version}
	if rec.Value == nil {
		rec.Value = []byte{}
	}
	if f.Expires != 0 {
		rec.Expires = time.Unix(0, f.Expires).UTC()
	}
	return rec
}

func (f fileRecord) live(now int64) bool { return f.Expires == 0 || f.Expires > now }

var _ session.Records = (*Store)(nil)

func recErr(op, ns, key string, err error) error {
	return fmt.Errorf("filestore: %s record %s/%q: %w", op, ns, key, err)
}

// namespace returns ns's records, reading its file on first use; the
// caller holds s.records.mu.
func (s *Store) namespace(ctx context.Context, ns, key string) (map[string]fileRecord, error) {
	if err := session.CheckRecord(ns, key); err != nil {
		return nil, fmt.Errorf("filestore: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if m, ok := s.records.ns[ns]; ok {
		return m, nil
	}
	m := map[string]fileRecord{}
	data, err := s.fs.ReadFile(ns + recordsExt)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("filestore: reading the records of %s: %w", ns, err)
	default:
		var doc struct {
			Records []fileRecord `json:"records"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("filestore: the records file of %s: %w", ns, err)
		}
		for _, r := range doc.Records {
			m[r.Key] = r
		}
	}
	if s.records.ns == nil {
		s.records.ns = map[string]map[string]fileRecord{}
	}
	s.records.ns[ns] = m
	return m, nil
}

// save writes m as ns's file; on failure the cached namespace is dropped,
// so the next use reads the file again.
func (s *Store) saveRecords(ns string, m map[string]fileRecord) (err error) {
	defer func() {
		if err != nil {
			delete(s.records.ns, ns)
			err = fmt.Errorf("filestore: writing the records of %s: %w", ns, err)
		}
	}()
	now := time.Now().UnixNano()
	doc := struct {
		Records []fileRecord `json:"records"`
	}{Records: make([]fileRecord, 0, len(m))}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if r := m[k]; r.live(now) {
			doc.Records = append(doc.Records, r)
		} else {
			delete(m, k)
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	name := ns + recordsExt
	f, err := s.fs.OpenFile(name+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := s.fs.Rename(name+".tmp", name); err != nil {
		return err
	}
	return s.syncDir()
}

// write stores rec in m (and ns's file) with a new version.
func (s *Store) writeRecord(ns string, m map[string]fileRecord, rec session.Record) (session.Record, error) {
	f := fileRecord{Key: rec.Key, Value: bytes.Clone(rec.Value), Version: session.NewRecordVersion()}
	if f.Value == nil {
		f.Value = []byte{}
	}
	if !rec.Expires.IsZero() {
		f.Expires = rec.Expires.UnixNano()
	}
	old, had := m[rec.Key]
	m[rec.Key] = f
	if err := s.saveRecords(ns, m); err != nil {
		if had {
			m[rec.Key] = old
		} else {
			delete(m, rec.Key)
		}
		return session.Record{}, err
	}
	return f.record(), nil
}

// GetRecord implements session.Records.
func (s *Store) GetRecord(ctx context.Context, ns, key string) (session.Record, error) {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	m, err := s.namespace(ctx, ns, key)
	if err != nil {
		return session.Record{}, err
	}
	f, ok := m[key]
	if !ok || !f.live(time.Now().UnixNano()) {
		return session.Record{}, recErr("get", ns, key, session.ErrNotFound)
	}
	return f.record(), nil
}

// PutRecord implements session.Records.
func (s *Store) PutRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	m, err := s.namespace(ctx, ns, rec.Key)
	if err != nil {
		return session.Record{}, err
	}
	return s.writeRecord(ns, m, rec)
}

// CreateRecord implements session.Records.
func (s *Store) CreateRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	m, err := s.namespace(ctx, ns, rec.Key)
	if err != nil {
		return session.Record{}, err
	}
	if f, ok := m[rec.Key]; ok && f.live(time.Now().UnixNano()) {
		return session.Record{}, recErr("create", ns, rec.Key, session.ErrExists)
	}
	return s.writeRecord(ns, m, rec)
}

// UpdateRecord implements session.Records.
func (s *Store) UpdateRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	m, err := s.namespace(ctx, ns, rec.Key)
	if err != nil {
		return session.Record{}, err
	}
	f, ok := m[rec.Key]
	switch {
	case !ok || !f.live(time.Now().UnixNano()):
		return session.Record{}, recErr("update", ns, rec.Key, session.ErrNotFound)
	case f.Version != rec.Version:
		return session.Record{}, recErr("update", ns, rec.Key, session.ErrConflict)
	}
	return s.writeRecord(ns, m, rec)
}

// DeleteRecord implements session.Records.
func (s *Store) DeleteRecord(ctx context.Context, ns, key string, version int64) error {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	m, err := s.namespace(ctx, ns, key)
	if err != nil {
		return err
	}
	f, ok := m[key]
	switch {
	case !ok || !f.live(time.Now().UnixNano()):
		return recErr("delete", ns, key, session.ErrNotFound)
	case version != 0 && f.Version != version:
		return recErr("delete", ns, key, session.ErrConflict)
	}
	delete(m, key)
	if err := s.saveRecords(ns, m); err != nil {
		return err
	}
	return nil
}

// ListRecords implements session.Records.
func (s *Store) ListRecords(ctx context.Context, ns, prefix string) ([]session.Record, error) {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	m, err := s.namespace(ctx, ns, "-")
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	var out []session.Record
	for k, f := range m {
		if strings.HasPrefix(k, prefix) && f.live(now) {
			out = append(out, f.record())
		}
	}
	slices.SortFunc(out, func(a, b session.Record) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// ListRecordsAfter implements session.RecordRange.
func (s *Store) ListRecordsAfter(ctx context.Context, ns, prefix, after string) ([]session.Record, error) {
	s.records.mu.Lock()
	defer s.records.mu.Unlock()
	m, err := s.namespace(ctx, ns, "-")
	if err != nil {
		return nil, err
	}
	now := time.Now().UnixNano()
	var out []session.Record
	for k, f := range m {
		if k > after && strings.HasPrefix(k, prefix) && f.live(now) {
			out = append(out, f.record())
		}
	}
	slices.SortFunc(out, func(a, b session.Record) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}
