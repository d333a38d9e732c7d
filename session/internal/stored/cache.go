package stored

import (
	"sync"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// DefaultCacheBytes is how much storage JSON, in bytes, a Cache made by
// the network stores keeps decoded by default.
const DefaultCacheBytes = session.DefaultCacheBytes

// Cache keeps the decoded messages of the sessions a store loaded last,
// so that the next Load of a session reads and decodes only the messages
// appended since (by this store or by any other process). It is safe for
// concurrent use.
//
// An entry is valid for one incarnation of a session (a random number
// drawn when the session is made): within an incarnation a session's rows are only ever appended, never
// changed or removed, so the entry's messages are the session's first
// messages for as long as the sessions row shows that incarnation and at
// least as many messages. A session deleted and made again has another
// incarnation and is read afresh.
type Cache struct {
	mu      sync.Mutex
	max     int64 // most bytes of storage JSON kept; 0 keeps nothing
	size    int64
	clock   uint64
	entries map[string]*cached
}

// cached is one session's decoded messages from index start on. Its
// slices are only appended to (under the cache's lock), so a reader
// holding a part of them (its length and capacity cut) never sees them
// change.
type cached struct {
	incarnation int64
	start       int // the session index of msgs[0]: 0, or a compaction's Upto (LoadView)
	msgs        []llm.Message
	hashes      []uint64 // session.StoredMessageHash of each message's storage JSON
	bytes       int64    // storage JSON of msgs
	used        uint64
}

// NewCache returns a cache of at most maxBytes of storage JSON.
func NewCache(maxBytes int64) *Cache {
	return &Cache{max: max(maxBytes, 0), entries: make(map[string]*cached)}
}

// Get returns the messages the cache holds for session id in incarnation
// inc, and their hashes and size; nothing when it holds none. It is
// GetFrom(id, inc, 0).
func (c *Cache) Get(id string, inc int64) ([]llm.Message, []uint64, int64) {
	return c.GetFrom(id, inc, 0)
}

// GetFrom returns the messages the cache holds for session id in
// incarnation inc from the session's message index from on, their hashes
// and (an estimate of) their size; nothing when it holds none from there.
func (c *Cache) GetFrom(id string, inc int64, from int) ([]llm.Message, []uint64, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[id]
	if e == nil || e.incarnation != inc || from < e.start || from > e.start+len(e.msgs) {
		return nil, nil, 0
	}
	c.clock++
	e.used = c.clock
	lo, n := from-e.start, len(e.msgs)
	bytes := e.bytes
	if lo > 0 {
		bytes = e.bytes * int64(n-lo) / int64(n)
	}
	return e.msgs[lo:n:n], e.hashes[lo:n:n], bytes
}

// Put records that session id in incarnation inc holds base (as Get
// returned it) followed by more, and returns the whole list and its
// hashes, both to be read only. It is PutFrom(id, inc, 0, ...).
func (c *Cache) Put(id string, inc int64, base []llm.Message, baseHashes []uint64, baseBytes int64,
	more []llm.Message, moreHashes []uint64, moreBytes int64) ([]llm.Message, []uint64) {
	return c.PutFrom(id, inc, 0, base, baseHashes, baseBytes, more, moreHashes, moreBytes)
}

// PutFrom records that session id in incarnation inc holds, from its
// message index from on, base (as GetFrom returned it) followed by more,
// and returns the whole list from from on and its hashes, both to be read
// only. The entry keeps the messages from from on only: those before a
// view (a compaction's Upto) are dropped when a view from later on is put,
// so a conversation read through views holds about its view in the cache,
// not its whole history.
func (c *Cache) PutFrom(id string, inc int64, from int, base []llm.Message, baseHashes []uint64, baseBytes int64,
	more []llm.Message, moreHashes []uint64, moreBytes int64) ([]llm.Message, []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(base) + len(more)
	e := c.entries[id]
	switch {
	case e != nil && e.incarnation == inc && e.start <= from && e.start+len(e.msgs) >= from+len(base):
		// Within an incarnation rows never change, so the entry holds
		// base where it came from (perhaps extended since by another
		// Load): extend it with what it lacks.
		if have := e.start + len(e.msgs) - from - len(base); have < len(more) {
			var added int64
			if have == 0 {
				added = moreBytes
			} else {
				added = moreBytes * int64(len(more)-have) / int64(len(more)) // an estimate, for the size limit only
			}
			e.msgs = append(e.msgs, more[have:]...)
			e.hashes = append(e.hashes, moreHashes[have:]...)
			e.bytes += added
			c.size += added
		}
		if lo := from - e.start; lo > 0 {
			// A view from a later point (LoadView after a compaction moved
			// its Upto): the messages before it are not read again through
			// views, so they are dropped, copied out of the array that
			// holds them so that its memory goes (readers keep what they
			// hold: entries are never changed in place).
			kept := e.bytes * int64(len(e.msgs)-lo) / int64(len(e.msgs))
			c.size -= e.bytes - kept
			e.bytes = kept
			e.msgs = append(make([]llm.Message, 0, len(e.msgs)-lo), e.msgs[lo:]...)
			e.hashes = append(make([]uint64, 0, len(e.hashes)-lo), e.hashes[lo:]...)
			e.start = from
		}
	default:
		if e != nil {
			c.size -= e.bytes
		}
		e = &cached{
			incarnation: inc,
			start:       from,
			msgs:        append(append(make([]llm.Message, 0, n), base...), more...),
			hashes:      append(append(make([]uint64, 0, n), baseHashes...), moreHashes...),
			bytes:       baseBytes + moreBytes,
		}
		c.entries[id] = e
		c.size += e.bytes
	}
	c.clock++
	e.used = c.clock
	lo := from - e.start
	msgs, hashes := e.msgs[lo:lo+n:lo+n], e.hashes[lo:lo+n:lo+n]
	c.evict()
	return msgs, hashes
}

// evict drops the least recently used entries while the cache is over its
// size; an entry larger than the whole cache is not kept at all.
func (c *Cache) evict() {
	for c.size > c.max && len(c.entries) > 0 {
		var oldest string
		var at uint64
		first := true
		for id, e := range c.entries {
			if first || e.used < at {
				oldest, at, first = id, e.used, false
			}
		}
		c.size -= c.entries[oldest].bytes
		delete(c.entries, oldest)
	}
}

// Drop forgets session id.
func (c *Cache) Drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.entries[id]; e != nil {
		c.size -= e.bytes
		delete(c.entries, id)
	}
}
