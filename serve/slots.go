package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
)

// Responses in the store. When an agent's store has records
// (session.RecordsOf), every stored Responses turn claims its response id
// there before it runs: the record "agcore.responses"/resp_SESSION_N is
// created (compare-and-swap) as in progress, with a lease its process
// renews, and N is the turn's position in the session (its stored turns +
// 1). So two processes over one store never give two turns one id: the
// second waits until the first turn is over (its id completed, or freed
// by its failure or by the lease's expiry after its process died), then
// reads the session again and takes the next number. When the turn
// succeeds the record becomes the response object (its output items and
// usage), which GET /v1/responses/{id} answers from, in any process and
// after a restart; a failed turn frees its id.
const (
	responsesNamespace = "agcore.responses"
	// slotLease is how long a claimed id stays claimed without its
	// process renewing it (every slotLease/3).
	slotLease = 10 * time.Second
	// slotPoll is how often a turn waiting for another process's turn of
	// the same session looks again.
	slotPoll = 100 * time.Millisecond
	// responseRetention is how long a completed response is kept.
	responseRetention = 30 * 24 * time.Hour
)

// slotRecord is the value of a response's record.
type slotRecord struct {
	Status    string          `json:"status"` // "in_progress" or "completed"; a background turn's also "failed" or "cancelled"
	Principal string          `json:"principal"`
	Response  json.RawMessage `json:"response,omitempty"` // the response object, once completed; a background turn's from its start
	// A background turn's record (background.go) is kept for the
	// response's retention from its start: the claim's lease is Lease
	// (Unix ms), renewed by its process, instead of the record's expiry.
	Background bool       `json:"background,omitempty"`
	Lease      int64      `json:"lease,omitempty"`
	Run        string     `json:"run,omitempty"`    // the turn's event log (package runlog)
	Cancel     bool       `json:"cancel,omitempty"` // a cancellation asked from any process
	Ended      int64      `json:"ended,omitempty"`  // Unix ms, when the turn ended
	Remote     *remoteRef `json:"remote,omitempty"` // a RemoteRunner runs the turn (remoteapprovals.go)
}

// terminal reports whether the record is a turn that ended.
func (sr slotRecord) terminal() bool {
	return sr.Status == "completed" || sr.Status == "failed" || sr.Status == "cancelled"
}

// lost reports whether the record is a background turn whose process
// stopped renewing its claim.
func (sr slotRecord) lost(now time.Time) bool {
	return sr.Status == "in_progress" && sr.Background && sr.Lease < now.UnixMilli()
}

// slot is a claimed response id.
type slot struct {
	recs session.Records
	id   string
	run  string // a background turn's event log

	mu      sync.Mutex
	version int64 // of the record as this process last wrote it
	stop    chan struct{}
	done    chan struct{}
}

// errSlotLost cancels a turn whose claim on its id was lost (its lease
// expired while the process was stalled): it must not store its turn
// under an id another turn may have.
var errSlotLost = errors.New("serve: the turn's claim on its response id expired")

// errBusy means another turn holds the id.
var errBusy = errors.New("serve: another turn of the session is in progress")

// errStale means a completed record holds the id of a turn the session
// no longer has (the session was deleted and made again).
type errStale struct{ rec session.Record }

func (errStale) Error() string { return "serve: stale response record" }

// claim claims id for principal's turn: errBusy while another process's
// turn holds it, errStale (with the record) when a completed response
// the session no longer has holds it.
func claim(ctx context.Context, recs session.Records, id, principal string) (*slot, error) {
	v, _ := json.Marshal(slotRecord{Status: "in_progress", Principal: principal})
	rec, err := recs.CreateRecord(ctx, responsesNamespace, session.Record{Key: id, Value: v, Expires: time.Now().Add(slotLease)})
	if errors.Is(err, session.ErrExists) {
		cur, gerr := recs.GetRecord(ctx, responsesNamespace, id)
		switch {
		case errors.Is(gerr, session.ErrNotFound):
			return nil, errBusy // freed meanwhile: look again
		case gerr != nil:
			return nil, gerr
		}
		var sr slotRecord
		if json.Unmarshal(cur.Value, &sr) == nil && (sr.terminal() || sr.lost(time.Now())) {
			// A turn that ended (stored, or a background turn that failed or
			// was cancelled), or whose process was lost: the session says
			// whether its number is taken.
			return nil, errStale{cur}
		}
		return nil, errBusy
	}
	if err != nil {
		return nil, err
	}
	return &slot{recs: recs, id: id, version: rec.Version}, nil
}

// takeOver claims id over the stale record rec.
func takeOver(ctx context.Context, recs session.Records, rec session.Record, principal string) (*slot, error) {
	v, _ := json.Marshal(slotRecord{Status: "in_progress", Principal: principal})
	rec.Value, rec.Expires = v, time.Now().Add(slotLease)
	got, err := recs.UpdateRecord(ctx, responsesNamespace, rec)
	if errors.Is(err, session.ErrConflict) || errors.Is(err, session.ErrNotFound) {
		return nil, errBusy
	}
	if err != nil {
		return nil, err
	}
	return &slot{recs: recs, id: rec.Key, version: got.Version}, nil
}

// keep renews the claim until release; if the claim is lost, it cancels
// the turn with errSlotLost.
func (s *slot) keep(cancel context.CancelCauseFunc) {
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(slotLease / 3)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			ctx, c := context.WithTimeout(context.Background(), slotLease/3)
			s.mu.Lock()
			cur, err := s.recs.GetRecord(ctx, responsesNamespace, s.id)
			if err == nil && cur.Version == s.version {
				cur.Expires = time.Now().Add(slotLease)
				if cur, err = s.recs.UpdateRecord(ctx, responsesNamespace, cur); err == nil {
					s.version = cur.Version
				}
			} else if err == nil {
				err = session.ErrConflict
			}
			s.mu.Unlock()
			c()
			if errors.Is(err, session.ErrConflict) || errors.Is(err, session.ErrNotFound) {
				cancel(errSlotLost)
				return
			}
			// Any other error (the store is unreachable) is tried again at
			// the next tick: the claim lives a whole lease.
		}
	}()
}

// release ends the claim: the id becomes the response obj when it is not
// nil (the turn is stored), else it is freed.
func (s *slot) release(obj *responseObject, principal string) error {
	if s.stop != nil {
		close(s.stop)
		<-s.done
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if obj == nil {
		err := s.recs.DeleteRecord(ctx, responsesNamespace, s.id, s.version)
		if errors.Is(err, session.ErrNotFound) || errors.Is(err, session.ErrConflict) {
			return nil // expired, or not ours any more
		}
		return err
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	v, _ := json.Marshal(slotRecord{Status: "completed", Principal: principal, Response: body})
	_, err = s.recs.UpdateRecord(ctx, responsesNamespace, session.Record{Key: s.id, Value: v, Version: s.version,
		Expires: time.Now().Add(responseRetention)})
	if err != nil {
		// The turn is stored; the id stays unknown to GET (its claim
		// expired meanwhile), and the next turn numbers after it.
		return fmt.Errorf("serve: recording response %s: %w", s.id, err)
	}
	return nil
}

// storedResponse returns the completed response id of principal from the
// records of the server's agents.
func (h *Handler) storedResponse(ctx context.Context, id, principal string) (json.RawMessage, bool, error) {
	seen := map[session.Records]bool{}
	for _, a := range h.opts.Agents.All() {
		recs, ok := session.RecordsOf(a.Store)
		if !ok || seen[recs] {
			continue
		}
		seen[recs] = true
		if session.CheckRecord(responsesNamespace, id) != nil {
			return nil, false, nil
		}
		rec, err := recs.GetRecord(ctx, responsesNamespace, id)
		if errors.Is(err, session.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		var sr slotRecord
		if json.Unmarshal(rec.Value, &sr) != nil || sr.Principal != principal {
			continue
		}
		if sr.Background {
			// A background response is its principal's from its start,
			// before its session exists; one whose process was lost reads
			// failed.
			if sr.lost(time.Now()) {
				if now, _, err := markLost(ctx, recs, rec); err == nil {
					sr = now
				}
			}
			// A remote turn whose run ended without its outcome reads
			// failed (remoteended.go), once it is old enough to have
			// started.
			if sr.Remote != nil && sr.Status == "in_progress" && startedBefore(sr.Response, time.Now().Add(-RemoteCheckAfter)) {
				sr, _ = h.endRemoteResponse(ctx, recs, id, sr)
			}
			if sr.Status != "completed" {
				return sr.Response, true, nil
			}
		}
		if sr.Status != "completed" {
			continue
		}
		// A response is read as its session is: not once the session is
		// deleted, never through another principal's view.
		if sid, _, ok := parseResponseID(id); !ok {
			continue
		} else if _, err := host.Sessions(ctx, a.Store).LoadView(ctx, sid); err != nil {
			continue
		}
		return sr.Response, true, nil
	}
	return nil, false, nil
}
