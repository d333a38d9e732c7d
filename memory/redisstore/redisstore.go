// Package redisstore is a [memory.Store] (the key/value store conversation
// memory keeps its messages in) in a Redis database, through go-redis.
//
// Under a prefix (default "agcore:memory:") the store keeps two keys: a
// hash of every key's value and a sorted set of the keys, all with score
// 0, which Redis orders by their bytes, so a prefix listing is one range
// query (ZRANGEBYLEX) however many other keys there are. Put and Delete
// change both in one MULTI/EXEC block; List reads both in one script, so
// it never sees a key without its value.
//
// This package imports only the standard library, go-redis and memory.
package redisstore

import (
	"context"
	"errors"
	"fmt"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/memory"
)

// Store is a memory.Store in Redis; safe for concurrent use.
type Store struct {
	rdb         goredis.UniversalClient
	vals, index string
}

var _ memory.Store = (*Store)(nil)

// DefaultPrefix is the prefix of the store's keys when New is given "".
const DefaultPrefix = "agcore:memory:"

// New returns a store over rdb (which the caller closes) whose keys start
// with prefix (DefaultPrefix when empty).
func New(rdb goredis.UniversalClient, prefix string) *Store {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Store{rdb: rdb, vals: prefix + "values", index: prefix + "keys"}
}

// Put implements memory.Store.
func (s *Store) Put(ctx context.Context, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HSet(ctx, s.vals, key, value)
		p.ZAdd(ctx, s.index, goredis.Z{Member: key})
		return nil
	})
	if err != nil {
		return fmt.Errorf("memory/redis: put: %w", err)
	}
	return nil
}

// Get implements memory.Store.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	v, err := s.rdb.HGet(ctx, s.vals, key).Bytes()
	if errors.Is(err, goredis.Nil) {
		return nil, fmt.Errorf("memory/redis: %q: %w", key, memory.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("memory/redis: get: %w", err)
	}
	return v, nil
}

var listScript = goredis.NewScript(`
local keys = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2])
if #keys == 0 then return {} end
local out = {}
for i, k in ipairs(keys) do
	out[2*i-1] = k
	out[2*i] = redis.call('HGET', KEYS[2], k)
end
return out`)

// List implements memory.Store: the keys starting with prefix, in
// ascending byte order, with their values.
func (s *Store) List(ctx context.Context, prefix string) ([]memory.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lo, hi := "-", "+"
	if prefix != "" {
		lo = "[" + prefix
		if end, ok := prefixEnd(prefix); ok {
			hi = "(" + end
		}
	}
	res, err := listScript.Run(ctx, s.rdb, []string{s.index, s.vals}, lo, hi).Slice()
	if err != nil {
		return nil, fmt.Errorf("memory/redis: list: %w", err)
	}
	out := make([]memory.Item, 0, len(res)/2)
	for i := 0; i+1 < len(res); i += 2 {
		k, _ := res[i].(string)
		v, ok := res[i+1].(string)
		if !ok { // the key lost its value: not possible through Put and Delete
			continue
		}
		out = append(out, memory.Item{Key: k, Value: []byte(v)})
	}
	return out, nil
}

// prefixEnd returns the least string greater than every string that starts
// with p; false when there is none (p is all 0xff bytes).
func prefixEnd(p string) (string, bool) {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1]), true
		}
	}
	return "", false
}

// Delete implements memory.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		p.HDel(ctx, s.vals, key)
		p.ZRem(ctx, s.index, key)
		return nil
	})
	if err != nil {
		return fmt.Errorf("memory/redis: delete: %w", err)
	}
	return nil
}
