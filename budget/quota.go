package budget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agcore/agcore/clock"
	"github.com/agcore/agcore/session"
)

// QuotaNamespace is the records namespace [StoreQuota] keeps its
// principals' spend in.
const QuotaNamespace = "agcore.budget"

// maxAttempts bounds a quota update's compare-and-swap retries.
const maxAttempts = 100

// StoreQuota is a principal's [Quota] kept in a session store's records
// (session.Records: every store of agcore has them), so that it holds
// across the replicas sharing the store and across restarts. Each
// reservation and settlement is one compare-and-swap of the principal's
// record: concurrent calls of one principal, in any process, never take
// more than the quota together. A reservation a process never settles
// (it died during the call) stays charged at its worst case.
type StoreQuota struct {
	// Records is where the spend is kept.
	Records session.Records
	// Principal names whose quota it is.
	Principal string
	// Total limits everything the principal spends; PerDay what it spends
	// in one UTC day.
	Total, PerDay Limits
	// Clock tells the day; nil means clock.System.
	Clock clock.Clock
}

// QuotaSpend is what a principal spent, as [StoreQuota] keeps it.
type QuotaSpend struct {
	Day   string `json:"day"` // the UTC day Today counts, 2006-01-02
	Today Spend  `json:"today"`
	Total Spend  `json:"total"`
}

func (q *StoreQuota) key() string { return "principal:" + q.Principal }

func (q *StoreQuota) today() string { return clock.Or(q.Clock).Now().UTC().Format(time.DateOnly) }

// Spent returns what the principal spent (today counts the current day).
func (q *StoreQuota) Spent(ctx context.Context) (QuotaSpend, error) {
	s, _, err := q.read(ctx)
	return s, err
}

// read returns the principal's spend with the day rolled over, and the
// record's version (0 when there is none).
func (q *StoreQuota) read(ctx context.Context) (QuotaSpend, int64, error) {
	day := q.today()
	rec, err := q.Records.GetRecord(ctx, QuotaNamespace, q.key())
	if errors.Is(err, session.ErrNotFound) {
		return QuotaSpend{Day: day}, 0, nil
	}
	if err != nil {
		return QuotaSpend{}, 0, fmt.Errorf("budget: reading the quota of %q: %w", q.Principal, err)
	}
	var s QuotaSpend
	if err := json.Unmarshal(rec.Value, &s); err != nil {
		return QuotaSpend{}, 0, fmt.Errorf("budget: the quota record of %q: %w", q.Principal, err)
	}
	if s.Day != day {
		s.Day, s.Today = day, Spend{}
	}
	return s, rec.Version, nil
}

// update applies f to the principal's spend with compare-and-swap,
// retrying on a concurrent write; f's error stops it.
func (q *StoreQuota) update(ctx context.Context, f func(*QuotaSpend) error) error {
	for range maxAttempts {
		s, version, err := q.read(ctx)
		if err != nil {
			return err
		}
		if err := f(&s); err != nil {
			return err
		}
		value, err := json.Marshal(s)
		if err != nil {
			return err
		}
		rec := session.Record{Key: q.key(), Value: value, Version: version}
		if version == 0 {
			_, err = q.Records.CreateRecord(ctx, QuotaNamespace, rec)
		} else {
			_, err = q.Records.UpdateRecord(ctx, QuotaNamespace, rec)
		}
		switch {
		case err == nil:
			return nil
		case errors.Is(err, session.ErrConflict), errors.Is(err, session.ErrExists), errors.Is(err, session.ErrNotFound):
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue // written meanwhile: read again
		default:
			return fmt.Errorf("budget: writing the quota of %q: %w", q.Principal, err)
		}
	}
	return fmt.Errorf("budget: the quota of %q: %d concurrent writes in a row", q.Principal, maxAttempts)
}

// Reserve takes worst from the principal's quota, unless it could cross
// the total or the daily limit (an *ExceededError of ScopePrincipal).
func (q *StoreQuota) Reserve(ctx context.Context, worst Spend, priced bool) (func(context.Context, Spend) error, error) {
	day, err := q.Take(ctx, worst, priced)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, actual Spend) error { return q.Give(ctx, day, worst, actual) }, nil
}

// Take is Reserve's first half, for a driver that settles somewhere else
// (a durable run's activities): it takes worst from the quota, or returns
// the *ExceededError, and returns the UTC day it counted worst in.
func (q *StoreQuota) Take(ctx context.Context, worst Spend, priced bool) (day string, err error) {
	err = q.update(ctx, func(s *QuotaSpend) error {
		if e := q.Total.Check(ScopePrincipal, s.Total, worst, priced); e != nil {
			return e
		}
		if e := q.PerDay.Check(ScopePrincipal, s.Today, worst, priced); e != nil {
			e.Period = "day"
			return e
		}
		s.Total.Add(worst)
		s.Today.Add(worst)
		day = s.Day
		return nil
	})
	return day, err
}

// Give settles what Take reserved on day: actual replaces worst (in the
// day's count only while it is still that day).
func (q *StoreQuota) Give(ctx context.Context, day string, worst, actual Spend) error {
	diff := actual.Sub(worst)
	return q.update(ctx, func(s *QuotaSpend) error {
		s.Total.Add(diff)
		if s.Day == day {
			s.Today.Add(diff)
		}
		return nil
	})
}

func (q *StoreQuota) Left(ctx context.Context) (Left, error) {
	s, _, err := q.read(ctx)
	if err != nil {
		return Left{}, err
	}
	return tighter(q.Total.Left(s.Total), q.PerDay.Left(s.Today)), nil
}

func tighter(a, b Left) Left {
	pick := func(x, y *int) *int {
		if x == nil || (y != nil && *y < *x) {
			return y
		}
		return x
	}
	a.InputTokens = pick(a.InputTokens, b.InputTokens)
	a.OutputTokens = pick(a.OutputTokens, b.OutputTokens)
	a.Tokens = pick(a.Tokens, b.Tokens)
	if a.CostUSD == nil || (b.CostUSD != nil && *b.CostUSD < *a.CostUSD) {
		a.CostUSD = b.CostUSD
	}
	return a
}
