package session

import (
	"fmt"
	"hash/fnv"

	"github.com/agcore/agcore/llm"
)

// PrefixHashes returns, for each i, a hash of msgs[:i+1]: a cumulative
// 64-bit FNV-1a hash over each message's storage JSON (the form
// [llm.Message.MarshalJSON] writes). Two requests share the hash at index i
// exactly when their first i+1 messages encode to the same bytes, which is
// when a provider's prompt cache can serve that prefix. The hashes are
// stable across processes and versions of Go, so they can be stored.
func PrefixHashes(msgs []llm.Message) ([]uint64, error) {
	h := fnv.New64a()
	out := make([]uint64, len(msgs))
	sep := []byte{0x1e} // record separator between messages
	for i, m := range msgs {
		data, err := m.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("session: hashing message %d: %w", i, err)
		}
		h.Write(data)
		h.Write(sep)
		out[i] = h.Sum64()
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
// session (the seed's touch_request_hash): it hashes every prefix of msgs,
// compares them with the hashes of the session's previous request, updates
// s.Prefix (one more request; one more prefix-stable request when it
// extends the previous one; LastDivergence) and replaces s.Hashes.
//
// The first request of a session has nothing to extend: it counts as a
// request, not as prefix-stable, and LastDivergence is -1.
func (s *Session) TouchRequest(msgs []llm.Message) error {
	hashes, err := PrefixHashes(msgs)
	if err != nil {
		return err
	}
	div := -1
	if s.Hashes != nil {
		div = Divergence(s.Hashes, hashes)
		if div < 0 {
			s.Prefix.PrefixStable++
		}
	}
	s.Prefix.Requests++
	s.Prefix.LastDivergence = div
	s.Hashes = hashes
	return nil
}
