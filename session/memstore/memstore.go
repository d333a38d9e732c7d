package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

// Store is an in-memory session.Store. The zero value is not usable; make
// one with New. It is safe for concurrent use.
type Store struct {
	mu       sync.RWMutex
	sessions map[string]*record
	records  records // session.Records (records.go)
}

// record is one stored session. Stored messages are never changed in
// place (only appended to), so Load can copy them after releasing the lock.
type record struct {
	totals   stored.Totals
	messages []llm.Message // decoded from the storage JSON, so normalized as a durable store would
	hashes   []uint64      // session.StoredMessageHash of each message's storage JSON
	turnIDs  map[string]struct{}
	view     *session.Compaction // decoded totals.Compaction; never changed (replaced whole)
}

var _ session.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	return &Store{sessions: make(map[string]*record)}
}

// Create makes an empty session created now; ErrExists if id is taken.
func (s *Store) Create(ctx context.Context, id string) (*session.Session, error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	now := time.Now().UTC().Round(0)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[id]; ok {
		return nil, fmt.Errorf("memstore: create %q: %w", id, session.ErrExists)
	}
	r := &record{totals: stored.Totals{Created: now, Updated: now}, turnIDs: map[string]struct{}{}}
	s.sessions[id] = r
	sess := r.totals.Session(id, nil)
	sess.SetMessageHashes(nil, nil)
	return sess, nil
}

// Load returns a copy of the session; ErrNotFound if there is none.
func (s *Store) Load(ctx context.Context, id string) (*session.Session, error) {
	return s.load(ctx, id, false)
}

// LoadView returns a copy of the session holding only the messages from
// its compaction's Upto on (see session.Store); ErrNotFound if there is
// none.
func (s *Store) LoadView(ctx context.Context, id string) (*session.Session, error) {
	return s.load(ctx, id, true)
}

func (s *Store) load(ctx context.Context, id string, view bool) (*session.Session, error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	s.mu.RLock()
	r, ok := s.sessions[id]
	if !ok {
		s.mu.RUnlock()
		return nil, fmt.Errorf("memstore: load %q: %w", id, session.ErrNotFound)
	}
	sess := r.totals.Session(id, nil)
	from := r.totals.From(view)
	n := len(r.messages)
	msgs, hashes := r.messages[from:n:n], r.hashes[from:n:n]
	c := r.view
	s.mu.RUnlock()

	sess.Messages = stored.CloneMessages(msgs)
	sess.SetMessageHashes(msgs, hashes)
	sess.Base = from
	if c != nil {
		sess.Compaction = &session.Compaction{Upto: c.Upto, Messages: stored.CloneMessages(c.Messages)}
		if sess.Compaction.Messages == nil {
			sess.Compaction.Messages = []llm.Message{}
		}
	}
	return sess, nil
}

// Append adds the turn, creating the session if needed. The turn is encoded
// first; if that fails nothing is stored. A turn ID the session already
// holds makes it a no-op.
func (s *Store) Append(ctx context.Context, id string, turn session.Turn) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("memstore: append: %w", err)
	}
	tr, err := stored.EncodeTurn(ctx, turn, time.Now())
	if err != nil {
		return fmt.Errorf("memstore: append to %q: %w", id, err)
	}
	// Decoding what was just encoded gives a private copy in exactly the
	// form a durable store would give back.
	msgs, err := stored.DecodeMessages(tr.Messages)
	if err != nil {
		return fmt.Errorf("memstore: append to %q: %w", id, err)
	}
	hashes := stored.Hashes(tr.Messages)
	view, err := stored.DecodeCompaction(tr.Compaction)
	if err != nil {
		return fmt.Errorf("memstore: append to %q: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.sessions[id]
	if ok {
		if _, dup := r.turnIDs[tr.ID]; dup && r.totals.Owner == tr.Owner {
			return nil
		}
	} else {
		r = &record{turnIDs: map[string]struct{}{}}
	}
	if err := r.totals.Check(tr, ok); err != nil {
		return fmt.Errorf("memstore: append to %q: %w", id, err)
	}
	s.sessions[id] = r
	r.turnIDs[tr.ID] = struct{}{}
	if view != nil {
		r.view = view
	}
	r.messages = append(r.messages, msgs...)
	r.hashes = append(r.hashes, hashes...)
	r.totals.Add(tr)
	return nil
}

// List returns one page of session summaries, newest UpdatedAt first, ties
// by ID descending.
func (s *Store) List(ctx context.Context, opts session.ListOptions) (session.Page, error) {
	if err := ctx.Err(); err != nil {
		return session.Page{}, err
	}
	s.mu.RLock()
	infos := make([]session.Info, 0, len(s.sessions))
	for id, r := range s.sessions {
		infos = append(infos, r.totals.Info(id))
	}
	s.mu.RUnlock()
	page, err := stored.Page(infos, opts)
	if err != nil {
		return session.Page{}, fmt.Errorf("memstore: list: %w", err)
	}
	return page, nil
}

// Delete removes the session; ErrNotFound if there is none.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := check(ctx, id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[id]; !ok {
		return fmt.Errorf("memstore: delete %q: %w", id, session.ErrNotFound)
	}
	delete(s.sessions, id)
	return nil
}

func check(ctx context.Context, id string) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	return ctx.Err()
}
