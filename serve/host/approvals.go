package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// ApprovalsNamespace is the records namespace of the calls waiting for
// approval (see Approvals).
const ApprovalsNamespace = "agcore.approvals"

// Approvals returns an approval.Shared over a store's records: each
// waiting call is one record (key: the request's id) holding the request
// and, once decided, the decision, with the expiry its process renews.
// Give it to the approval.Broker of every server sharing the store.
func Approvals(r session.Records) approval.Shared { return sharedApprovals{r} }

type sharedApprovals struct{ r session.Records }

// approvalRecord is a record's value.
type approvalRecord struct {
	ID        string          `json:"id"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Input     json.RawMessage `json:"input,omitempty"`
	Agent     string          `json:"agent,omitempty"`
	Session   string          `json:"session,omitempty"`
	Run       string          `json:"run,omitempty"`
	Principal string          `json:"principal,omitempty"`
	Since     time.Time       `json:"since"`
	Decision  *decision       `json:"decision,omitempty"`
}

type decision struct {
	Approved bool            `json:"approved"`
	Reason   string          `json:"reason,omitempty"`
	Content  json.RawMessage `json:"content,omitempty"` // tool.Decision.Content
}

func recordOf(q approval.Request) approvalRecord {
	return approvalRecord{ID: q.ID, CallID: q.CallID, Tool: q.Tool, Input: q.Input, Agent: q.Owner.Agent,
		Session: q.Owner.Session, Run: q.Owner.Run, Principal: q.Owner.Principal, Since: q.Since}
}

func (a approvalRecord) request() approval.Request {
	return approval.Request{ID: a.ID, CallID: a.CallID, Tool: a.Tool, Input: a.Input, Since: a.Since,
		Owner: approval.Owner{Agent: a.Agent, Session: a.Session, Run: a.Run, Principal: a.Principal}}
}

// attempts bounds the compare-and-swap loops: each lost round means
// another process wrote the record meanwhile.
const attempts = 16

func (s sharedApprovals) get(ctx context.Context, id string) (approvalRecord, session.Record, error) {
	rec, err := s.r.GetRecord(ctx, ApprovalsNamespace, id)
	if err != nil {
		return approvalRecord{}, rec, err
	}
	var a approvalRecord
	if err := json.Unmarshal(rec.Value, &a); err != nil {
		return approvalRecord{}, rec, fmt.Errorf("host: approval record %q: %w", id, err)
	}
	return a, rec, nil
}

func (s sharedApprovals) Put(ctx context.Context, q approval.Request, expires time.Time) error {
	for range attempts {
		a, rec, err := s.get(ctx, q.ID)
		switch {
		case errors.Is(err, session.ErrNotFound):
			v, err := json.Marshal(recordOf(q))
			if err != nil {
				return err
			}
			_, err = s.r.CreateRecord(ctx, ApprovalsNamespace, session.Record{Key: q.ID, Value: v, Expires: expires})
			if !errors.Is(err, session.ErrExists) {
				return err
			}
		case err != nil:
			return err
		default:
			v, err := json.Marshal(a) // as stored: a decision stays
			if err != nil {
				return err
			}
			rec.Value, rec.Expires = v, expires
			_, err = s.r.UpdateRecord(ctx, ApprovalsNamespace, rec)
			if !errors.Is(err, session.ErrConflict) && !errors.Is(err, session.ErrNotFound) {
				return err
			}
		}
	}
	return fmt.Errorf("host: recording approval %q: %w", q.ID, session.ErrConflict)
}

func (s sharedApprovals) Get(ctx context.Context, id string) (approval.Request, bool, error) {
	if session.CheckRecord(ApprovalsNamespace, id) != nil {
		return approval.Request{}, false, nil
	}
	a, _, err := s.get(ctx, id)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return approval.Request{}, false, nil
	case err != nil:
		return approval.Request{}, false, err
	}
	if a.Decision != nil {
		return approval.Request{}, false, nil
	}
	return a.request(), true, nil
}

func (s sharedApprovals) List(ctx context.Context) ([]approval.Request, error) {
	recs, err := s.r.ListRecords(ctx, ApprovalsNamespace, "")
	if err != nil {
		return nil, err
	}
	out := make([]approval.Request, 0, len(recs))
	for _, rec := range recs {
		var a approvalRecord
		if json.Unmarshal(rec.Value, &a) == nil && a.Decision == nil {
			out = append(out, a.request())
		}
	}
	return out, nil
}

func (s sharedApprovals) Decide(ctx context.Context, id string, d tool.Decision) error {
	if session.CheckRecord(ApprovalsNamespace, id) != nil {
		return fmt.Errorf("%w: %q", approval.ErrUnknown, id)
	}
	for range attempts {
		a, rec, err := s.get(ctx, id)
		switch {
		case errors.Is(err, session.ErrNotFound):
			return fmt.Errorf("%w: %q", approval.ErrUnknown, id)
		case err != nil:
			return err
		case a.Decision != nil:
			return fmt.Errorf("%w: %q was decided already", approval.ErrUnknown, id)
		}
		a.Decision = &decision{Approved: d.Approved, Reason: d.Reason, Content: json.RawMessage(d.Content)}
		if rec.Value, err = json.Marshal(a); err != nil {
			return err
		}
		_, err = s.r.UpdateRecord(ctx, ApprovalsNamespace, rec)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, session.ErrNotFound):
			return fmt.Errorf("%w: %q", approval.ErrUnknown, id)
		case !errors.Is(err, session.ErrConflict):
			return err
		}
	}
	return fmt.Errorf("host: deciding approval %q: %w", id, session.ErrConflict)
}

func (s sharedApprovals) Decision(ctx context.Context, id string) (tool.Decision, bool, error) {
	if session.CheckRecord(ApprovalsNamespace, id) != nil {
		return tool.Decision{}, false, nil
	}
	a, _, err := s.get(ctx, id)
	switch {
	case errors.Is(err, session.ErrNotFound):
		return tool.Decision{}, false, nil
	case err != nil:
		return tool.Decision{}, false, err
	case a.Decision == nil:
		return tool.Decision{}, false, nil
	}
	return tool.Decision{Approved: a.Decision.Approved, Reason: a.Decision.Reason, Content: string(a.Decision.Content)}, true, nil
}

func (s sharedApprovals) Remove(ctx context.Context, id string) error {
	err := s.r.DeleteRecord(ctx, ApprovalsNamespace, id, 0)
	if errors.Is(err, session.ErrNotFound) {
		return nil
	}
	return err
}
