package session

import (
	"encoding/json"

	"github.com/agcore/agcore/llm"
)

// Apply adds turn t to s the way a Store does on Append: its messages are
// appended, its usage and cost added, the turn count incremented, its state
// changes merged (a nil value deletes the key), its request-hash statistic
// adopted when t.Hashes is non-nil, and UpdatedAt (and a zero CreatedAt) set
// to t.Time when that is non-zero. Apply does not check t.ID: skipping an
// already stored turn is the Store's job.
//
// Stores can use Apply to keep their in-memory view consistent with what
// they load back.
func (s *Session) Apply(t Turn) {
	s.known() // from now on, clones share what they learn of the messages' hashes
	s.Messages = append(s.Messages, t.Messages...)
	s.Usage.Add(t.Usage)
	s.CostUSD += t.CostUSD
	s.Turns++
	for k, v := range t.State {
		if v == nil {
			delete(s.State, k)
			continue
		}
		if s.State == nil {
			s.State = make(map[string]json.RawMessage, len(t.State))
		}
		s.State[k] = append(json.RawMessage(nil), v...)
	}
	if t.Hashes != nil {
		s.Prefix = t.Prefix
		s.Hashes = append([]uint64(nil), t.Hashes...)
	}
	if t.Compaction != nil {
		c := *t.Compaction
		c.Messages = append([]llm.Message(nil), c.Messages...)
		s.Compaction = &c
	}
	if !t.Time.IsZero() {
		s.UpdatedAt = t.Time
		if s.CreatedAt.IsZero() {
			s.CreatedAt = t.Time
		}
	}
}

// Clone returns a copy of s that can be changed (messages appended, state
// set, hashes replaced) without affecting s. The messages' content slices
// are shared, so change a message by replacing it, not its blocks in place.
// The clone shares what s knows of its messages' content hashes, and what
// either learns serves both, once s keeps any: a session a store loaded,
// or one that Apply, TouchRequest or SetMessageHashes was called on.
func (s *Session) Clone() *Session {
	c := *s
	if s.Messages != nil {
		c.Messages = append([]llm.Message(nil), s.Messages...)
	}
	if s.State != nil {
		c.State = make(map[string]json.RawMessage, len(s.State))
		for k, v := range s.State {
			c.State[k] = append(json.RawMessage(nil), v...)
		}
	}
	if s.Hashes != nil {
		c.Hashes = append([]uint64(nil), s.Hashes...)
	}
	return &c
}
