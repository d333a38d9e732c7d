package memory

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
)

// ErrNotFound is returned (wrapped) by Store.Get for a missing key.
var ErrNotFound = errors.New("memory: not found")

// Store is a key/value store with ordered prefix listing. Implementations are
// safe for concurrent use.
type Store interface {
	// Put stores value under key, replacing any value there.
	Put(ctx context.Context, key string, value []byte) error
	// Get returns the value under key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// List returns every item whose key starts with prefix, in ascending
	// key order.
	List(ctx context.Context, prefix string) ([]Item, error)
	// Delete removes key; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
}

// Item is one key and its value.
type Item struct {
	Key   string
	Value []byte
}

// MapStore is an in-memory Store. The zero value is ready to use; values
// are copied in and out, so callers may reuse their slices.
type MapStore struct {
	mu sync.RWMutex
	m  map[string][]byte
}

// Put implements Store.
func (s *MapStore) Put(ctx context.Context, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string][]byte)
	}
	s.m[key] = bytes.Clone(value)
	return nil
}

// Get implements Store.
func (s *MapStore) Get(ctx context.Context, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.m[key]
	if !ok {
		return nil, ErrNotFound
	}
	return bytes.Clone(v), nil
}

// List implements Store.
func (s *MapStore) List(ctx context.Context, prefix string) ([]Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	var out []Item
	for k, v := range s.m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, Item{Key: k, Value: bytes.Clone(v)})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b Item) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// Delete implements Store.
func (s *MapStore) Delete(ctx context.Context, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
	return nil
}
