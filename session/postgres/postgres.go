package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

// Store is a session.Store in a PostgreSQL database. Make one with Open
// (or New over a pool of your own) and release it with Close. It is safe
// for concurrent use by any number of goroutines and processes.
type Store struct {
	pool    *pgxpool.Pool
	owned   bool // Close closes the pool
	retries int
	cache   *stored.Cache // decoded messages of recently loaded sessions
	// usage: the usage column of the sessions the store last appended to
	// or loaded, which the next append sums in Go (append.go).
	usage stored.Recent[seenUsage]
	// recordsReady: the records table exists (records.go).
	recordsReady atomic.Bool
	readOnly     bool // ReadOnly: New creates and migrates nothing
}

var _ session.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithRetries sets how many times Append tries again, with the same turn,
// after an error that left its outcome unknown or that PostgreSQL asks to
// retry (a lost connection, a serialization failure, a deadlock); default
// 2. The turn's ID makes the retry safe: a turn that did land is not
// stored again.
func WithRetries(n int) Option {
	return func(s *Store) { s.retries = max(n, 0) }
}

// WithCacheBytes sets how much of the sessions it loads a Store keeps
// decoded in memory, in bytes of their storage JSON (default 32 MiB; 0
// keeps nothing). A Load of a session the store holds reads only the
// messages appended since it last read the session, whoever appended
// them.
func WithCacheBytes(n int64) Option {
	return func(s *Store) { s.cache = stored.NewCache(max(n, 0)) }
}

// ReadOnly opens the store for a program that only reads it: New creates,
// migrates and backfills nothing, and tables that are not there (an empty
// or missing schema) are an error wrapping session.ErrNoStore instead of
// a new store.
func ReadOnly() Option {
	return func(s *Store) { s.readOnly = true }
}

// Open connects to the database the connection string names (a
// postgres:// URL or key=value pairs, as pgx takes them; the password may
// come from PGPASSWORD or ~/.pgpass instead), creates or migrates the
// schema, and returns the store. The tables are made in the connection's
// current schema: add search_path=NAME to the URL to keep them elsewhere
// than public.
func Open(ctx context.Context, connString string, opts ...Option) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s, err := New(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// New makes a store over a pool the caller owns (Close leaves it open),
// creating or migrating the schema first.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	s := &Store{pool: pool, retries: 2, cache: stored.NewCache(stored.DefaultCacheBytes)}
	for _, o := range opts {
		o(s)
	}
	if s.readOnly {
		if err := checkReadable(ctx, pool); err != nil {
			return nil, fmt.Errorf("postgres: open: %w", unavailable(err))
		}
		return s, nil
	}
	if err := migrate(ctx, pool); err != nil {
		return nil, fmt.Errorf("postgres: open: %w", unavailable(err))
	}
	if err := backfillTitles(ctx, pool); err != nil {
		return nil, fmt.Errorf("postgres: open: %w", unavailable(err))
	}
	return s, nil
}

// Pool returns the store's connection pool.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Close closes the pool if Open made it. The store must not be used after.
func (s *Store) Close() error {
	if s.owned {
		s.pool.Close()
	}
	return nil
}

func check(ctx context.Context, id string) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return ctx.Err()
}

// Create makes an empty session created now; ErrExists if id is taken.
func (s *Store) Create(ctx context.Context, id string) (*session.Session, error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	now := time.Now().UTC().Round(0)
	tag, err := s.pool.Exec(ctx,
		`INSERT INTO agcore_sessions (id, created_at, updated_at, incarnation, title) VALUES ($1, $2, $2, $3, '') ON CONFLICT (id) DO NOTHING`,
		id, now.UnixNano(), newIncarnation())
	if err != nil {
		return nil, fmt.Errorf("postgres: create %q: %w", id, unavailable(err))
	}
	if tag.RowsAffected() == 0 {
		return nil, fmt.Errorf("postgres: create %q: %w", id, session.ErrExists)
	}
	t := stored.Totals{Created: now, Updated: now}
	sess := t.Session(id, nil)
	sess.SetMessageHashes(nil, nil)
	return sess, nil
}

// Load reads the session in one repeatable-read, read-only transaction, so
// it sees whole turns only; ErrNotFound if there is none.
func (s *Store) Load(ctx context.Context, id string) (*session.Session, error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	sess, err := s.load(ctx, id, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: load %q: %w", id, unavailable(err))
	}
	return sess, nil
}

// LoadView reads the session as Load does, but only the messages from its
// compaction's Upto on (the turns from the one holding message Upto),
// with Base set to Upto; see session.Store.
func (s *Store) LoadView(ctx context.Context, id string) (*session.Session, error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	sess, err := s.load(ctx, id, true)
	if err != nil {
		return nil, fmt.Errorf("postgres: load %q: %w", id, unavailable(err))
	}
	return sess, nil
}

func (s *Store) load(ctx context.Context, id string, view bool) (*session.Session, error) {
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	var (
		t                stored.Totals
		created, updated int64
		usage            string
		prefix           *string
		hashes           []byte
		inc              int64
	)
	err = tx.QueryRow(ctx, `SELECT created_at, updated_at, turns, messages, usage, cost_usd, prefix, hashes, incarnation,
		owner, coalesce(title, ''), model, compaction, upto
		FROM agcore_sessions WHERE id = $1`, id).
		Scan(&created, &updated, &t.Turns, &t.Messages, &usage, &t.CostUSD, &prefix, &hashes, &inc,
			&t.Owner, &t.Title, &t.Model, &t.Compaction, &t.Upto)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, session.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	t.Created, t.Updated = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	if err := json.Unmarshal([]byte(usage), &t.Usage); err != nil {
		return nil, fmt.Errorf("stored usage: %w", err)
	}
	s.usage.Put(id, seenUsage{text: usage, usage: t.Usage})
	if prefix != nil {
		if err := json.Unmarshal([]byte(*prefix), &t.Prefix); err != nil {
			return nil, fmt.Errorf("stored prefix statistic: %w", err)
		}
		if t.Hashes, err = stored.DecodeHashes(hashes); err != nil {
			return nil, err
		}
	}
	from := t.From(view)
	base, baseHashes, baseBytes := s.cache.GetFrom(id, inc, from)
	if n := t.Messages - from; len(base) > n { // the cache read a later state than this transaction sees
		base, baseHashes, baseBytes = base[:n], baseHashes[:n], 0
	}
	var raws []json.RawMessage
	var moreBytes int64
	if at := from + len(base); at < t.Messages {
		if raws, moreBytes, err = readMessages(ctx, tx, id, at, t.Messages-at); err != nil {
			return nil, err
		}
	}
	rows, err := tx.Query(ctx, `SELECT key, value FROM agcore_state WHERE session_id = $1`, id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return nil, err
		}
		if t.State == nil {
			t.State = make(map[string]json.RawMessage)
		}
		t.State[k] = json.RawMessage(v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if from+len(base)+len(raws) != t.Messages {
		return nil, fmt.Errorf("%d messages stored, %d counted", from+len(base)+len(raws), t.Messages)
	}
	more, err := stored.DecodeMessages(raws)
	if err != nil {
		return nil, err
	}
	msgs, msgHashes := s.cache.PutFrom(id, inc, from, base, baseHashes, baseBytes, more, stored.Hashes(raws), moreBytes)
	sess, err := t.ViewSession(id, stored.CloneMessages(msgs), from)
	if err != nil {
		return nil, err
	}
	sess.SetMessageHashes(msgs, msgHashes)
	return sess, nil
}

// readMessages reads session id's messages from the at'th on (n of them
// are expected) out of its turns' rows: the turn holding message at (the
// last whose first message is at or before it, found scanning back from
// the session's last turn, so only the turns read are visited) and every
// turn after it.
func readMessages(ctx context.Context, tx pgx.Tx, id string, at, n int) ([]json.RawMessage, int64, error) {
	raws := make([]json.RawMessage, 0, n)
	var size int64
	rows, err := tx.Query(ctx, `SELECT first, msgs FROM agcore_turns WHERE session_id = $1 AND first + messages > $2
		AND seq >= coalesce((SELECT seq FROM agcore_turns WHERE session_id = $1 AND first <= $2 ORDER BY seq DESC LIMIT 1), 0)
		ORDER BY seq`, id, at)
	if err != nil {
		return nil, 0, err
	}
	// msgs comes in binary (pgx asks for it for bytea[]); it is decoded
	// here, one allocation a message, unless it comes as text.
	fields := rows.FieldDescriptions()
	if len(fields) < 2 {
		// The query failed before its result's description arrived (a
		// lost connection): pgx reports it through rows.Err.
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, 0, err
		}
		return nil, 0, fmt.Errorf("reading the turns of %q: no result description", id)
	}
	binaryMsgs := fields[1].Format == pgx.BinaryFormatCode
	var msgs [][]byte
	for rows.Next() {
		var first int
		if err := rows.Scan(&first, nil); err != nil {
			rows.Close()
			return nil, 0, err
		}
		msgs = msgs[:0]
		if binaryMsgs {
			msgs, err = appendByteaArray(msgs, rows.RawValues()[1])
		} else {
			var fresh [][]byte // not decoded over the messages kept
			err = rows.Scan(nil, &fresh)
			msgs = fresh
		}
		if err != nil {
			rows.Close()
			return nil, 0, err
		}
		pos := at + len(raws) // the next message wanted
		if first > pos || len(raws) > 0 && first != pos {
			rows.Close()
			return nil, 0, fmt.Errorf("a turn stored from message %d where message %d was expected", first, pos)
		}
		for _, m := range msgs[min(pos-first, len(msgs)):] {
			raws = append(raws, m) // each message its own copy
			size += int64(len(m))
		}
	}
	rows.Close()
	return raws, size, rows.Err()
}

// Append adds the turn in one statement (one round trip, one commit; see
// append.go), creating the session if needed, under the session row's
// lock, which the statement's update of the row takes: appends to one
// session, from any number of processes, are applied one at a time, each
// turn whole and contiguous. A turn ID the session already holds makes it
// a no-op. When the outcome of an attempt is unknown (the connection was
// lost) Append tries again (see WithRetries); an error it returns leaves
// the session as it was or with the turn stored exactly once, and a retry
// with the same turn settles which.
func (s *Store) Append(ctx context.Context, id string, turn session.Turn) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("postgres: append: %w", err)
	}
	tr, err := stored.EncodeTurn(ctx, turn, time.Now())
	if err != nil {
		return fmt.Errorf("postgres: append to %q: %w", id, err)
	}
	for attempt, moved := 0, 0; ; attempt++ {
		err = s.appendTx(ctx, id, tr)
		if dupTurn(err) { // already stored: a retry, or the same turn from elsewhere
			err = nil
		}
		if errors.Is(err, errMoved) && moved < 8 && ctx.Err() == nil {
			moved++
			attempt-- // not a fault: the session moved on between the statement and the check
			continue
		}
		if err == nil || attempt >= s.retries || ctx.Err() != nil || !retryable(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: append to %q: %w", id, unavailable(err))
	}
	return nil
}

// unavailable marks err with session.ErrUnavailable when the server could
// not be reached or the connection broke: a connection error, or the
// server's own connection-exception (08xxx) and shutdown (57P01-57P03)
// codes.
func unavailable(err error) error {
	return stored.Unavailable(err, func(err error) bool {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
		}
		var ce *pgconn.ConnectError
		return errors.As(err, &ce) || errors.Is(err, pgconn.ErrConnClosed) || stored.ConnectionLost(err)
	})
}

// dupTurn reports whether err is the unique index on (session_id,
// turn_id) refusing a turn already stored.
func dupTurn(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" && pgErr.TableName == "agcore_turns" &&
		strings.Contains(pgErr.ConstraintName, "turn_id")
}

// retryable reports whether an append that failed with err may be tried
// again: the connection failed (whether or not the commit reached the
// server, the turn ID makes a second attempt safe), or the server asks
// for a retry. A statement the server refused for any other reason is not
// retried.
func retryable(err error) bool {
	var r refused
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &r) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01", // serialization failure, deadlock
			"57P01", "57P02", "57P03": // admin shutdown (pg_terminate_backend), crash shutdown, cannot connect now
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08") // connection exception
	}
	return true // not the server's answer: the connection broke
}

// refused is an append the store itself refused (another owner's
// session, a compaction past the messages): never retried.
type refused struct{ error }

func (r refused) Unwrap() error { return r.error }

// List returns one page of session summaries, newest UpdatedAt first, ties
// by ID descending, from the index on (owner, updated_at, id) (or on
// (updated_at, id) for every owner). It reads the sessions rows only.
func (s *Store) List(ctx context.Context, opts session.ListOptions) (session.Page, error) {
	cur, err := stored.ParseCursor(opts.Cursor)
	if err != nil {
		return session.Page{}, fmt.Errorf("postgres: list: %w", unavailable(err))
	}
	limit := stored.Limit(opts)
	q := `SELECT id, messages, turns, created_at, updated_at, owner, coalesce(title, ''), model, usage, cost_usd FROM agcore_sessions`
	var where []string
	var args []any
	if !opts.AnyOwner {
		args = append(args, opts.Owner)
		where = append(where, fmt.Sprintf(`owner = $%d`, len(args)))
	}
	if opts.Cursor != "" {
		args = append(args, cur.Updated.UnixNano(), cur.ID)
		where = append(where, fmt.Sprintf(`(updated_at, id) < ($%d, $%d)`, len(args)-1, len(args)))
	}
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	args = append(args, limit+1)
	q += fmt.Sprintf(` ORDER BY updated_at DESC, id DESC LIMIT $%d`, len(args))
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return session.Page{}, fmt.Errorf("postgres: list: %w", unavailable(err))
	}
	defer rows.Close()
	var page session.Page
	for rows.Next() {
		var info session.Info
		var created, updated int64
		var usage string
		if err := rows.Scan(&info.ID, &info.Messages, &info.Turns, &created, &updated,
			&info.Owner, &info.Title, &info.Model, &usage, &info.CostUSD); err != nil {
			return session.Page{}, fmt.Errorf("postgres: list: %w", unavailable(err))
		}
		if err := json.Unmarshal([]byte(usage), &info.Usage); err != nil {
			return session.Page{}, fmt.Errorf("postgres: list: stored usage of %q: %w", info.ID, err)
		}
		info.CreatedAt, info.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
		page.Sessions = append(page.Sessions, info)
	}
	if err := rows.Err(); err != nil {
		return session.Page{}, fmt.Errorf("postgres: list: %w", unavailable(err))
	}
	if len(page.Sessions) > limit {
		page.Sessions = page.Sessions[:limit]
		last := page.Sessions[limit-1]
		page.Next = stored.Cursor{Updated: last.UpdatedAt, ID: last.ID}.String()
	}
	return page, nil
}

// Delete removes the session with its turns, messages and state (one
// statement; the foreign keys cascade); ErrNotFound if there is none.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := check(ctx, id); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM agcore_sessions WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("postgres: delete %q: %w", id, unavailable(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("postgres: delete %q: %w", id, session.ErrNotFound)
	}
	s.cache.Drop(id)
	s.usage.Drop(id)
	return nil
}

// newIncarnation draws the incarnation of a new sessions row: random and
// never 0.
func newIncarnation() int64 {
	for {
		if n := rand.Int64(); n != 0 {
			return n
		}
	}
}
