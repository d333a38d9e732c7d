package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

// Store is a session.Store in one SQLite database. Make one with Open and
// release it with Close. It is safe for concurrent use, and several
// processes may share the database file.
type Store struct {
	w     *sql.DB // one connection, for every write
	r     *sql.DB // reads, beside the writer (WAL)
	path  string
	cache *stored.Cache // decoded messages of recently loaded sessions
	// The statements of Load and Append, prepared once: SQLite would
	// otherwise parse each again on every call.
	rs, ws map[string]*sql.Stmt
	// recordsReady: the records table exists (records.go).
	recordsReady atomic.Bool
}

// The statements Load runs on the readers and Append on the writer.
const (
	qTotals = `SELECT created_at, updated_at, turns, messages, usage, cost_usd, prefix, hashes, incarnation,
			 owner, coalesce(title, ''), model, compaction, upto FROM sessions WHERE id = ?`
	// Append needs neither the prefix statistic, the hashes nor the
	// compaction, which it replaces or keeps.
	qAppendTotals = `SELECT created_at, updated_at, turns, messages, usage, cost_usd, owner, coalesce(title, ''), model FROM sessions WHERE id = ?`
	qMessages     = `SELECT json FROM messages WHERE session_id = ? AND seq >= ? ORDER BY seq`
	qState        = `SELECT key, value FROM state WHERE session_id = ?`
	qTurnExists   = `SELECT 1 FROM turns WHERE session_id = ? AND turn_id = ?`
	qInsertTurn   = `INSERT INTO turns (session_id, seq, turn_id, time, messages, usage, cost_usd) VALUES (?, ?, ?, ?, ?, ?, ?)`
	qInsertMsg    = `INSERT INTO messages (session_id, seq, turn_seq, json) VALUES (?, ?, ?, ?)`
	qDeleteState  = `DELETE FROM state WHERE session_id = ? AND key = ?`
	qSetState     = `INSERT INTO state (session_id, key, value) VALUES (?, ?, ?)
			 ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value`
	qInsertSession = `INSERT INTO sessions (id, created_at, updated_at, turns, messages, usage, cost_usd, prefix, hashes, incarnation,
			 owner, title, model, compaction, upto)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	qUpdateSession = `UPDATE sessions SET updated_at = ?, turns = ?, messages = ?, usage = ?, cost_usd = ?,
			 prefix = coalesce(?, prefix), hashes = CASE WHEN ? IS NULL THEN hashes ELSE ? END,
			 title = ?, model = ?, compaction = coalesce(?, compaction), upto = CASE WHEN ? IS NULL THEN upto ELSE ? END
			 WHERE id = ?`
)

var (
	readQueries  = []string{qTotals, qMessages, qState}
	writeQueries = []string{qTurnExists, qAppendTotals, qInsertTurn, qInsertMsg, qDeleteState, qSetState, qInsertSession, qUpdateSession}
)

// prepare prepares queries on db.
func prepare(ctx context.Context, db *sql.DB, queries []string) (map[string]*sql.Stmt, error) {
	m := make(map[string]*sql.Stmt, len(queries))
	for _, q := range queries {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			closeStmts(m)
			return nil, err
		}
		m[q] = st
	}
	return m, nil
}

func closeStmts(m map[string]*sql.Stmt) error {
	var errs []error
	for _, st := range m {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

var _ session.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*options)

type options struct {
	busyTimeout time.Duration
	readers     int
	readOnly    bool
	cacheBytes  int64
}

// ReadOnly opens an existing database for reading only, for a program that
// only lists or shows sessions: the file is neither created nor migrated
// (a missing file is an error wrapping fs.ErrNotExist), it may belong to
// someone else or sit in a directory the caller cannot write, and every
// write fails.
func ReadOnly() Option {
	return func(o *options) { o.readOnly = true }
}

// WithBusyTimeout sets how long an operation waits for another process
// that holds the database (default 10s).
func WithBusyTimeout(d time.Duration) Option {
	return func(o *options) { o.busyTimeout = d }
}

// WithReaders sets the most connections used for reads at once (default
// max(4, GOMAXPROCS)).
func WithReaders(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.readers = n
		}
	}
}

// DefaultCacheBytes is how much storage JSON, in bytes, a Store keeps
// decoded by default (see WithCacheBytes).
const DefaultCacheBytes = stored.DefaultCacheBytes

// WithCacheBytes sets how much of the sessions it loads a Store keeps
// decoded in memory, in bytes of their storage JSON (default
// [DefaultCacheBytes]; 0 keeps nothing). A Load of a session the store
// holds reads only the rows appended since it last read the session,
// whoever appended them; the least recently loaded sessions are dropped
// first.
func WithCacheBytes(n int64) Option {
	return func(o *options) { o.cacheBytes = max(n, 0) }
}

// Open opens the database at path, creating it (mode 0600) and its schema
// if needed and migrating an older schema.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	o := options{busyTimeout: 10 * time.Second, readers: max(4, runtime.GOMAXPROCS(0)), cacheBytes: DefaultCacheBytes}
	for _, opt := range opts {
		opt(&o)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	if o.readOnly {
		return openReadOnly(ctx, abs, o)
	}
	// SQLite would create the file world-readable; sessions are private.
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	} else {
		f.Close()
	}
	name := fileURI(abs)
	busy := fmt.Sprint(o.busyTimeout.Milliseconds())
	w, err := sql.Open("sqlite", name+"?_busy_timeout="+busy+"&_journal_mode=WAL&_synchronous=FULL&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	r, err := sql.Open("sqlite", name+"?_busy_timeout="+busy+"&_query_only=1")
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	r.SetMaxOpenConns(o.readers)
	r.SetMaxIdleConns(o.readers)
	s := &Store{w: w, r: r, path: abs, cache: stored.NewCache(o.cacheBytes)}
	if err := migrate(ctx, w); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	if err := backfillTitles(ctx, w); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	if s.rs, err = prepare(ctx, r, readQueries); err == nil {
		s.ws, err = prepare(ctx, w, writeQueries)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	return s, nil
}

// fileURI is the SQLite URI of the file at abs.
func fileURI(abs string) string {
	name := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	if !strings.HasPrefix(name, "file:///") { // a Windows path "C:/x" needs the third slash too
		name = "file:///" + strings.TrimPrefix(name, "file:")
	}
	return name
}

// openReadOnly opens the database at abs with ReadOnly: one read-only pool
// serves as reader and (failing) writer. A WAL database needs its -shm
// file, which a reader who cannot write the directory cannot create; when
// there is no write-ahead log to read (the last writer checkpointed it),
// the file alone holds every session and is opened as immutable instead.
func openReadOnly(ctx context.Context, abs string, o options) (*Store, error) {
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	busy := "&_busy_timeout=" + fmt.Sprint(o.busyTimeout.Milliseconds())
	db, err := openVersioned(ctx, fileURI(abs)+"?mode=ro"+busy, o.readers)
	if err != nil {
		if fi, serr := os.Stat(abs + "-wal"); serr != nil || fi.Size() == 0 {
			db, err = openVersioned(ctx, fileURI(abs)+"?mode=ro&immutable=1"+busy, o.readers)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s read-only: %w", abs, err)
	}
	s := &Store{w: db, r: db, path: abs, cache: stored.NewCache(o.cacheBytes)}
	// The write statements prepare on a read-only pool too; running one
	// fails ("attempt to write a readonly database").
	if s.rs, err = prepare(ctx, db, readQueries); err == nil {
		s.ws, err = prepare(ctx, db, writeQueries)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: open %s read-only: %w", abs, err)
	}
	return s, nil
}

// openVersioned opens a pool on name and checks the schema version.
func openVersioned(ctx context.Context, name string, conns int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", name)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(conns)
	var v int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		db.Close()
		return nil, err
	}
	if v != SchemaVersion {
		db.Close()
		return nil, fmt.Errorf("schema version %d, want %d (open it once for writing to migrate it)", v, SchemaVersion)
	}
	return db, nil
}

// Path returns the database file's absolute path.
func (s *Store) Path() string { return s.path }

// Close closes the database. The store must not be used after.
func (s *Store) Close() error {
	// Let SQLite refresh its query-planner statistics if they are stale.
	_, _ = s.w.Exec(`PRAGMA optimize`)
	return errors.Join(closeStmts(s.rs), closeStmts(s.ws), s.r.Close(), s.w.Close())
}

// Create makes an empty session created now; ErrExists if id is taken.
func (s *Store) Create(ctx context.Context, id string) (*session.Session, error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	now := time.Now().UTC().Round(0)
	res, err := s.w.ExecContext(ctx,
		`INSERT INTO sessions (id, created_at, updated_at, incarnation, title) VALUES (?, ?, ?, ?, '') ON CONFLICT (id) DO NOTHING`,
		id, now.UnixNano(), now.UnixNano(), newIncarnation())
	if err != nil {
		return nil, fmt.Errorf("sqlite: create %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, fmt.Errorf("sqlite: create %q: %w", id, err)
	} else if n == 0 {
		return nil, fmt.Errorf("sqlite: create %q: %w", id, session.ErrExists)
	}
	t := stored.Totals{Created: now, Updated: now}
	sess := t.Session(id, nil)
	sess.SetMessageHashes(nil, nil)
	return sess, nil
}

// Load reads the session in one read transaction, so it sees whole turns
// only; ErrNotFound if there is none. Of a session it loaded before (and
// still holds, see WithCacheBytes) it reads only the rows appended since.
func (s *Store) Load(ctx context.Context, id string) (*session.Session, error) {
	return s.load(ctx, id, false)
}

// LoadView reads the session as Load does, but only the messages from its
// compaction's Upto on (WHERE seq >= upto), with Base set to Upto; see
// session.Store.
func (s *Store) LoadView(ctx context.Context, id string) (*session.Session, error) {
	return s.load(ctx, id, true)
}

func (s *Store) load(ctx context.Context, id string, view bool) (_ *session.Session, err error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("sqlite: load %q: %w", id, err)
	}
	defer tx.Rollback() // read-only: nothing to commit

	t, inc, err := loadTotals(ctx, tx.StmtContext(ctx, s.rs[qTotals]), id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load %q: %w", id, err)
	}
	from := t.From(view)
	base, baseHashes, baseBytes := s.cache.GetFrom(id, inc, from)
	if n := t.Messages - from; len(base) > n { // the cache read a later state than this transaction sees
		base, baseHashes, baseBytes = base[:n], baseHashes[:n], 0
	}
	var raws []json.RawMessage
	var moreBytes int64
	if from+len(base) < t.Messages {
		raws = make([]json.RawMessage, 0, t.Messages-from-len(base))
		rows, err := tx.StmtContext(ctx, s.rs[qMessages]).QueryContext(ctx, id, from+len(base))
		if err != nil {
			return nil, fmt.Errorf("sqlite: load %q: %w", id, err)
		}
		for rows.Next() {
			var raw sql.RawBytes
			if err := rows.Scan(&raw); err != nil {
				rows.Close()
				return nil, fmt.Errorf("sqlite: load %q: %w", id, err)
			}
			raws = append(raws, json.RawMessage(append([]byte(nil), raw...)))
			moreBytes += int64(len(raw))
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return nil, fmt.Errorf("sqlite: load %q: %w", id, err)
		}
	}
	rows, err := tx.StmtContext(ctx, s.rs[qState]).QueryContext(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load %q: %w", id, err)
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return nil, fmt.Errorf("sqlite: load %q: %w", id, err)
		}
		if t.State == nil {
			t.State = make(map[string]json.RawMessage)
		}
		t.State[k] = json.RawMessage(v)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("sqlite: load %q: %w", id, err)
	}
	if from+len(base)+len(raws) != t.Messages {
		return nil, fmt.Errorf("sqlite: load %q: %d messages stored, %d counted", id, from+len(base)+len(raws), t.Messages)
	}
	more, err := stored.DecodeMessages(raws)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load %q: %w", id, err)
	}
	msgs, hashes := s.cache.PutFrom(id, inc, from, base, baseHashes, baseBytes, more, stored.Hashes(raws), moreBytes)
	sess, err := t.ViewSession(id, stored.CloneMessages(msgs), from)
	if err != nil {
		return nil, fmt.Errorf("sqlite: load %q: %w", id, err)
	}
	sess.SetMessageHashes(msgs, hashes)
	return sess, nil
}

// loadTotals reads the sessions row, and the session's incarnation;
// ErrNotFound if there is none.
func loadTotals(ctx context.Context, q *sql.Stmt, id string) (*stored.Totals, int64, error) {
	var (
		created, updated int64
		usage            string
		prefix           sql.NullString
		hashes           []byte
		incarnation      int64
		compaction       []byte
		t                stored.Totals
	)
	err := q.QueryRowContext(ctx, id).
		Scan(&created, &updated, &t.Turns, &t.Messages, &usage, &t.CostUSD, &prefix, &hashes, &incarnation,
			&t.Owner, &t.Title, &t.Model, &compaction, &t.Upto)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, session.ErrNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	t.Created = time.Unix(0, created).UTC()
	t.Updated = time.Unix(0, updated).UTC()
	if compaction != nil {
		t.Compaction = compaction
	}
	if err := json.Unmarshal([]byte(usage), &t.Usage); err != nil {
		return nil, 0, fmt.Errorf("stored usage: %w", err)
	}
	if prefix.Valid {
		if err := json.Unmarshal([]byte(prefix.String), &t.Prefix); err != nil {
			return nil, 0, fmt.Errorf("stored prefix statistic: %w", err)
		}
		t.Hashes, err = stored.DecodeHashes(hashes)
		if err != nil {
			return nil, 0, err
		}
	}
	return &t, incarnation, nil
}

// appendTotals reads what Append adds a turn to: the sessions row without
// the request-hash statistic; ErrNotFound if there is none.
func appendTotals(ctx context.Context, q *sql.Stmt, id string) (*stored.Totals, error) {
	var (
		created, updated int64
		usage            string
		t                stored.Totals
	)
	err := q.QueryRowContext(ctx, id).Scan(&created, &updated, &t.Turns, &t.Messages, &usage, &t.CostUSD, &t.Owner, &t.Title, &t.Model)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, session.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	t.Created = time.Unix(0, created).UTC()
	t.Updated = time.Unix(0, updated).UTC()
	if err := json.Unmarshal([]byte(usage), &t.Usage); err != nil {
		return nil, fmt.Errorf("stored usage: %w", err)
	}
	return &t, nil
}

// newIncarnation draws the incarnation of a new sessions row: random, and
// never 0 (the incarnation of every session made before schema version 2).
func newIncarnation() int64 {
	for {
		if n := rand.Int64(); n != 0 {
			return n
		}
	}
}

// Append adds the turn in one transaction (one fsync of the log on
// commit), creating the session if needed. A turn ID the session already
// holds makes it a no-op.
func (s *Store) Append(ctx context.Context, id string, turn session.Turn) (err error) {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("sqlite: append: %w", err)
	}
	tr, err := stored.EncodeTurn(ctx, turn, time.Now())
	if err != nil {
		return fmt.Errorf("sqlite: append to %q: %w", id, err)
	}
	if err := s.appendTx(ctx, id, tr); err != nil {
		return fmt.Errorf("sqlite: append to %q: %w", id, err)
	}
	return nil
}

func (s *Store) appendTx(ctx context.Context, id string, tr *stored.Turn) (err error) {
	tx, err := s.w.BeginTx(ctx, nil) // BEGIN IMMEDIATE
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	stmt := func(q string) *sql.Stmt { return tx.StmtContext(ctx, s.ws[q]) }
	t, err := appendTotals(ctx, stmt(qAppendTotals), id)
	isNew := errors.Is(err, session.ErrNotFound)
	if isNew {
		t, err = &stored.Totals{}, nil
	}
	if err != nil {
		return err
	}
	if !isNew && t.Owner == tr.Owner {
		var dup int
		switch err := stmt(qTurnExists).QueryRowContext(ctx, id, tr.ID).Scan(&dup); {
		case err == nil:
			return tx.Rollback() // already stored: a retry
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
	}
	if err := t.Check(tr, !isNew); err != nil {
		return err
	}
	turnSeq, firstMsg := t.Turns, t.Messages
	t.Add(tr)

	usage, err := json.Marshal(tr.Usage)
	if err != nil {
		return err
	}
	if _, err := stmt(qInsertTurn).ExecContext(ctx,
		id, turnSeq, tr.ID, tr.Time.UnixNano(), len(tr.Messages), string(usage), tr.CostUSD); err != nil {
		return err
	}
	insert := stmt(qInsertMsg)
	for i, m := range tr.Messages {
		if _, err := insert.ExecContext(ctx, id, firstMsg+i, turnSeq, string(m)); err != nil {
			return err
		}
	}
	for _, k := range tr.Del {
		if _, err := stmt(qDeleteState).ExecContext(ctx, id, k); err != nil {
			return err
		}
	}
	for k, v := range tr.Set {
		if _, err := stmt(qSetState).ExecContext(ctx, id, k, string(v)); err != nil {
			return err
		}
	}

	totalUsage, err := json.Marshal(t.Usage)
	if err != nil {
		return err
	}
	var prefix, hashes any // NULL unless this turn tracks requests
	if tr.Prefix != nil {
		p, err := json.Marshal(tr.Prefix.PrefixStats)
		if err != nil {
			return err
		}
		prefix, hashes = string(p), stored.EncodeHashes(tr.Prefix.Hashes)
	}
	var compaction, upto any // NULL unless this turn replaces the view
	if tr.Compaction != nil {
		compaction, upto = string(tr.Compaction), tr.Upto
	}
	if isNew {
		_, err = stmt(qInsertSession).ExecContext(ctx,
			id, t.Created.UnixNano(), t.Updated.UnixNano(), t.Turns, t.Messages, string(totalUsage), t.CostUSD, prefix, hashes, newIncarnation(),
			t.Owner, t.Title, t.Model, compaction, t.Upto)
	} else {
		_, err = stmt(qUpdateSession).ExecContext(ctx,
			t.Updated.UnixNano(), t.Turns, t.Messages, string(totalUsage), t.CostUSD, prefix, prefix, hashes,
			t.Title, t.Model, compaction, upto, upto, id)
	}
	if err != nil {
		return err
	}
	return tx.Commit()
}

// List returns one page of session summaries, newest UpdatedAt first, ties
// by ID descending, from the index on (owner, updated_at, id) (or on
// (updated_at, id) for every owner). It reads the sessions rows only.
func (s *Store) List(ctx context.Context, opts session.ListOptions) (session.Page, error) {
	cur, err := stored.ParseCursor(opts.Cursor)
	if err != nil {
		return session.Page{}, fmt.Errorf("sqlite: list: %w", err)
	}
	limit := stored.Limit(opts)
	q := `SELECT id, messages, turns, created_at, updated_at, owner, coalesce(title, ''), model, usage, cost_usd FROM sessions`
	var where []string
	var args []any
	if !opts.AnyOwner {
		where, args = append(where, `owner = ?`), append(args, opts.Owner)
	}
	if opts.Cursor != "" {
		where, args = append(where, `(updated_at, id) < (?, ?)`), append(args, cur.Updated.UnixNano(), cur.ID)
	}
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	q += ` ORDER BY updated_at DESC, id DESC LIMIT ?`
	rows, err := s.r.QueryContext(ctx, q, append(args, limit+1)...)
	if err != nil {
		return session.Page{}, fmt.Errorf("sqlite: list: %w", err)
	}
	defer rows.Close()
	var page session.Page
	for rows.Next() {
		var info session.Info
		var created, updated int64
		var usage []byte
		if err := rows.Scan(&info.ID, &info.Messages, &info.Turns, &created, &updated,
			&info.Owner, &info.Title, &info.Model, &usage, &info.CostUSD); err != nil {
			return session.Page{}, fmt.Errorf("sqlite: list: %w", err)
		}
		if err := json.Unmarshal(usage, &info.Usage); err != nil {
			return session.Page{}, fmt.Errorf("sqlite: list: stored usage of %q: %w", info.ID, err)
		}
		info.CreatedAt, info.UpdatedAt = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
		page.Sessions = append(page.Sessions, info)
	}
	if err := rows.Err(); err != nil {
		return session.Page{}, fmt.Errorf("sqlite: list: %w", err)
	}
	if len(page.Sessions) > limit {
		page.Sessions = page.Sessions[:limit]
		last := page.Sessions[limit-1]
		page.Next = stored.Cursor{Updated: last.UpdatedAt, ID: last.ID}.String()
	}
	return page, nil
}

// Delete removes the session, its turns, messages and state in one
// transaction; ErrNotFound if there is none.
func (s *Store) Delete(ctx context.Context, id string) (err error) {
	if err := check(ctx, id); err != nil {
		return err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: delete %q: %w", id, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("sqlite: delete %q: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("sqlite: delete %q: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("sqlite: delete %q: %w", id, session.ErrNotFound)
	}
	for _, table := range []string{"turns", "messages", "state"} {
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE session_id = ?`, id); err != nil {
			return fmt.Errorf("sqlite: delete %q: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: delete %q: %w", id, err)
	}
	s.cache.Drop(id)
	return nil
}

func check(ctx context.Context, id string) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return ctx.Err()
}
