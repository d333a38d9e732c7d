// Package stored holds what agcore's session stores share: a turn checked
// and encoded to the storage JSON before anything is written, the running
// totals a session keeps, and the listing order and its cursor. It exists
// so the stores agree to the byte; it is internal because its shapes are
// not a promise.
//
// Why it is not published as a kit for stores written outside agcore
// (issue 34 asked for it or for this note): what an outside store needs is
// public already, and what this package adds is agcore's storage layout,
// which would then be frozen. An outside store implements [session.Store]
// (and [session.Records] for replicas), registers its URL scheme with
// [session.Register] (so --store, serve and the worker open it, and
// session.Schemes and session.Syntaxes list it), encodes messages with
// llm's storage JSON ([llm.Message]'s MarshalJSON and UnmarshalJSON), titles a
// session with [session.Title], and proves itself with sessiontest.Run,
// RunRecords, Crash and Shared, the same suite agcore's five stores pass.
// The pieces here that are not layout (the LRU Cache of decoded
// messages, Parallel decoding, the cursor) are a few dozen lines each and
// tied to how agcore's stores keep their rows; publishing them would make
// every change to a store's rows an API change.
//
// It imports only the standard library, llm and session.
package stored

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// MaxTurnIDLen is the longest turn id a store accepts, in bytes.
const MaxTurnIDLen = 512

// Turn is a session.Turn checked and encoded: everything that can fail has
// failed (or not) before a store writes a byte, which is half of what makes
// an append atomic.
type Turn struct {
	ID       string
	Time     time.Time         // UTC, never zero
	Messages []json.RawMessage // each message's storage JSON
	Usage    llm.Usage
	CostUSD  float64
	Set      map[string]json.RawMessage // state keys set, values compact JSON
	Del      []string                   // state keys deleted, sorted
	Prefix   *Prefix                    // nil when the turn leaves the statistic as it was
	Owner    string                     // the appending principal (session.Turn.Owner)
	Model    string                     // "" leaves the session's model as it was
	Title    string                     // Title of the turn's messages; "" when none has one
	// Compaction is the storage JSON of the turn's compaction view
	// (EncodeCompaction), nil when the turn leaves the session's as it
	// was; Upto is its Upto.
	Compaction []byte
	Upto       int
}

// Prefix is a turn's replacement of the request-hash statistic.
type Prefix struct {
	session.PrefixStats
	Hashes []uint64 `json:"hashes"`
}

// EncodeTurn checks and encodes tr. A zero tr.Time becomes now. The result
// shares no memory with tr.
func EncodeTurn(ctx context.Context, tr session.Turn, now time.Time) (*Turn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := CheckTurnID(tr.ID); err != nil {
		return nil, err
	}
	out := &Turn{ID: tr.ID, Time: tr.Time, Usage: tr.Usage, CostUSD: tr.CostUSD,
		Owner: tr.Owner, Model: tr.Model, Title: Title(tr.Messages)}
	if out.Time.IsZero() {
		out.Time = now
	}
	out.Time = out.Time.UTC().Round(0)
	if y := out.Time.Year(); y < 1900 || y > 2200 { // stores keep Unix nanoseconds
		return nil, fmt.Errorf("session: turn %q: time %v out of range", tr.ID, out.Time)
	}
	out.Messages = make([]json.RawMessage, len(tr.Messages))
	for i, m := range tr.Messages {
		// MarshalJSON's output is json.Marshal's, compact and
		// HTML-escaped, so json.Marshal(m) would return the same bytes
		// after scanning them once more (TestEncodeTurnBytes); a fresh
		// buffer either way.
		data, err := m.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("session: turn %q: message %d: %w", tr.ID, i, err)
		}
		out.Messages[i] = data
	}
	for k, v := range tr.State {
		if v == nil {
			out.Del = append(out.Del, k)
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err != nil {
			return nil, fmt.Errorf("session: turn %q: state %q is not valid JSON: %w", tr.ID, k, err)
		}
		if out.Set == nil {
			out.Set = make(map[string]json.RawMessage, len(tr.State))
		}
		out.Set[k] = buf.Bytes()
	}
	slices.Sort(out.Del)
	if tr.Hashes != nil {
		out.Prefix = &Prefix{PrefixStats: tr.Prefix, Hashes: slices.Clone(tr.Hashes)}
	}
	if c := tr.Compaction; c != nil {
		data, err := EncodeCompaction(c)
		if err != nil {
			return nil, fmt.Errorf("session: turn %q: %w", tr.ID, err)
		}
		out.Compaction, out.Upto = data, c.Upto
	}
	return out, nil
}

// CheckTurnID reports whether id can key a turn: non-empty (an append
// without a key could never be retried safely) and at most MaxTurnIDLen
// bytes.
func CheckTurnID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: turn has no ID", session.ErrInvalidID)
	case len(id) > MaxTurnIDLen:
		return fmt.Errorf("%w: turn ID of %d bytes, longer than %d", session.ErrInvalidID, len(id), MaxTurnIDLen)
	}
	return nil
}

// DecodeMessages decodes messages from their storage JSON, spreading a
// long session over the available CPUs. It calls llm's one-pass decoder
// directly: json.Unmarshal would first scan each message once more to
// check its syntax, which the decoder does anyway.
func DecodeMessages(raws []json.RawMessage) ([]llm.Message, error) {
	if len(raws) == 0 {
		return nil, nil
	}
	out := make([]llm.Message, len(raws))
	err := Parallel(len(raws), 512, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			if err := out[i].UnmarshalJSON(raws[i]); err != nil {
				return fmt.Errorf("session: stored message %d: %w", i, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Hashes returns session.StoredMessageHash of each message's storage
// JSON, spreading a long session over the available CPUs.
func Hashes(raws []json.RawMessage) []uint64 {
	out := make([]uint64, len(raws))
	_ = Parallel(len(raws), 1024, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			out[i] = session.StoredMessageHash(raws[i])
		}
		return nil
	})
	return out
}

// Parallel calls fn on consecutive ranges [lo, hi) covering [0, n), on up
// to GOMAXPROCS goroutines when n is at least 2*minChunk, else on the
// caller's goroutine. It returns when every call has returned, with the
// error of the lowest failing range.
func Parallel(n, minChunk int, fn func(lo, hi int) error) error {
	workers := min(runtime.GOMAXPROCS(0), n/max(minChunk, 1))
	if workers <= 1 {
		return fn(0, n)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Go(func() { errs[w] = fn(lo, hi) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Totals is what a session sums up over its turns.
type Totals struct {
	Created  time.Time
	Updated  time.Time
	Turns    int
	Messages int
	Usage    llm.Usage
	CostUSD  float64
	State    map[string]json.RawMessage
	Prefix   session.PrefixStats
	Hashes   []uint64
	Owner    string
	Title    string
	Model    string
	// Compaction is the storage JSON of the session's compaction view
	// (nil when it has none) and Upto its Upto.
	Compaction []byte
	Upto       int
}

// Check reports whether the turn tr may be added to a session with these
// totals (exists: the session is stored): an existing session's owner
// must be tr's (else session.ErrOwner), and tr's compaction must not
// reach past the messages the session holds after tr. A store calls it
// inside the transaction (or under the lock, or in the script) that adds
// the turn, after finding tr is not already stored.
func (t *Totals) Check(tr *Turn, exists bool) error {
	if exists && t.Owner != tr.Owner {
		return fmt.Errorf("%w", session.ErrOwner)
	}
	if tr.Compaction != nil && tr.Upto > t.Messages+len(tr.Messages) {
		return fmt.Errorf("session: turn %q: compaction upto %d is past the session's %d messages",
			tr.ID, tr.Upto, t.Messages+len(tr.Messages))
	}
	return nil
}

// Add adds the turn tr to t. The first turn of a session without a creation
// time sets it. Updated never moves back. t keeps references to tr's
// buffers, which must not change afterwards.
func (t *Totals) Add(tr *Turn) {
	if t.Created.IsZero() {
		t.Created, t.Updated = tr.Time, tr.Time
	}
	if tr.Time.After(t.Updated) {
		t.Updated = tr.Time
	}
	t.Turns++
	t.Messages += len(tr.Messages)
	t.Usage.Add(tr.Usage)
	t.CostUSD += tr.CostUSD
	for _, k := range tr.Del {
		delete(t.State, k)
	}
	if len(tr.Set) > 0 && t.State == nil {
		t.State = make(map[string]json.RawMessage, len(tr.Set))
	}
	for k, v := range tr.Set {
		t.State[k] = v
	}
	if tr.Prefix != nil {
		t.Prefix = tr.Prefix.PrefixStats
		t.Hashes = tr.Prefix.Hashes
	}
	if t.Turns == 1 {
		t.Owner = tr.Owner // Check made sure a stored session's owner is tr's
	}
	if t.Title == "" {
		t.Title = tr.Title
	}
	if tr.Model != "" {
		t.Model = tr.Model
	}
	if tr.Compaction != nil {
		t.Compaction, t.Upto = tr.Compaction, tr.Upto
	}
}

// Session returns the session id with these totals and messages. It copies
// the state bag and the hashes, so the caller may change the result freely.
func (t *Totals) Session(id string, msgs []llm.Message) *session.Session {
	s := &session.Session{
		ID:        id,
		Messages:  msgs,
		State:     make(map[string]json.RawMessage, len(t.State)),
		Usage:     t.Usage,
		CostUSD:   t.CostUSD,
		Prefix:    t.Prefix,
		Hashes:    slices.Clone(t.Hashes),
		Turns:     t.Turns,
		CreatedAt: t.Created,
		UpdatedAt: t.Updated,
		Owner:     t.Owner,
		Title:     t.Title,
		Model:     t.Model,
	}
	for k, v := range t.State {
		s.State[k] = slices.Clone(v)
	}
	return s
}

// Info returns the listing summary of session id.
func (t *Totals) Info(id string) session.Info {
	return session.Info{ID: id, Owner: t.Owner, Title: t.Title, Model: t.Model, Messages: t.Messages, Turns: t.Turns,
		Usage: t.Usage, CostUSD: t.CostUSD, CreatedAt: t.Created, UpdatedAt: t.Updated}
}

// Listed reports whether a session of owner belongs in the listing opts
// asks for.
func Listed(owner string, opts session.ListOptions) bool {
	return opts.AnyOwner || owner == opts.Owner
}

// DefaultLimit is the page size of a ListOptions without a positive Limit.
const DefaultLimit = 100

// Limit returns the page size opts asks for.
func Limit(opts session.ListOptions) int {
	if opts.Limit <= 0 {
		return DefaultLimit
	}
	return opts.Limit
}

// Cursor is a position in the listing order: UpdatedAt descending, then ID
// descending. A page holds the sessions strictly after its cursor.
type Cursor struct {
	Updated time.Time
	ID      string
}

// ErrBadCursor is returned (wrapped) for a cursor no store made.
var ErrBadCursor = errors.New("session: invalid list cursor")

// String encodes c as an opaque, URL-safe token.
func (c Cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.Updated.UnixNano(), 10) + ":" + c.ID))
}

// ParseCursor decodes a cursor made by Cursor.String; the empty string is
// the zero Cursor (the start of the listing).
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: %v", ErrBadCursor, err)
	}
	nanos, id, ok := strings.Cut(string(raw), ":")
	if !ok {
		return Cursor{}, ErrBadCursor
	}
	n, err := strconv.ParseInt(nanos, 10, 64)
	if err != nil {
		return Cursor{}, fmt.Errorf("%w: %v", ErrBadCursor, err)
	}
	if session.ValidateID(id) != nil {
		return Cursor{}, ErrBadCursor
	}
	return Cursor{Updated: time.Unix(0, n).UTC(), ID: id}, nil
}

// NewestFirst orders session summaries as List returns them.
func NewestFirst(a, b session.Info) int {
	if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
		return c
	}
	return strings.Compare(b.ID, a.ID)
}

// Page sorts infos into the listing order and returns the page opts asks
// for, holding only the sessions of opts.Owner unless opts.AnyOwner. It
// reorders infos.
func Page(infos []session.Info, opts session.ListOptions) (session.Page, error) {
	cur, err := ParseCursor(opts.Cursor)
	if err != nil {
		return session.Page{}, err
	}
	infos = slices.DeleteFunc(infos, func(i session.Info) bool { return !Listed(i.Owner, opts) })
	slices.SortFunc(infos, NewestFirst)
	start := 0
	if opts.Cursor != "" {
		pos := session.Info{ID: cur.ID, UpdatedAt: cur.Updated}
		start, _ = slices.BinarySearchFunc(infos, pos, NewestFirst)
		if start < len(infos) && NewestFirst(infos[start], pos) == 0 {
			start++ // the cursor's own session was on the previous page
		}
	}
	limit := Limit(opts)
	rest := infos[start:]
	if len(rest) <= limit {
		return session.Page{Sessions: slices.Clone(rest)}, nil
	}
	page := slices.Clone(rest[:limit])
	last := page[len(page)-1]
	return session.Page{Sessions: page, Next: Cursor{Updated: last.UpdatedAt, ID: last.ID}.String()}, nil
}
