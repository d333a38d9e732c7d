package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/session"
)

// The records (session.Records) are keys of their own beside the
// sessions', added to the layout without changing its version (older
// agcore versions never read them):
//
//	PREFIX r:NS:KEY  hash {v: value, ver: version, exp: Unix ms or 0}, with
//	                 the key's own expiry (PEXPIREAT) when exp is set
//	PREFIX ri:NS     sorted set of the namespace's keys (score 0, by key),
//	                 for ListRecords; members whose record expired are
//	                 dropped by the next listing
//
// Every write is one script, so a conditional write is atomic.

var _ session.Records = (*Store)(nil)

func (s *Store) recordKeys(ns, key string) []string {
	return []string{s.prefix + "r:" + ns + ":" + key, s.prefix + "ri:" + ns}
}

// recordScript writes one record: ARGV = mode (put, create, update,
// delete), value, new version, expiry (Unix ms, 0 none), expected
// version (0: any), the record's key. It returns 1 when it wrote, -1 when
// create found a record, -2 when update or delete found none, -3 when
// they found another version.
var recordScript = goredis.NewScript(`
local cur = redis.call('HGET', KEYS[1], 'ver')
local mode = ARGV[1]
if mode == 'create' and cur then return -1 end
if mode == 'update' or mode == 'delete' then
	if not cur then return -2 end
	if ARGV[5] ~= '0' and cur ~= ARGV[5] then return -3 end
end
if mode == 'delete' then
	redis.call('DEL', KEYS[1])
	redis.call('ZREM', KEYS[2], ARGV[6])
	return 1
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'ver', ARGV[3], 'exp', ARGV[4])
if ARGV[4] ~= '0' then redis.call('PEXPIREAT', KEYS[1], ARGV[4]) end
redis.call('ZADD', KEYS[2], 0, ARGV[6])
return 1
`)

// pruneScript removes from the index KEYS[1] the members ARGV whose
// record (KEYS[2] followed by the member) does not exist.
var pruneScript = goredis.NewScript(`
for _, m in ipairs(ARGV) do
	if redis.call('EXISTS', KEYS[2] .. m) == 0 then redis.call('ZREM', KEYS[1], m) end
end
return 0
`)

func recErr(op, ns, key string, err error) error {
	return fmt.Errorf("redis: %s record %s/%q: %w", op, ns, key, err)
}

func checkRecord(ctx context.Context, ns, key string) error {
	if err := session.CheckRecord(ns, key); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return ctx.Err()
}

func expiresMs(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return max(t.UnixMilli(), 1)
}

func (s *Store) writeRecord(ctx context.Context, op, ns string, rec session.Record, expect int64) (session.Record, error) {
	if err := checkRecord(ctx, ns, rec.Key); err != nil {
		return session.Record{}, err
	}
	v := session.NewRecordVersion()
	exp := expiresMs(rec.Expires)
	n, err := recordScript.Run(ctx, s.rdb, s.recordKeys(ns, rec.Key), op, rec.Value, v, exp, expect, rec.Key).Int()
	switch {
	case err != nil:
		return session.Record{}, recErr(op, ns, rec.Key, unavailable(err))
	case n == -1:
		return session.Record{}, recErr(op, ns, rec.Key, session.ErrExists)
	case n == -2:
		return session.Record{}, recErr(op, ns, rec.Key, session.ErrNotFound)
	case n == -3:
		return session.Record{}, recErr(op, ns, rec.Key, session.ErrConflict)
	}
	rec.Version = v
	rec.Value = append([]byte{}, rec.Value...)
	if exp != 0 {
		rec.Expires = time.UnixMilli(exp).UTC()
	}
	return rec, nil
}

// PutRecord implements session.Records.
func (s *Store) PutRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	return s.writeRecord(ctx, "put", ns, rec, 0)
}

// CreateRecord implements session.Records.
func (s *Store) CreateRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	return s.writeRecord(ctx, "create", ns, rec, 0)
}

// UpdateRecord implements session.Records.
func (s *Store) UpdateRecord(ctx context.Context, ns string, rec session.Record) (session.Record, error) {
	if rec.Version == 0 {
		return session.Record{}, recErr("update", ns, rec.Key, session.ErrConflict)
	}
	return s.writeRecord(ctx, "update", ns, rec, rec.Version)
}

// DeleteRecord implements session.Records.
func (s *Store) DeleteRecord(ctx context.Context, ns, key string, version int64) error {
	_, err := s.writeRecord(ctx, "delete", ns, session.Record{Key: key}, version)
	return err
}

// parseRecord reads the fields of a record's hash (v, ver, exp); ok is
// false when the record does not exist.
func parseRecord(key string, vals []any) (session.Record, bool, error) {
	if len(vals) != 3 || vals[1] == nil {
		return session.Record{}, false, nil
	}
	v, _ := vals[0].(string)
	ver, err1 := strconv.ParseInt(fmt.Sprint(vals[1]), 10, 64)
	exp, err2 := strconv.ParseInt(fmt.Sprint(vals[2]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return session.Record{}, false, fmt.Errorf("redis: record %q is damaged: %w", key, err)
	}
	rec := session.Record{Key: key, Value: []byte(v), Version: ver}
	if exp != 0 {
		rec.Expires = time.UnixMilli(exp).UTC()
	}
	return rec, true, nil
}

// GetRecord implements session.Records.
func (s *Store) GetRecord(ctx context.Context, ns, key string) (session.Record, error) {
	if err := checkRecord(ctx, ns, key); err != nil {
		return session.Record{}, err
	}
	vals, err := s.rdb.HMGet(ctx, s.recordKeys(ns, key)[0], "v", "ver", "exp").Result()
	if err != nil {
		return session.Record{}, recErr("get", ns, key, unavailable(err))
	}
	rec, ok, err := parseRecord(key, vals)
	switch {
	case err != nil:
		return session.Record{}, err
	case !ok:
		return session.Record{}, recErr("get", ns, key, session.ErrNotFound)
	}
	return rec, nil
}

// ListRecords implements session.Records.
func (s *Store) ListRecords(ctx context.Context, ns, prefix string) ([]session.Record, error) {
	if err := checkRecord(ctx, ns, "-"); err != nil {
		return nil, err
	}
	lo, hi := "-", "+"
	if prefix != "" {
		lo, hi = "["+prefix, "("+prefix+"\xff"
	}
	return s.listRecords(ctx, ns, lo, hi)
}

// ListRecordsAfter implements session.RecordRange: the index's range
// (ZRANGEBYLEX from after, exclusive) reads only the keys after after.
func (s *Store) ListRecordsAfter(ctx context.Context, ns, prefix, after string) ([]session.Record, error) {
	if err := checkRecord(ctx, ns, "-"); err != nil {
		return nil, err
	}
	lo, hi := "-", "+"
	if prefix != "" {
		lo, hi = "["+prefix, "("+prefix+"\xff"
	}
	if after >= prefix {
		lo = "(" + after
	}
	return s.listRecords(ctx, ns, lo, hi)
}

// listRecords reads the records of ns whose keys are in the lexical range
// lo to hi (ZRANGEBYLEX's notation).
func (s *Store) listRecords(ctx context.Context, ns, lo, hi string) ([]session.Record, error) {
	index := s.prefix + "ri:" + ns
	keys, err := s.rdb.ZRangeByLex(ctx, index, &goredis.ZRangeBy{Min: lo, Max: hi}).Result()
	if err != nil {
		return nil, fmt.Errorf("redis: list records %s: %w", ns, unavailable(err))
	}
	if len(keys) == 0 {
		return nil, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*goredis.SliceCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.HMGet(ctx, s.recordKeys(ns, k)[0], "v", "ver", "exp")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("redis: list records %s: %w", ns, unavailable(err))
	}
	out := make([]session.Record, 0, len(keys))
	var gone []any
	for i, k := range keys {
		rec, ok, err := parseRecord(k, cmds[i].Val())
		switch {
		case err != nil:
			return nil, err
		case !ok:
			gone = append(gone, k)
		default:
			out = append(out, rec)
		}
	}
	if len(gone) > 0 {
		// Expired records leave their index entries: drop those whose
		// record still does not exist (one written again meanwhile keeps
		// its entry).
		_ = pruneScript.Run(ctx, s.rdb, []string{index, s.prefix + "r:" + ns + ":"}, gone...).Err()
	}
	return out, nil
}
