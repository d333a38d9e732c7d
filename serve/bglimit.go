package serve

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/agcore/agcore/session"
)

// The background turns of a principal at once, across the processes of a
// store (Options.MaxBackground): a turn holds one of the principal's
// slots, the records PRINCIPAL/0 to PRINCIPAL/(N-1) of backgroundNamespace,
// claimed with a create-only write (session.Records.CreateRecord) so that
// two processes admitting turns at the same moment never both take one,
// renewed compare-and-swap with the turn's lease, and deleted (its version
// named) at the turn's end. A process that died leaves its slots to
// expire with their lease. A turn tries a random slot first (one write
// while few turns run), then lists the principal's slots to try only the
// free ones; the creates decide.

// bgSlot is a claimed background slot.
type bgSlot struct {
	recs    session.Records
	key     string
	version int64
}

// errNoBackgroundSlot means every slot of the principal is held.
var errNoBackgroundSlot = errors.New("serve: every background slot of the principal is taken")

// claimBackground claims one of principal's n slots for the turn of
// response id: errNoBackgroundSlot when all are held.
func claimBackground(ctx context.Context, recs session.Records, principal, id string, n int) (*bgSlot, error) {
	prefix := principal + "/"
	// A random slot first: with few turns running it is free, one write.
	start := rand.IntN(n)
	create := func(key string) (*bgSlot, error) {
		rec, err := recs.CreateRecord(ctx, backgroundNamespace, session.Record{Key: key, Value: []byte(id), Expires: time.Now().Add(slotLease)})
		if err != nil {
			return nil, err
		}
		return &bgSlot{recs: recs, key: key, version: rec.Version}, nil
	}
	first := prefix + strconv.Itoa(start)
	if s, err := create(first); !errors.Is(err, session.ErrExists) {
		return s, err
	}
	live, err := recs.ListRecords(ctx, backgroundNamespace, prefix)
	if err != nil {
		return nil, err
	}
	held := make(map[string]bool, len(live)+1)
	held[first] = true
	for _, r := range live {
		held[r.Key] = true
	}
	// Then the free ones, from there on: processes admitting turns at
	// once mostly try different ones.
	for i := 1; i < n; i++ {
		key := prefix + strconv.Itoa((start+i)%n)
		if held[key] {
			continue
		}
		s, err := create(key)
		if errors.Is(err, session.ErrExists) {
			continue // another turn took it meanwhile
		}
		return s, err
	}
	return nil, errNoBackgroundSlot
}

// renew extends the slot's lease, compare-and-swap: a slot that expired
// (its process stalled past the lease) and was taken by another turn is
// left to it. Only the turn's goroutines call it, one at a time.
func (s *bgSlot) renew(ctx context.Context) {
	if s == nil {
		return
	}
	rec, err := s.recs.GetRecord(ctx, backgroundNamespace, s.key)
	switch {
	case errors.Is(err, session.ErrNotFound):
		// Expired and free: take it again if it still is.
		if got, err := s.recs.CreateRecord(ctx, backgroundNamespace, session.Record{Key: s.key, Value: []byte("renewed"), Expires: time.Now().Add(slotLease)}); err == nil {
			s.version = got.Version
		}
		return
	case err != nil || rec.Version != s.version:
		return // unreachable, or another turn's now
	}
	rec.Expires = time.Now().Add(slotLease)
	if got, err := s.recs.UpdateRecord(ctx, backgroundNamespace, rec); err == nil {
		s.version = got.Version
	}
}

// release frees the slot unless another turn holds it now.
func (s *bgSlot) release(ctx context.Context) {
	if s == nil {
		return
	}
	_ = s.recs.DeleteRecord(ctx, backgroundNamespace, s.key, s.version)
}
