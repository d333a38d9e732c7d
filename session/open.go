package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/agcore/agcore/internal/redact"
)

// An Opener opens the stores of the URL schemes it is registered for
// ([Register]). The store packages register theirs when they are
// imported: session/sqlite ("sqlite"), session/filestore ("file"),
// session/memstore ("memory"), session/postgres ("postgres",
// "postgresql") and session/redis ("redis", "rediss"); session/stores
// imports all five.
type Opener interface {
	// Open opens the store url names, as the options say. Open has
	// already checked url with Check; its errors are made one line and
	// rid of the URL's secrets by [Open], and need not name the store.
	Open(ctx context.Context, url string, o OpenOptions) (*Opened, error)
	// Check reports, without connecting or touching a file, whether url
	// is one Open could try. Its error is a phrase that follows the
	// store's name: `names no directory: give one, such as file:./sessions`.
	Check(url string) error
	// Syntax is how the opener's URLs are written, for messages that
	// list the kinds of store: "sqlite:PATH", "postgres://…".
	Syntax() string
}

// OpenOptions are how a store is to be opened: what [Open]'s options set,
// as its Opener receives them.
type OpenOptions struct {
	// ReadOnly opens the store for reading only: nothing is created
	// (no file, directory, database or schema that does not exist yet),
	// a store named explicitly that does not exist is an error wrapping
	// [ErrNoStore], and a SQLite database is opened read-only, so a user
	// who cannot write it can still read it.
	ReadOnly bool
	// Logger receives the store's warnings and its driver's log lines
	// (at debug level). Never nil when an Opener gets it; the default
	// is slog.Default().
	Logger *slog.Logger
	// Home is agcore's home directory, where "sqlite:" without a path
	// keeps its database; "" means $AGCORE_HOME, or ~/.agcore when that
	// is not set.
	Home string
	// CacheBytes bounds the message cache of the stores that keep one
	// (sqlite, postgres, redis): the decoded messages of the sessions
	// loaded last, counted in bytes of their storage JSON. 0 means
	// [DefaultCacheBytes]; a negative value keeps nothing. The other
	// stores ignore it.
	CacheBytes int64
}

// DefaultCacheBytes is the message cache's bound when
// [OpenOptions.CacheBytes] is 0: 32 MiB of storage JSON.
const DefaultCacheBytes = 32 << 20

// An OpenOption sets one of the [OpenOptions] of [Open].
type OpenOption func(*OpenOptions)

// ReadOnly opens the store for reading only (see [OpenOptions.ReadOnly]).
func ReadOnly() OpenOption { return func(o *OpenOptions) { o.ReadOnly = true } }

// WithLogger sets the logger of the store and its driver (see
// [OpenOptions.Logger]).
func WithLogger(l *slog.Logger) OpenOption {
	return func(o *OpenOptions) {
		if l != nil {
			o.Logger = l
		}
	}
}

// WithCacheBytes bounds the store's message cache (see
// [OpenOptions.CacheBytes]; a negative n keeps nothing).
func WithCacheBytes(n int64) OpenOption { return func(o *OpenOptions) { o.CacheBytes = n } }

// CacheSize returns the message cache's bound these options ask for, in
// bytes: [DefaultCacheBytes] for 0, 0 (keep nothing) for a negative
// value. Openers call it.
func (o OpenOptions) CacheSize() int64 {
	switch {
	case o.CacheBytes == 0:
		return DefaultCacheBytes
	case o.CacheBytes < 0:
		return 0
	}
	return o.CacheBytes
}

// WithHome sets agcore's home directory, where "sqlite:" keeps its
// default database (see [OpenOptions.Home]).
func WithHome(dir string) OpenOption { return func(o *OpenOptions) { o.Home = dir } }

// Opened is a store [Open] opened: the [Store] itself (embedded, so an
// *Opened is a Store), how to name it in messages, and how to release it.
type Opened struct {
	Store
	// Description names the store without its secrets:
	// "sqlite:/home/me/.agcore/agcore.db", "file:/srv/sessions",
	// "memory:", "postgres://agcore:xxxxx@db/agcore".
	Description string
	// Durable reports whether the sessions outlive the process (false
	// for memory:).
	Durable bool
	// Closer releases the store; nil if there is nothing to release.
	Closer func() error
}

// Close releases the store. The store must not be used after.
func (o *Opened) Close() error {
	if o.Closer == nil {
		return nil
	}
	return o.Closer()
}

// String returns the description.
func (o *Opened) String() string { return o.Description }

// Errors of [Open] and [Check] (wrapped); test them with errors.Is.
var (
	// ErrUnknownStore means the URL names no registered kind of store.
	ErrUnknownStore = errors.New("session: unknown kind of store")
	// ErrNoStore means a store opened with [ReadOnly] does not exist:
	// nothing has been stored there.
	ErrNoStore = errors.New("nothing has been stored there")
)

var (
	openersMu sync.RWMutex
	openers   = map[string]Opener{}
)

// Register makes an Opener available to [Open] for URLs of scheme (the
// text before the first colon, in lower case: "postgres"). It panics if
// scheme is registered twice or o is nil, as database/sql.Register does.
// Store packages call it from init.
func Register(scheme string, o Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	if o == nil {
		panic("session: Register opener is nil")
	}
	scheme = strings.ToLower(scheme)
	if _, dup := openers[scheme]; dup {
		panic("session: Register called twice for scheme " + scheme)
	}
	openers[scheme] = o
}

// Schemes returns the registered schemes, sorted.
func Schemes() []string {
	openersMu.RLock()
	defer openersMu.RUnlock()
	out := make([]string, 0, len(openers))
	for s := range openers {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// DefaultURL is the store of an empty URL: agcore's SQLite database,
// $AGCORE_HOME/agcore.db.
const DefaultURL = "sqlite:"

// Redact returns url with its password, and the values of query
// parameters named like secrets (password, token, key, ...), replaced by
// "xxxxx"; a URL with an authority ("//") that does not parse becomes its
// scheme alone ("postgres://…"). Everything agcore prints about a store
// goes through it.
func Redact(url string) string { return redact.URL(url) }

// Check reports, without connecting or touching a file, whether url names
// a registered kind of store and is written as that kind wants. Its error
// is a phrase meant to follow the URL as the caller shows it ("--store
// %q %v"): "is not a store: give sqlite:PATH, file:DIR, ...". "" is the
// default store ([DefaultURL]).
func Check(url string) error {
	_, err := lookup(url)
	return err
}

// lookup returns the opener of url after checking url.
func lookup(url string) (Opener, error) {
	if url == "" {
		url = DefaultURL
	}
	scheme, _, _ := strings.Cut(url, ":")
	openersMu.RLock()
	o := openers[strings.ToLower(scheme)]
	openersMu.RUnlock()
	if o == nil {
		return nil, &openError{msg: "is not a store: give " + syntaxes() + " (the default is sqlite:$AGCORE_HOME/agcore.db)", err: ErrUnknownStore}
	}
	if err := o.Check(url); err != nil {
		return nil, &openError{msg: oneLine(redact.Text(err.Error(), redact.Secrets(url))), err: err}
	}
	return o, nil
}

// syntaxes lists the registered kinds of store as their URLs are written,
// as a phrase: "sqlite:PATH, file:DIR, memory:, postgres://… or redis://…".
func syntaxes() string {
	list := Syntaxes()
	switch len(list) {
	case 0:
		return "a store URL (no kind of store is registered: import session/stores)"
	case 1:
		return list[0]
	}
	return strings.Join(list[:len(list)-1], ", ") + " or " + list[len(list)-1]
}

// Syntaxes returns the registered kinds of store as their URLs are
// written (each [Opener]'s Syntax, once): "sqlite:PATH", "file:DIR",
// "memory:", "postgres://…", "redis://…" when session/stores is imported,
// in that order, then any other kind by name. Help texts, errors and
// completions list the stores from it (and the schemes from [Schemes]),
// so a store package registered from outside agcore appears in them.
func Syntaxes() []string {
	openersMu.RLock()
	var list []string
	for _, o := range openers {
		if s := o.Syntax(); !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	openersMu.RUnlock()
	order := []string{"sqlite:", "file:", "memory:", "postgres", "redis"} // the usual order, then the others
	rank := func(s string) int {
		for i, p := range order {
			if strings.HasPrefix(s, p) {
				return i
			}
		}
		return len(order)
	}
	slices.SortStableFunc(list, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return list
}

// Open opens the store url names, through the [Opener] registered for its
// scheme:
//
//	sqlite:PATH    a SQLite database file (session/sqlite); "sqlite:" or
//	               "" alone is $AGCORE_HOME/agcore.db
//	file:DIR       a JSON Lines log per session in DIR (session/filestore)
//	memory:        in memory, nothing kept (session/memstore)
//	postgres://…   a PostgreSQL database (session/postgres; postgresql://
//	               too; the password from the URL or PGPASSWORD)
//	redis://…      a Redis database (session/redis; rediss:// for TLS;
//	               the password from the URL or REDIS_PASSWORD)
//
// The schemes are there once their packages are imported; import
// session/stores for all of them. Close the store when done.
//
// Every error is one line that names the store by its [Redact]ed URL and
// holds none of its secrets, whatever the driver said; it wraps the
// driver's error, so errors.Is finds [ErrUnavailable] (the server could
// not be reached), [ErrNoStore], [ErrUnknownStore] and the driver's own.
func Open(ctx context.Context, url string, opts ...OpenOption) (*Opened, error) {
	o := OpenOptions{Logger: slog.Default()}
	for _, opt := range opts {
		opt(&o)
	}
	if url == "" {
		url = DefaultURL
	}
	name := Redact(url)
	op, err := lookup(url)
	if err != nil {
		return nil, &openError{msg: fmt.Sprintf("store %q %v", name, err), err: err}
	}
	st, err := op.Open(ctx, url, o)
	if err != nil {
		msg := oneLine(redact.Text(err.Error(), redact.Secrets(url)))
		return nil, &openError{msg: "store " + name + ": " + msg, err: err}
	}
	if st.Description == "" {
		st.Description = name
	} else {
		st.Description = Redact(st.Description)
	}
	return st, nil
}

// openError is an error of Open or Check: its text made safe to print,
// the error it comes from kept for errors.Is and errors.As.
type openError struct {
	msg string
	err error
}

func (e *openError) Error() string { return e.msg }
func (e *openError) Unwrap() error { return e.err }

// oneLine joins the lines of a (driver's) message with "; ".
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var parts []string
	for _, l := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
