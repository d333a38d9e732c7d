package filestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

const (
	logExt  = ".jsonl"
	metaExt = ".meta.json"
	tmpMark = ".tmp-" // temporary files are <final name>.tmp-<random>

	// maxCached is how many idle sessions keep their scanned log state in
	// memory, so an Append need not re-read its log.
	maxCached = 1024
)

// Store is a session.Store over one directory. Make one with Open. It is
// safe for concurrent use.
type Store struct {
	dir    string
	fs     fsys // every file access goes through it (an *os.Root), so none can leave dir
	logger *slog.Logger

	mu      sync.Mutex
	entries map[string]*entry // per-session locks and cached log state

	records records // session.Records (records.go)
}

// entry serializes the operations on one session and caches what a scan
// of its log found.
type entry struct {
	mu   sync.Mutex
	refs int       // goroutines holding or waiting for mu; guarded by Store.mu
	log  *logState // guarded by mu; nil when unknown (the log must be scanned)
}

// logState is what an Append needs to know about a session's log.
type logState struct {
	valid    int64 // bytes of whole lines; anything after is a torn tail
	size     int64 // the file's size
	turnIDs  map[string]struct{}
	hashes   []uint64 // the current request-hash list, for delta encoding
	info     session.Info
	warnedAt int64 // valid size at which a torn tail was last reported; -1 none
}

var _ session.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithLogger sets the logger for warnings (a dropped torn line, a summary
// file that could not be written). The default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(s *Store) {
		if l != nil {
			s.logger = l
		}
	}
}

// Open returns a store over dir, creating the directory (mode 0700) if
// needed. It removes temporary files a crash left behind. Close releases
// the directory.
func Open(dir string, opts ...Option) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("filestore: open: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("filestore: open: %w", err)
	}
	return open(dir, rootFS{root}, opts)
}

// open returns a store over the directory fsys, which it closes on
// failure.
func open(dir string, fsys fsys, opts []Option) (*Store, error) {
	s := &Store{dir: dir, fs: fsys, logger: slog.Default(), entries: make(map[string]*entry)}
	for _, o := range opts {
		o(s)
	}
	ents, err := fsys.ReadDir(".")
	if err != nil {
		fsys.Close()
		return nil, fmt.Errorf("filestore: open: %w", err)
	}
	for _, e := range ents {
		if isTemp(e.Name()) && e.Type().IsRegular() {
			if err := fsys.Remove(e.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
				s.logger.Warn("filestore: cannot remove temporary file", "file", e.Name(), "err", err)
			}
		}
	}
	return s, nil
}

// isTemp reports whether name is a temporary file of this package: a log's
// or summary's name, tmpMark, and 16 hex digits. No log or summary has
// such a name, whatever its id, because those end in their extension.
func isTemp(name string) bool {
	const randLen = 16
	if len(name) < len(tmpMark)+randLen {
		return false
	}
	base, random := name[:len(name)-randLen], name[len(name)-randLen:]
	if _, err := hex.DecodeString(random); err != nil {
		return false
	}
	final, ok := strings.CutSuffix(base, tmpMark)
	return ok && (strings.HasSuffix(final, logExt) || strings.HasSuffix(final, metaExt))
}

// Close releases the store's directory. The store must not be used after.
func (s *Store) Close() error { return s.fs.Close() }

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

func logName(id string) string  { return id + logExt }
func metaName(id string) string { return id + metaExt }

// lock takes the session's lock.
func (s *Store) lock(id string) *entry {
	s.mu.Lock()
	e := s.entries[id]
	if e == nil {
		e = &entry{}
		s.entries[id] = e
	}
	e.refs++
	s.mu.Unlock()
	e.mu.Lock()
	return e
}

// unlock releases the session's lock, forgetting idle sessions beyond
// maxCached.
func (s *Store) unlock(e *entry) {
	e.mu.Unlock()
	s.mu.Lock()
	e.refs--
	if len(s.entries) > maxCached {
		for id, other := range s.entries { // map order: random eviction
			if other.refs == 0 {
				delete(s.entries, id)
				if len(s.entries) <= maxCached {
					break
				}
			}
		}
	}
	s.mu.Unlock()
}

// Create makes an empty session created now; ErrExists if id is taken.
func (s *Store) Create(ctx context.Context, id string) (*session.Session, error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	e := s.lock(id)
	defer s.unlock(e)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := s.fs.Lstat(logName(id)); err == nil {
		return nil, fmt.Errorf("filestore: create %q: %w", id, session.ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("filestore: create %q: %w", id, err)
	}
	now := time.Now().UTC().Round(0)
	hdr := encodeHeader(id, now, "")
	if err := s.createLog(id, hdr); err != nil {
		e.log = nil
		return nil, fmt.Errorf("filestore: create %q: %w", id, err)
	}
	t := stored.Totals{Created: now, Updated: now}
	e.log = &logState{valid: int64(len(hdr)), size: int64(len(hdr)), turnIDs: map[string]struct{}{},
		info: t.Info(id), warnedAt: -1}
	s.writeMeta(id, e.log)
	return t.Session(id, nil), nil
}

// Load reads the session; ErrNotFound if there is none. A torn last line
// is left out (and reported once in the log); a corrupt log is an error
// wrapping ErrCorrupt.
func (s *Store) Load(ctx context.Context, id string) (*session.Session, error) {
	return s.load(ctx, id, false)
}

// LoadView returns the session with the messages from its compaction's
// Upto on (see session.Store). It reads and scans the whole log (a log is
// one file), but decodes only those messages.
func (s *Store) LoadView(ctx context.Context, id string) (*session.Session, error) {
	return s.load(ctx, id, true)
}

func (s *Store) load(ctx context.Context, id string, view bool) (*session.Session, error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	e := s.lock(id)
	p, err := s.scan(e, id)
	s.unlock(e)
	if err != nil {
		return nil, fmt.Errorf("filestore: load %q: %w", id, err)
	}
	var t stored.Totals
	t.Created = p.created
	t.Updated = p.created
	raws := make([]json.RawMessage, 0, p.messages)
	for _, tr := range p.turns {
		t.Add(tr)
		raws = append(raws, tr.Messages...)
	}
	from := t.From(view)
	raws = raws[from:]
	msgs, err := stored.DecodeMessages(raws)
	if err != nil {
		return nil, fmt.Errorf("filestore: load %q: %w: %v", id, ErrCorrupt, err)
	}
	// The session carries its messages' content hashes, checked against a
	// copy of the messages the caller cannot reach.
	sess, err := t.ViewSession(id, stored.CloneMessages(msgs), from)
	if err != nil {
		return nil, fmt.Errorf("filestore: load %q: %w: %v", id, ErrCorrupt, err)
	}
	sess.Owner = p.owner
	sess.SetMessageHashes(msgs, stored.Hashes(raws))
	return sess, nil
}

// scan reads and parses the session's log and refreshes the cached state;
// fs.ErrNotExist wrapped in ErrNotFound when there is no log. The caller
// holds e.mu.
func (s *Store) scan(e *entry, id string) (*parsedLog, error) {
	data, err := s.fs.ReadFile(logName(id))
	if errors.Is(err, fs.ErrNotExist) {
		e.log = nil
		return nil, session.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	p, err := parseLog(id, data)
	if err != nil {
		e.log = nil
		return nil, err
	}
	st := &logState{valid: p.valid, size: int64(len(data)), turnIDs: make(map[string]struct{}, len(p.turns)), warnedAt: -1}
	t := stored.Totals{Created: p.created, Updated: p.created, Owner: p.owner}
	for _, tr := range p.turns {
		st.turnIDs[tr.ID] = struct{}{}
		t.Add(tr)
	}
	st.hashes = t.Hashes
	st.info = t.Info(id)
	if e.log != nil {
		st.warnedAt = e.log.warnedAt
	}
	if p.torn > 0 && st.warnedAt != p.valid {
		s.logger.Warn("filestore: dropping a torn last line (an append cut short by a crash); the next append removes it",
			"session", id, "offset", p.valid, "bytes", p.torn)
		st.warnedAt = p.valid
	}
	e.log = st
	return p, nil
}

// state returns the session's log state, scanning the log when it is not
// cached or the file changed size behind the store's back; nil when the
// session does not exist. The caller holds e.mu.
func (s *Store) state(e *entry, id string) (*logState, error) {
	fi, err := s.fs.Lstat(logName(id))
	if errors.Is(err, fs.ErrNotExist) {
		e.log = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if e.log != nil && e.log.size == fi.Size() {
		return e.log, nil
	}
	if _, err := s.scan(e, id); err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return e.log, nil
}

// Append adds the turn as one line of the session's log and fsyncs it,
// creating the session if needed; see the package doc for the guarantees.
// A turn ID the session already holds makes it a no-op.
func (s *Store) Append(ctx context.Context, id string, turn session.Turn) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("filestore: append: %w", err)
	}
	tr, err := stored.EncodeTurn(ctx, turn, time.Now())
	if err != nil {
		return fmt.Errorf("filestore: append to %q: %w", id, err)
	}
	e := s.lock(id)
	defer s.unlock(e)
	if err := ctx.Err(); err != nil { // it may have expired while waiting for the lock
		return err
	}
	st, err := s.state(e, id)
	if err != nil {
		return fmt.Errorf("filestore: append to %q: %w", id, err)
	}
	if st == nil {
		return s.appendNew(e, id, tr)
	}
	if _, dup := st.turnIDs[tr.ID]; dup && st.info.Owner == tr.Owner {
		return nil
	}
	t := totalsOf(st.info)
	if err := t.Check(tr, true); err != nil {
		return fmt.Errorf("filestore: append to %q: %w", id, err)
	}
	line, err := encodeTurn(tr, st.hashes)
	if err != nil {
		return fmt.Errorf("filestore: append to %q: %w", id, err)
	}
	if err := s.writeLine(st, id, line); err != nil {
		e.log = nil // unknown: rescan next time
		return fmt.Errorf("filestore: append to %q: %w", id, err)
	}
	st.valid += int64(len(line))
	st.size = st.valid
	st.turnIDs[tr.ID] = struct{}{}
	st.warnedAt = -1
	t.Add(tr)
	st.info = t.Info(id)
	if tr.Prefix != nil {
		st.hashes = tr.Prefix.Hashes
	}
	s.writeMeta(id, st)
	return nil
}

// totalsOf is the totals Append adds a turn to: a session's summary.
func totalsOf(info session.Info) stored.Totals {
	return stored.Totals{Created: info.CreatedAt, Updated: info.UpdatedAt, Turns: info.Turns, Messages: info.Messages,
		Usage: info.Usage, CostUSD: info.CostUSD, Owner: info.Owner, Title: info.Title, Model: info.Model}
}

// appendNew creates the session's log holding its first turn.
func (s *Store) appendNew(e *entry, id string, tr *stored.Turn) error {
	var t stored.Totals
	if err := t.Check(tr, false); err != nil {
		return fmt.Errorf("filestore: append to %q: %w", id, err)
	}
	line, err := encodeTurn(tr, nil)
	if err != nil {
		return fmt.Errorf("filestore: append to %q: %w", id, err)
	}
	hdr := encodeHeader(id, tr.Time, tr.Owner)
	data := append(hdr, line...)
	if err := s.createLog(id, data); err != nil {
		e.log = nil
		return fmt.Errorf("filestore: append to %q: %w", id, err)
	}
	t.Add(tr)
	st := &logState{valid: int64(len(data)), size: int64(len(data)), turnIDs: map[string]struct{}{tr.ID: {}},
		info: t.Info(id), warnedAt: -1}
	if tr.Prefix != nil {
		st.hashes = tr.Prefix.Hashes
	}
	e.log = st
	s.writeMeta(id, st)
	return nil
}

// writeLine writes one turn line at the end of the valid part of the log,
// cutting off a torn tail first, and fsyncs it. On failure it tries to
// leave the log as it was.
func (s *Store) writeLine(st *logState, id string, line []byte) (err error) {
	f, err := s.fs.OpenFile(logName(id), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if st.size != st.valid {
		if err := f.Truncate(st.valid); err != nil {
			return fmt.Errorf("cutting off a torn line: %w", err)
		}
		st.size = st.valid
	}
	if _, err := f.WriteAt(line, st.valid); err != nil {
		_ = f.Truncate(st.valid)
		return err
	}
	if err := f.Sync(); err != nil {
		// The line may or may not be on disk; the caller forgets the
		// cached state so the next operation reads the truth.
		return err
	}
	return nil
}

// createLog makes the session's log holding data, whole or not at all:
// data goes to a temporary file, which is fsync'd and then linked to the
// log's name (failing if it exists), and the directory is fsync'd.
func (s *Store) createLog(id string, data []byte) error {
	tmp, f, err := s.createTemp(logName(id))
	if err != nil {
		return err
	}
	defer s.fs.Remove(tmp) // after a link, the log keeps the data
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// A stale summary of an earlier session of this id must not describe
	// the new one.
	if err := s.fs.Remove(metaName(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := s.fs.Link(tmp, logName(id)); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return session.ErrExists
		}
		// No hard links on this file system: rename instead. The session
		// lock (and the one-store-per-directory rule) keeps it exclusive.
		if _, serr := s.fs.Lstat(logName(id)); serr == nil {
			return session.ErrExists
		}
		if err := s.fs.Rename(tmp, logName(id)); err != nil {
			return err
		}
	}
	return s.syncDir()
}

// createTemp creates a new temporary file named after final.
func (s *Store) createTemp(final string) (string, file, error) {
	for {
		var r [8]byte
		_, _ = rand.Read(r[:])
		name := final + tmpMark + hex.EncodeToString(r[:])
		f, err := s.fs.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
}

// Delete removes the session; ErrNotFound if there is none.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := check(ctx, id); err != nil {
		return err
	}
	e := s.lock(id)
	defer s.unlock(e)
	if err := ctx.Err(); err != nil {
		return err
	}
	e.log = nil
	if _, err := s.fs.Lstat(logName(id)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("filestore: delete %q: %w", id, session.ErrNotFound)
	}
	// The summary goes first: a log without one is rebuilt, a summary
	// without a log is ignored, and neither outlives a completed Delete.
	if err := s.fs.Remove(metaName(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("filestore: delete %q: %w", id, err)
	}
	if err := s.fs.Remove(logName(id)); err != nil {
		return fmt.Errorf("filestore: delete %q: %w", id, err)
	}
	if err := s.syncDir(); err != nil {
		return fmt.Errorf("filestore: delete %q: %w", id, err)
	}
	return nil
}

// List returns one page of session summaries, newest UpdatedAt first, ties
// by ID descending. It reads every session's summary, so its cost grows
// with the number of sessions. A session whose log is corrupt is left out
// (with a warning); Load reports it.
func (s *Store) List(ctx context.Context, opts session.ListOptions) (session.Page, error) {
	if err := ctx.Err(); err != nil {
		return session.Page{}, err
	}
	if _, err := stored.ParseCursor(opts.Cursor); err != nil {
		return session.Page{}, fmt.Errorf("filestore: list: %w", err)
	}
	ents, err := s.fs.ReadDir(".")
	if err != nil {
		return session.Page{}, fmt.Errorf("filestore: list: %w", err)
	}
	infos := make([]session.Info, 0, len(ents))
	for _, de := range ents {
		name := de.Name()
		id, ok := strings.CutSuffix(name, logExt)
		if !ok || !de.Type().IsRegular() || session.ValidateID(id) != nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return session.Page{}, err
		}
		info, err := s.info(id)
		if errors.Is(err, session.ErrNotFound) {
			continue // deleted meanwhile
		}
		if errors.Is(err, ErrCorrupt) {
			// One damaged log must not hide every other session.
			s.logger.Warn("filestore: leaving a corrupt session out of the listing", "session", id, "err", err)
			continue
		}
		if err != nil {
			return session.Page{}, fmt.Errorf("filestore: list: %w", err)
		}
		infos = append(infos, info)
	}
	page, err := stored.Page(infos, opts)
	if err != nil {
		return session.Page{}, fmt.Errorf("filestore: list: %w", err)
	}
	return page, nil
}

// metaVersion is the "v" of the summary files this package writes; one of
// another version (the releases before issue 22 wrote none) is rebuilt
// from its log.
const metaVersion = 2

// meta is the summary file of a session: a cache of what List shows,
// valid only while the log has exactly Size bytes.
type meta struct {
	V         int       `json:"v"`
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	Turns     int       `json:"turns"`
	Messages  int       `json:"messages"`
	Owner     string    `json:"owner,omitempty"`
	Title     string    `json:"title,omitempty"`
	Model     string    `json:"model,omitempty"`
	Usage     llm.Usage `json:"usage"`
	CostUSD   float64   `json:"cost_usd,omitempty"`
}

// info returns the session's summary from its summary file when that
// matches the log, else from the log (rewriting the summary file).
func (s *Store) info(id string) (session.Info, error) {
	fi, err := s.fs.Lstat(logName(id))
	if errors.Is(err, fs.ErrNotExist) {
		return session.Info{}, session.ErrNotFound
	}
	if err != nil {
		return session.Info{}, err
	}
	if data, err := s.fs.ReadFile(metaName(id)); err == nil {
		var m meta
		if json.Unmarshal(data, &m) == nil && m.V == metaVersion && m.Size == fi.Size() && !m.CreatedAt.IsZero() {
			return session.Info{ID: id, Owner: m.Owner, Title: m.Title, Model: m.Model, Messages: m.Messages, Turns: m.Turns,
				Usage: m.Usage, CostUSD: m.CostUSD, CreatedAt: m.CreatedAt.UTC(), UpdatedAt: m.UpdatedAt.UTC()}, nil
		}
	}
	e := s.lock(id)
	defer s.unlock(e)
	st, err := s.state(e, id)
	if err != nil {
		return session.Info{}, err
	}
	if st == nil {
		return session.Info{}, session.ErrNotFound
	}
	s.writeMeta(id, st)
	return st.info, nil
}

// writeMeta replaces the session's summary file (by renaming a temporary
// file over it). It is a cache, so a failure is only logged, and it is not
// fsync'd.
func (s *Store) writeMeta(id string, st *logState) {
	i := st.info
	data, err := json.Marshal(meta{V: metaVersion, Size: st.size, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt,
		Turns: i.Turns, Messages: i.Messages, Owner: i.Owner, Title: i.Title, Model: i.Model, Usage: i.Usage, CostUSD: i.CostUSD})
	if err == nil {
		var tmp string
		var f file
		tmp, f, err = s.createTemp(metaName(id))
		if err == nil {
			_, err = f.Write(data)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = s.fs.Rename(tmp, metaName(id))
			}
			if err != nil {
				s.fs.Remove(tmp)
			}
		}
	}
	if err != nil {
		s.logger.Warn("filestore: cannot write session summary; List will rebuild it", "session", id, "err", err)
	}
}

// syncDir fsyncs the directory so that names created or removed in it are
// durable. Windows cannot open a directory for syncing and does not need
// to.
func (s *Store) syncDir() error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := s.fs.OpenFile(".", os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func check(ctx context.Context, id string) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("filestore: %w", err)
	}
	return ctx.Err()
}
