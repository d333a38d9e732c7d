package session

import (
	"context"
	"fmt"
)

// Scoped returns st as seen by owner: the one authorization point of a
// store. Loads and deletes of another owner's session fail with
// ErrNotFound (its existence is not revealed), listings hold only owner's
// sessions, and appends are made as owner (the store refuses an append to
// another owner's session with ErrOwner, atomically). owner "" is the
// single-user owner.
func Scoped(st Store, owner string) Store { return &scoped{st: st, owner: owner} }

type scoped struct {
	st    Store
	owner string
}

func (s *scoped) Create(ctx context.Context, id string) (*Session, error) {
	if s.owner != "" {
		// A session is owned from its first append; creating an empty
		// one for another owner is not supported.
		return nil, fmt.Errorf("session: create %q: a scoped store creates sessions by appending", id)
	}
	return s.st.Create(ctx, id)
}

func (s *scoped) Load(ctx context.Context, id string) (*Session, error) {
	return s.check(s.st.Load(ctx, id))
}

func (s *scoped) LoadView(ctx context.Context, id string) (*Session, error) {
	return s.check(s.st.LoadView(ctx, id))
}

func (s *scoped) check(sess *Session, err error) (*Session, error) {
	if err != nil {
		return nil, err
	}
	if sess.Owner != s.owner {
		return nil, fmt.Errorf("session: load %q: %w", sess.ID, ErrNotFound)
	}
	return sess, nil
}

func (s *scoped) Append(ctx context.Context, id string, turn Turn) error {
	turn.Owner = s.owner
	return s.st.Append(ctx, id, turn)
}

func (s *scoped) List(ctx context.Context, opts ListOptions) (Page, error) {
	opts.Owner, opts.AnyOwner = s.owner, false
	return s.st.List(ctx, opts)
}

func (s *scoped) Delete(ctx context.Context, id string) error {
	if _, err := s.check(s.st.LoadView(ctx, id)); err != nil {
		return err
	}
	return s.st.Delete(ctx, id)
}
