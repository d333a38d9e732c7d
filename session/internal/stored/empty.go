package stored

import (
	"context"
	"errors"
	"fmt"

	"github.com/agcore/agcore/session"
)

// Empty is a read-only store with no session in it: what a store opened
// with session.ReadOnly is when its default place holds nothing yet.
// Create and Append fail; Load and Delete find nothing.
type Empty struct {
	Name string // the store's description, for errors
}

var _ session.Store = Empty{}

var errReadOnly = errors.New("the store is opened read-only")

// Create fails: the store is read-only.
func (e Empty) Create(ctx context.Context, id string) (*session.Session, error) {
	return nil, fmt.Errorf("%s: create %q: %w", e.Name, id, errReadOnly)
}

// Load finds nothing.
func (e Empty) Load(ctx context.Context, id string) (*session.Session, error) {
	if err := session.ValidateID(id); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s: load %q: %w", e.Name, id, session.ErrNotFound)
}

// Append fails: the store is read-only.
func (e Empty) Append(ctx context.Context, id string, _ session.Turn) error {
	return fmt.Errorf("%s: append to %q: %w", e.Name, id, errReadOnly)
}

// List returns an empty page.
func (e Empty) List(ctx context.Context, _ session.ListOptions) (session.Page, error) {
	return session.Page{}, ctx.Err()
}

// Delete finds nothing.
func (e Empty) Delete(ctx context.Context, id string) error {
	if err := session.ValidateID(id); err != nil {
		return err
	}
	return fmt.Errorf("%s: delete %q: %w", e.Name, id, session.ErrNotFound)
}

// LoadView is Load.
func (e Empty) LoadView(ctx context.Context, id string) (*session.Session, error) {
	return e.Load(ctx, id)
}
