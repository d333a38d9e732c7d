package agtemporal

// A principal's quota (budget.StoreQuota over the worker store's records)
// in a durable turn: each reservation and settlement is a local activity,
// so the quota is shared with every other process on the store, and the
// turn's meter (the run's and the session's limits) is workflow state.

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/session"
)

const activityQuota = "agcore.Quota"

// Quota is a principal's spending limits in a durable turn: TurnInput's
// Principal is whose, Total limits everything it spends, PerDay what it
// spends in one UTC day (budget.StoreQuota's).
type Quota struct {
	Total, PerDay budget.Limits
}

// QuotaInput is one operation on a principal's quota: "take" (reserve
// Worst), "give" (settle a reservation of Day with Actual) or "left".
type QuotaInput struct {
	Op            string
	Principal     string
	Quota         Quota
	Worst, Actual budget.Spend
	Priced        bool
	Day           string
}

// QuotaOutput is a quota operation's result.
type QuotaOutput struct {
	Day  string
	Left budget.Left
}

// Quota runs one operation on a principal's quota in the worker's store.
func (a *activities) Quota(ctx context.Context, in QuotaInput) (*QuotaOutput, error) {
	if a.opts.Store == nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker has no session store", "agcore.NoStore", nil)
	}
	recs, ok := session.RecordsOf(a.opts.Store)
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError("this worker's store keeps no records: no quota", ErrTypeBadInput, nil)
	}
	q := &budget.StoreQuota{Records: recs, Principal: in.Principal, Total: in.Quota.Total, PerDay: in.Quota.PerDay}
	switch in.Op {
	case "take":
		day, err := q.Take(ctx, in.Worst, in.Priced)
		var ex *budget.ExceededError
		if errors.As(err, &ex) {
			return nil, temporal.NewNonRetryableApplicationError(ex.Error(), ErrTypeBudget, nil, *ex)
		}
		return &QuotaOutput{Day: day}, err
	case "give":
		return &QuotaOutput{}, q.Give(ctx, in.Day, in.Worst, in.Actual)
	case "left":
		left, err := q.Left(ctx)
		return &QuotaOutput{Left: left}, err
	}
	return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("unknown quota operation %q", in.Op), ErrTypeBadInput, nil)
}

// actQuota is the turn's budget.Quota: every operation an activity.
type actQuota struct{ d *driver }

func (q *actQuota) call(ctx context.Context, in QuotaInput) (*QuotaOutput, error) {
	w := wf(ctx)
	in.Principal, in.Quota = q.d.in.Principal, *q.d.in.Quota
	if q.d.in.QuotaPrincipal != "" {
		in.Principal = q.d.in.QuotaPrincipal
	}
	var out QuotaOutput
	err := workflow.ExecuteLocalActivity(q.d.local(w, 5), activityQuota, in).Get(w, &out)
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == ErrTypeBudget {
		var ex budget.ExceededError
		if ae.Details(&ex) == nil {
			return nil, &ex
		}
	}
	return &out, err
}

func (q *actQuota) Reserve(ctx context.Context, worst budget.Spend, priced bool) (func(context.Context, budget.Spend) error, error) {
	out, err := q.call(ctx, QuotaInput{Op: "take", Worst: worst, Priced: priced})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, actual budget.Spend) error {
		_, err := q.call(ctx, QuotaInput{Op: "give", Day: out.Day, Worst: worst, Actual: actual})
		return err
	}, nil
}

func (q *actQuota) Left(ctx context.Context) (budget.Left, error) {
	out, err := q.call(ctx, QuotaInput{Op: "left"})
	if err != nil {
		return budget.Left{}, err
	}
	return out.Left, nil
}
