package session

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/agcore/agcore/llm"
)

// HashVersion names the definition of the hashes this package computes
// ([MessageHash], [PrefixHashes], [Session.TouchRequest]); it is recorded
// in [PrefixStats.HashVersion] with every hash list, because hash lists
// made under different definitions cannot be compared.
//
// Version 2 (this one): the hash of a message is the first 8 bytes, read
// as a little-endian integer, of the SHA-256 of its storage JSON (the bytes
// [llm.Message.MarshalJSON] writes); the prefix hash at index i is the
// 64-bit FNV-1a hash of the concatenation, for each message 0..i, of its
// hash as 8 little-endian bytes followed by the byte 0x1e. Each prefix
// hash is the previous one carried one message further, so a request
// whose messages are all known costs one small step per message, whatever
// their size.
//
// Version 1 (HashVersion 0 in stored statistics, which predate the
// field): the 64-bit FNV-1a hash of the messages' storage JSON, each
// followed by 0x1e.
const HashVersion = 2

// FNV-1a, 64 bits.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// MessageHash returns the content hash of m (see [HashVersion]): two
// messages have the same hash exactly when their storage JSON is the same
// bytes (up to the odds of a 64-bit collision). It fails when m does not
// encode.
func MessageHash(m llm.Message) (uint64, error) {
	data, err := m.MarshalJSON()
	if err != nil {
		return 0, err
	}
	return StoredMessageHash(data), nil
}

// StoredMessageHash returns the content hash of the message whose storage
// JSON is data: what [MessageHash] returns for the message data encodes
// when data is what that message's MarshalJSON writes, as it is for what a
// store wrote from it. Stores use it to hash what they read without
// encoding the message again.
func StoredMessageHash(data []byte) uint64 {
	sum := sha256.Sum256(data)
	return binary.LittleEndian.Uint64(sum[:8])
}

// extend carries the prefix hash h over one more message whose content
// hash is m.
func extend(h, m uint64) uint64 {
	for range 8 {
		h ^= m & 0xff
		h *= fnvPrime
		m >>= 8
	}
	h ^= 0x1e
	h *= fnvPrime
	return h
}

// PrefixHashes returns, for each i, a hash of msgs[:i+1] (the definition
// is [HashVersion]'s). Two requests share the hash at index i exactly when
// their first i+1 messages encode to the same storage JSON, which is when
// a provider's prompt cache can serve that prefix. The hashes are stable
// across processes and versions of Go, so they can be stored.
//
// PrefixHashes encodes every message; [Session.TouchRequest] hashes only
// the messages whose hashes it does not know yet.
func PrefixHashes(msgs []llm.Message) ([]uint64, error) {
	out := make([]uint64, len(msgs))
	h := uint64(fnvOffset)
	for i, m := range msgs {
		mh, err := MessageHash(m)
		if err != nil {
			return nil, fmt.Errorf("session: hashing message %d: %w", i, err)
		}
		h = extend(h, mh)
		out[i] = h
	}
	return out, nil
}

// Divergence compares the prefix hashes of a request (next) with those of
// the request before it (prev). It returns -1 when next extends prev
// byte-for-byte (every message of prev is unchanged at the start of next),
// else the index of the first message of next that differs from prev. A
// request shorter than prev that matches it as far as it goes diverges at
// len(next), where prev had more.
func Divergence(prev, next []uint64) int {
	n := min(len(prev), len(next))
	// The hashes are cumulative, so the prefixes match up to n exactly when
	// the hashes at n-1 agree; only a mismatch needs the scan.
	if n > 0 && prev[n-1] != next[n-1] {
		for i := range n {
			if prev[i] != next[i] {
				return i
			}
		}
	}
	if len(next) < len(prev) {
		return len(next)
	}
	return -1
}

// TouchRequest records the messages of a request about to be sent for this
// session, for the prompt-cache statistic: it computes the prefix hashes of
// msgs (see [PrefixHashes]), compares them with the hashes of the
// session's previous request, updates s.Prefix (one more request; one more
// prefix-stable request when it extends the previous one; LastDivergence;
// HashVersion) and replaces s.Hashes.
//
// The first request of a session has nothing to extend: it counts as a
// request, not as prefix-stable, and LastDivergence is -1. So does a
// request after hashes recorded under another [HashVersion], which cannot
// be compared.
//
// Only the messages whose content hashes the session does not know are
// encoded and hashed: the session knows the hashes of the messages of
// s.Messages it (or a clone of it) hashed before, and those a store gave it
// on Load ([Session.SetMessageHashes]). A message of msgs is recognized as
// one of s.Messages by its Content array (a copy of the message value
// shares it) and its fields; a hash TouchRequest computed itself serves
// only that very message, so change a message by replacing it (with a new
// Content slice), never by writing into its blocks, or its hash goes
// stale. (A hash a store gave is checked against the store's own copy of
// the message, so it never goes stale.)
func (s *Session) TouchRequest(msgs []llm.Message) error {
	hashes := make([]uint64, len(msgs))
	if err := s.known().prefixHashes(s.Messages, msgs, hashes); err != nil {
		return err
	}
	div := -1
	if s.Hashes != nil && s.Prefix.HashVersion == HashVersion {
		div = Divergence(s.Hashes, hashes)
		if div < 0 {
			s.Prefix.PrefixStable++
		}
	}
	s.Prefix.Requests++
	s.Prefix.LastDivergence = div
	s.Prefix.HashVersion = HashVersion
	s.Hashes = hashes
	return nil
}

// SetMessageHashes tells s the content hashes of its messages: hashes[i]
// is [MessageHash] of msgs[i], and s.Messages starts with copies of msgs
// (a store's own copy of the session's messages, which it loaded s.Messages
// from). s keeps both slices, which must never change afterwards. A
// message of a request that is at position i of s.Messages and equal to
// msgs[i] ([llm.Message.Equal]) then costs [Session.TouchRequest] no
// encoding. Stores call it on the sessions they return from Load, with the
// hashes of the storage JSON they read ([StoredMessageHash]). A session
// loaded as a view (LoadView, Base > 0) is given the hashes of the
// messages it holds, by their position in s.Messages, not in the whole
// history; the compaction's messages a request sends before them are
// hashed by TouchRequest like any message it does not know. What s knew
// of its messages before is forgotten (clones made before keep it). It
// panics if the slices differ in length.
func (s *Session) SetMessageHashes(msgs []llm.Message, hashes []uint64) {
	if len(hashes) != len(msgs) {
		panic(fmt.Sprintf("session: %d message hashes for %d messages", len(hashes), len(msgs)))
	}
	s.hashes = &hashIndex{given: msgs, givenHashes: hashes}
}

// KnownMessageHash returns the content hash s knows for s.Messages[i], if
// it knows one that is still valid.
func (s *Session) KnownMessageHash(i int) (uint64, bool) {
	if s.hashes == nil || i < 0 || i >= len(s.Messages) {
		return 0, false
	}
	s.hashes.mu.Lock()
	defer s.hashes.mu.Unlock()
	return s.hashes.lookup(i, &s.Messages[i])
}

func (s *Session) known() *hashIndex {
	if s.hashes == nil {
		s.hashes = &hashIndex{}
	}
	return s.hashes
}

// hashIndex remembers the content hashes of a session's messages, by
// position in Session.Messages: those a store handed over, with the
// store's copy of each message, and those TouchRequest computed, each with
// the message it was computed for. Clones of a session share it (every
// hash is checked against the message at its position before it is used),
// so the hashes one of them computes serve the others.
type hashIndex struct {
	mu          sync.Mutex
	given       []llm.Message // a store's copy of the messages; never changed
	givenHashes []uint64
	entries     []hashEntry // learned
}

type hashEntry struct {
	m  llm.Message // the message hashed; its Content array identifies it
	h  uint64
	ok bool
}

// lookup returns the hash of m, the message at position pos of the
// session, if the index knows it: m equals the store's copy of the
// message at pos, or m is the very message whose hash was learned there.
func (x *hashIndex) lookup(pos int, m *llm.Message) (uint64, bool) {
	if pos < len(x.given) && m.Equal(x.given[pos]) {
		return x.givenHashes[pos], true
	}
	if pos < len(x.entries) {
		if e := &x.entries[pos]; e.ok && sameMessage(&e.m, m) {
			return e.h, true
		}
	}
	return 0, false
}

// sameMessage reports whether a and b are the same message: the same
// fields and the same Content array (not merely equal blocks). Two
// messages without content and with the same fields encode the same.
func sameMessage(a, b *llm.Message) bool {
	if a.Role != b.Role || a.ToolCallID != b.ToolCallID || a.IsError != b.IsError || len(a.Content) != len(b.Content) {
		return false
	}
	return len(a.Content) == 0 || &a.Content[0] == &b.Content[0]
}

// resyncMin is the fewest messages left in a request for which
// prefixHashes looks up where they are in the session when the request
// stops following the session's order (a compaction dropped some): below
// it, hashing the rest is about as cheap.
const resyncMin = 16

// prefixHashes fills out with the prefix hashes of msgs, taking the hashes
// of the messages of history (the session's messages) from the index and
// recording those it has to compute.
func (x *hashIndex) prefixHashes(history, msgs []llm.Message, out []uint64) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	var where map[*llm.Block]int // history position by Content array, built on first need
	h := uint64(fnvOffset)
	j := 0      // the history message expected next
	misses := 0 // messages in a row that were not history[j]
	for i := range msgs {
		m := &msgs[i]
		pos := -1
		switch {
		case j < len(history) && sameMessage(m, &history[j]):
			pos = j
		case misses > 0 && len(m.Content) > 0 && len(msgs)-i >= resyncMin && len(history)-j >= resyncMin:
			// A message that is not in the history (the system message)
			// is one miss; a second in a row, with much left, is a
			// request that skips part of the history.
			if where == nil {
				where = make(map[*llm.Block]int, len(history))
				for k := range history {
					if len(history[k].Content) > 0 {
						where[&history[k].Content[0]] = k
					}
				}
			}
			if k, ok := where[&m.Content[0]]; ok && sameMessage(m, &history[k]) {
				pos = k
			}
		}
		var mh uint64
		known := false
		misses++
		if pos >= 0 {
			j, misses = pos+1, 0
			mh, known = x.lookup(pos, m)
		}
		if !known {
			var err error
			if mh, err = MessageHash(*m); err != nil {
				return fmt.Errorf("session: hashing message %d: %w", i, err)
			}
			if pos >= 0 {
				x.record(pos, *m, mh)
			}
		}
		h = extend(h, mh)
		out[i] = h
	}
	return nil
}

func (x *hashIndex) record(pos int, m llm.Message, h uint64) {
	if pos >= len(x.entries) {
		x.entries = append(x.entries, make([]hashEntry, pos+1-len(x.entries))...)
	}
	x.entries[pos] = hashEntry{m: m, h: h, ok: true}
}
