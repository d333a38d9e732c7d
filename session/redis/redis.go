package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agcore/agcore/internal/redact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

// Store is a session.Store in a Redis database. Make one with Open (or
// New over a client of your own) and release it with Close. It is safe
// for concurrent use by any number of goroutines and processes.
type Store struct {
	rdb    goredis.UniversalClient
	owned  bool
	prefix string
	cache  *stored.Cache // decoded messages of recently loaded sessions
	// versions: the totals of the sessions the store last appended to or
	// loaded, which the next append builds on (versions.go).
	versions versions
	readOnly bool // ReadOnly: New writes nothing
}

var _ session.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the prefix of every key the store uses (default
// "agcore:"), so that several stores can share one database.
func WithPrefix(p string) Option {
	return func(s *Store) { s.prefix = p }
}

// WithCacheBytes sets how much of the sessions it loads a Store keeps
// decoded in memory, in bytes of their storage JSON (default 32 MiB; 0
// keeps nothing). A Load of a session the store holds reads only the
// messages appended since it last read the session, whoever appended
// them.
func WithCacheBytes(n int64) Option {
	return func(s *Store) { s.cache = stored.NewCache(max(n, 0)) }
}

// ReadOnly opens the store for a program that only reads it: New writes
// nothing (no layout version, no migration), and a prefix under which
// nothing was ever stored is an error wrapping session.ErrNoStore.
func ReadOnly() Option {
	return func(s *Store) { s.readOnly = true }
}

// DefaultPrefix is the key prefix of a store without WithPrefix.
const DefaultPrefix = "agcore:"

// Open connects to the server a redis:// (or rediss://, unix://) URL
// names: redis://[user[:password]@]host:port/db, with go-redis's query
// options, and prefix=P for the key prefix (as WithPrefix; an option
// given to Open wins). A password not in the URL is taken from
// REDIS_PASSWORD. It checks the server answers and records (or checks)
// the key layout's version.
func Open(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	clientURL, prefix, hasPrefix, err := splitPrefix(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis: %s", redact.Text(err.Error(), redact.Secrets(rawURL)))
	}
	o, err := goredis.ParseURL(clientURL)
	if err != nil {
		return nil, fmt.Errorf("redis: %s", redact.Text(err.Error(), redact.Secrets(rawURL)))
	}
	if o.Password == "" {
		o.Password = envPassword()
	}
	if hasPrefix {
		opts = append([]Option{WithPrefix(prefix)}, opts...)
	}
	rdb := goredis.NewClient(o)
	s, err := New(ctx, rdb, opts...)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// New makes a store over a client the caller owns (Close leaves it open).
func New(ctx context.Context, rdb goredis.UniversalClient, opts ...Option) (*Store, error) {
	s := &Store{rdb: rdb, prefix: DefaultPrefix, cache: stored.NewCache(stored.DefaultCacheBytes)}
	for _, o := range opts {
		o(s)
	}
	if err := s.checkVersion(ctx); err != nil {
		return nil, fmt.Errorf("redis: open: %w", unavailable(err))
	}
	return s, nil
}

// Client returns the store's client.
func (s *Store) Client() goredis.UniversalClient { return s.rdb }

// Close closes the client if Open made it.
func (s *Store) Close() error {
	if s.owned {
		return s.rdb.Close()
	}
	return nil
}

// unavailable marks err with session.ErrUnavailable when the server could
// not be reached or the connection broke, or when the server is still
// loading its data after a restart (LOADING) or is a replica that lost its
// primary (MASTERDOWN).
func unavailable(err error) error {
	return stored.Unavailable(err, func(err error) bool {
		var re goredis.Error
		if errors.As(err, &re) {
			msg := re.Error()
			return strings.HasPrefix(msg, "LOADING") || strings.HasPrefix(msg, "MASTERDOWN") || strings.HasPrefix(msg, "TRYAGAIN")
		}
		return stored.ConnectionLost(err)
	})
}

// LayoutVersion is the version of the key layout this package writes,
// recorded under PREFIX "version". Version 2 (issue 22) added the owner,
// title, model and compaction fields of a session's totals and made the
// index's entries JSON with the session's metadata; Open migrates the
// index entries of version 1 (see migrate).
const LayoutVersion = 2

// ErrLayoutTooNew is returned (wrapped) by Open when the keys were written
// by a newer agcore than this one.
var ErrLayoutTooNew = errors.New("redis: stored key layout is newer than this agcore supports")

func (s *Store) checkVersion(ctx context.Context) error {
	key := s.prefix + "version"
	if !s.readOnly {
		if err := s.rdb.SetNX(ctx, key, LayoutVersion, 0).Err(); err != nil {
			return err
		}
	}
	v, err := s.rdb.Get(ctx, key).Int()
	if s.readOnly && errors.Is(err, goredis.Nil) {
		return fmt.Errorf("no agcore keys under the prefix %q in this database (%w)", s.prefix, session.ErrNoStore)
	}
	if err != nil {
		return err
	}
	if v > LayoutVersion {
		return fmt.Errorf("%w: version %d, this agcore knows up to %d; upgrade agcore", ErrLayoutTooNew, v, LayoutVersion)
	}
	if v < LayoutVersion && !s.readOnly { // a reader reads both layouts (parseIndex)
		return s.migrate(ctx)
	}
	return nil
}

// migrateEntryScript replaces a version 1 index entry, if it is still the
// one the migration read, and records the session's title.
// KEYS: index, totals. ARGV: id, old entry, new entry, title.
var migrateEntryScript = goredis.NewScript(`
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'title', ARGV[4]) end
return 1`)

// setVersionScript raises the layout version to ARGV[1], never lowering it.
var setVersionScript = goredis.NewScript(`
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if v < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1`)

// migrate takes the keys of layout version 1 (the releases before issue
// 22) forward: each index entry ("updated created turns messages")
// becomes the JSON entry of version 2, with the session's usage and cost
// from its totals and its title derived from its first user message
// (also recorded in the totals); its owner is the single-user owner "".
// Each entry is replaced by a script only if it is still the one read, so
// stores opening at once, and appends of this version meanwhile, agree;
// the version is raised last. Entries a process of the previous version
// writes after that are still read (parseIndex reads both forms).
func (s *Store) migrate(ctx context.Context) error {
	index := s.prefix + "index"
	all, err := s.rdb.HGetAll(ctx, index).Result()
	if err != nil {
		return err
	}
	for id, v := range all {
		if strings.HasPrefix(v, "{") || session.ValidateID(id) != nil {
			continue
		}
		info, err := parseIndex(id, v)
		if err != nil {
			return err
		}
		k := s.keys(id)
		vals, err := s.rdb.HMGet(ctx, k[0], "usage", "cost").Result()
		if err != nil {
			return err
		}
		if u, ok := vals[0].(string); ok {
			_ = json.Unmarshal([]byte(u), &info.Usage)
		}
		if c, ok := vals[1].(string); ok {
			info.CostUSD, _ = strconv.ParseFloat(c, 64)
		}
		if info.Title, err = s.storedTitle(ctx, k[1]); err != nil {
			return fmt.Errorf("deriving the title of session %q: %w", id, err)
		}
		if err := migrateEntryScript.Run(ctx, s.rdb, []string{index, k[0]}, id, v, indexValue(info), info.Title).Err(); err != nil {
			return err
		}
	}
	return setVersionScript.Run(ctx, s.rdb, []string{s.prefix + "version"}, LayoutVersion).Err()
}

// storedTitle reads the messages list at key in order until a message has
// a title.
func (s *Store) storedTitle(ctx context.Context, key string) (string, error) {
	const batch = 16
	for from := int64(0); ; from += batch {
		vals, err := s.rdb.LRange(ctx, key, from, from+batch-1).Result()
		if err != nil {
			return "", err
		}
		raws := make([]json.RawMessage, len(vals))
		for i, v := range vals {
			raws[i] = json.RawMessage(v)
		}
		title, err := stored.TitleOfStored(raws)
		if err != nil || title != "" || len(vals) < batch {
			return title, err
		}
	}
}

// The keys of session id.
func (s *Store) keys(id string) []string {
	return []string{
		s.prefix + "s:" + id,  // hash: the totals
		s.prefix + "m:" + id,  // list: the messages' storage JSON
		s.prefix + "t:" + id,  // hash: turn id -> turn number
		s.prefix + "st:" + id, // hash: the state bag
		s.prefix + "index",    // hash: session id -> its metadata (indexEntry JSON)
	}
}

func check(ctx context.Context, id string) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("redis: %w", err)
	}
	return ctx.Err()
}

func newIncarnation() string {
	return strconv.FormatUint(rand.Uint64()|1, 36)
}

// indexEntry is a session's entry in the index: its listing metadata.
type indexEntry struct {
	Updated  int64     `json:"u"`
	Created  int64     `json:"c"`
	Turns    int       `json:"n"`
	Messages int       `json:"m"`
	Owner    string    `json:"o,omitempty"`
	Title    string    `json:"t,omitempty"`
	Model    string    `json:"model,omitempty"`
	Usage    llm.Usage `json:"usage"`
	CostUSD  float64   `json:"cost,omitempty"`
}

// indexValue is info's index entry.
func indexValue(info session.Info) string {
	data, err := json.Marshal(indexEntry{Updated: info.UpdatedAt.UnixNano(), Created: info.CreatedAt.UnixNano(),
		Turns: info.Turns, Messages: info.Messages, Owner: info.Owner, Title: info.Title, Model: info.Model,
		Usage: info.Usage, CostUSD: info.CostUSD})
	if err != nil {
		panic(err) // cannot happen: strings and numbers always encode
	}
	return string(data)
}

// parseIndex reads session id's index entry: JSON (layout version 2), or
// "updated created turns messages" (version 1, which a process of the
// previous version may still write).
func parseIndex(id, v string) (session.Info, error) {
	if strings.HasPrefix(v, "{") {
		var e indexEntry
		if err := json.Unmarshal([]byte(v), &e); err != nil {
			return session.Info{}, fmt.Errorf("index entry of %q: %w", id, err)
		}
		return session.Info{ID: id, Owner: e.Owner, Title: e.Title, Model: e.Model, Messages: e.Messages, Turns: e.Turns,
			Usage: e.Usage, CostUSD: e.CostUSD, CreatedAt: time.Unix(0, e.Created).UTC(), UpdatedAt: time.Unix(0, e.Updated).UTC()}, nil
	}
	var updated, created int64
	var turns, msgs int
	if _, err := fmt.Sscanf(v, "%d %d %d %d", &updated, &created, &turns, &msgs); err != nil {
		return session.Info{}, fmt.Errorf("index entry of %q: %w", id, err)
	}
	return session.Info{ID: id, Messages: msgs, Turns: turns,
		CreatedAt: time.Unix(0, created).UTC(), UpdatedAt: time.Unix(0, updated).UTC()}, nil
}

var createScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'inc', ARGV[1], 'created', ARGV[2], 'updated', ARGV[2], 'turns', 0, 'messages', 0, 'usage', '{}', 'cost', '0', 'title', '')
redis.call('HSET', KEYS[5], ARGV[3], ARGV[4])
return 1`)

// Create makes an empty session created now; ErrExists if id is taken.
func (s *Store) Create(ctx context.Context, id string) (*session.Session, error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	now := time.Now().UTC().Round(0)
	inc := newIncarnation()
	n, err := createScript.Run(ctx, s.rdb, s.keys(id), inc, now.UnixNano(), id,
		indexValue(session.Info{CreatedAt: now, UpdatedAt: now})).Int()
	if err != nil {
		return nil, fmt.Errorf("redis: create %q: %w", id, unavailable(err))
	}
	if n == 0 {
		return nil, fmt.Errorf("redis: create %q: %w", id, session.ErrExists)
	}
	t := stored.Totals{Created: now, Updated: now}
	s.versions.put(id, version{t: t, inc: inc, exists: true})
	sess := t.Session(id, nil)
	sess.SetMessageHashes(nil, nil)
	return sess, nil
}

// totalsFields are the fields of a session's totals hash Load reads, in
// the order parseTotals takes them; appendFields those Append reads (not
// the request-hash statistic nor the compaction view, which it replaces
// or keeps).
var (
	totalsFields = []string{"inc", "created", "updated", "turns", "messages", "usage", "cost", "owner", "title", "model", "upto",
		"prefix", "hashes", "compaction"}
	appendFields = totalsFields[:11]
)

// parseTotals decodes the totals hash's fields (in totalsFields order, as
// many as vals holds); ok is false when the session does not exist.
func parseTotals(vals []any) (t stored.Totals, inc string, ok bool, err error) {
	str := func(i int) string {
		if i < len(vals) {
			if v, ok := vals[i].(string); ok {
				return v
			}
		}
		return ""
	}
	if vals[0] == nil {
		return t, "", false, nil
	}
	inc = str(0)
	created, err1 := strconv.ParseInt(str(1), 10, 64)
	updated, err2 := strconv.ParseInt(str(2), 10, 64)
	turns, err3 := strconv.Atoi(str(3))
	msgs, err4 := strconv.Atoi(str(4))
	cost, err5 := strconv.ParseFloat(str(6), 64)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return t, "", false, fmt.Errorf("stored totals: %w", err)
	}
	t.Created, t.Updated = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
	t.Turns, t.Messages, t.CostUSD = turns, msgs, cost
	if err := json.Unmarshal([]byte(str(5)), &t.Usage); err != nil {
		return t, "", false, fmt.Errorf("stored usage: %w", err)
	}
	t.Owner, t.Title, t.Model = str(7), str(8), str(9)
	if u := str(10); u != "" {
		if t.Upto, err = strconv.Atoi(u); err != nil {
			return t, "", false, fmt.Errorf("stored compaction upto: %w", err)
		}
	}
	if p := str(11); p != "" {
		if err := json.Unmarshal([]byte(p), &t.Prefix); err != nil {
			return t, "", false, fmt.Errorf("stored prefix statistic: %w", err)
		}
		if t.Hashes, err = stored.DecodeHashes([]byte(str(12))); err != nil {
			return t, "", false, err
		}
	}
	if c := str(13); c != "" {
		t.Compaction = []byte(c)
	}
	return t, inc, true, nil
}

// Load reads the session in one MULTI/EXEC block, which Redis runs
// without anything between its commands, so it sees whole turns only;
// ErrNotFound if there is none.
func (s *Store) Load(ctx context.Context, id string) (*session.Session, error) {
	return s.loadErr(ctx, id, false)
}

// LoadView reads the session as Load does, but only the messages from its
// compaction's Upto on (LRANGE from upto), with Base set to Upto; see
// session.Store.
func (s *Store) LoadView(ctx context.Context, id string) (*session.Session, error) {
	return s.loadErr(ctx, id, true)
}

func (s *Store) loadErr(ctx context.Context, id string, view bool) (*session.Session, error) {
	if err := check(ctx, id); err != nil {
		return nil, err
	}
	sess, err := s.load(ctx, id, view)
	if err != nil {
		return nil, fmt.Errorf("redis: load %q: %w", id, unavailable(err))
	}
	return sess, nil
}

func (s *Store) load(ctx context.Context, id string, view bool) (*session.Session, error) {
	k := s.keys(id)
	// The incarnation (and for a view its upto) first, to know what the
	// cache may serve and where to start reading; the MULTI block then
	// checks they are still the ones whose messages it reads.
	pre, err := s.rdb.HMGet(ctx, k[0], "inc", "upto").Result()
	if err != nil {
		return nil, err
	}
	incNow, ok := pre[0].(string)
	if !ok {
		return nil, session.ErrNotFound
	}
	uptoNow, _ := pre[1].(string)
	from := 0
	if view && uptoNow != "" {
		if from, err = strconv.Atoi(uptoNow); err != nil {
			return nil, fmt.Errorf("stored compaction upto: %w", err)
		}
	}
	inc := incarnationKey(incNow)
	base, baseHashes, baseBytes := s.cache.GetFrom(id, inc, from)
	var tot *goredis.SliceCmd
	var msgs *goredis.StringSliceCmd
	var state *goredis.MapStringStringCmd
	if _, err := s.rdb.TxPipelined(ctx, func(p goredis.Pipeliner) error {
		tot = p.HMGet(ctx, k[0], totalsFields...)
		msgs = p.LRange(ctx, k[1], int64(from+len(base)), -1)
		state = p.HGetAll(ctx, k[3])
		return nil
	}); err != nil {
		return nil, err
	}
	t, incRead, ok, err := parseTotals(tot.Val())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, session.ErrNotFound
	}
	if uptoRead, _ := tot.Val()[10].(string); incRead != incNow || view && uptoRead != uptoNow {
		// Deleted and made again, or compacted, in between: read again.
		if incRead != incNow {
			s.cache.Drop(id)
		}
		return s.load(ctx, id, view)
	}
	if from > t.Messages {
		return nil, fmt.Errorf("stored compaction upto %d is past the %d messages", from, t.Messages)
	}
	s.versions.put(id, version{t: t, inc: incRead, exists: true})
	for key, v := range state.Val() {
		if t.State == nil {
			t.State = make(map[string]json.RawMessage)
		}
		t.State[key] = json.RawMessage(v)
	}
	vals := msgs.Val()
	if n := t.Messages - from; len(base) > n { // the cache read a later state than this
		base, baseHashes, baseBytes = base[:n], baseHashes[:n], 0
	}
	if from+len(base)+len(vals) != t.Messages {
		return nil, fmt.Errorf("%d messages stored, %d counted", from+len(base)+len(vals), t.Messages)
	}
	raws := make([]json.RawMessage, len(vals))
	var moreBytes int64
	for i, v := range vals {
		raws[i] = json.RawMessage(v)
		moreBytes += int64(len(v))
	}
	more, err := stored.DecodeMessages(raws)
	if err != nil {
		return nil, err
	}
	all, hashes := s.cache.PutFrom(id, inc, from, base, baseHashes, baseBytes, more, stored.Hashes(raws), moreBytes)
	sess, err := t.ViewSession(id, stored.CloneMessages(all), from)
	if err != nil {
		return nil, err
	}
	sess.SetMessageHashes(all, hashes)
	return sess, nil
}

// incarnationKey turns a stored incarnation into the cache's key.
func incarnationKey(inc string) int64 {
	n, err := strconv.ParseUint(inc, 36, 64)
	if err != nil {
		return 0
	}
	return int64(n)
}

// appendScript applies one turn, all or nothing, if the session is still
// at the version the caller built it on (its incarnation and turn count),
// belongs to the appending owner, and the turn is not already stored. It
// returns 1 when it stored the turn, 0 when the turn was already stored,
// -2 when the session is another owner's, and, when the session moved on
// (or is not the one the caller thought), -1 followed by the totals
// fields Append reads (appendFields, nil when the session does not
// exist), so the caller can build the turn again without reading first.
// The turn carries only the totals fields that change (all of them for a
// new session): the version check makes the others the ones it was built
// on.
//
// KEYS: totals, messages, turns, state, index.
// ARGV: turn id, expected inc (empty for a new session), expected turns,
// owner, session id, index value, nfields, nset, ndel, then nfields
// field/value pairs of the totals, nset key/value pairs of the state,
// ndel state keys, and the messages.
var appendScript = goredis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'inc', 'owner', 'turns')
local inc = cur[1] or ''
if inc ~= '' and (cur[2] or '') ~= ARGV[4] then return -2 end
if inc ~= ARGV[2] or (cur[3] or '0') ~= ARGV[3] then
	if redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then return 0 end
	local r = redis.call('HMGET', KEYS[1], ` + luaFields + `)
	table.insert(r, 1, -1)
	return r
end
if redis.call('HSETNX', KEYS[3], ARGV[1], ARGV[3]) == 0 then return 0 end
local nf, nset, ndel = tonumber(ARGV[7]), tonumber(ARGV[8]), tonumber(ARGV[9])
local i = 10 + 2 * nf
redis.call('HSET', KEYS[1], unpack(ARGV, 10, i - 1))
redis.call('HSET', KEYS[5], ARGV[5], ARGV[6])
for _ = 1, nset do redis.call('HSET', KEYS[4], ARGV[i], ARGV[i+1]); i = i + 2 end
for _ = 1, ndel do redis.call('HDEL', KEYS[4], ARGV[i]); i = i + 1 end
local n = #ARGV
while i <= n do
	local j = math.min(n, i + 999)
	redis.call('RPUSH', KEYS[2], unpack(ARGV, i, j))
	i = j + 1
end
return 1`)

// luaFields is appendFields as the arguments of a Lua call.
var luaFields = "'" + strings.Join(appendFields, "', '") + "'"

// Append adds the turn in one script, which Redis runs atomically,
// creating the session if needed. The turn is built on the totals the
// store last saw of the session (its last append or load of it, else
// none: a new session); the script stores it only if the session is still
// at that version (same incarnation, same turn count) and otherwise hands
// back the session's current totals, on which the turn is built again, so
// concurrent appends to one session are applied one at a time, each
// whole, none lost. An append on a version the store saw last is one
// round trip. A turn ID the session already holds makes it a no-op,
// checked in the script, so a command the client resends after a lost
// connection never stores a turn twice. An append to another owner's
// session fails with session.ErrOwner, checked in the script too.
func (s *Store) Append(ctx context.Context, id string, turn session.Turn) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("redis: append: %w", err)
	}
	tr, err := stored.EncodeTurn(ctx, turn, time.Now())
	if err != nil {
		return fmt.Errorf("redis: append to %q: %w", id, err)
	}
	base := s.versions.get(id)
	for attempt := 0; ; attempt++ {
		next, done, err := s.appendOnce(ctx, id, tr, base)
		if err != nil {
			s.versions.drop(id)
			return fmt.Errorf("redis: append to %q: %w", id, unavailable(err))
		}
		if done {
			return nil
		}
		base = next
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("redis: append to %q: %w", id, err)
		}
		if attempt > 8 { // heavy contention: let the others through
			time.Sleep(time.Duration(rand.IntN(1000*min(attempt, 50))) * time.Microsecond)
		}
	}
}

// appendOnce builds the turn on base and tries the script once; done is
// false when the session was not at base's version, and next is then the
// version the script found.
func (s *Store) appendOnce(ctx context.Context, id string, tr *stored.Turn, base version) (next version, done bool, err error) {
	k := s.keys(id)
	t := base.t
	if err := t.Check(tr, base.exists); err != nil {
		if base.read {
			return version{}, false, err
		}
		// base may be out of date: check against the session as stored.
		var tot *goredis.SliceCmd
		var dup *goredis.BoolCmd
		if _, err := s.rdb.Pipelined(ctx, func(p goredis.Pipeliner) error {
			tot = p.HMGet(ctx, k[0], appendFields...)
			dup = p.HExists(ctx, k[2], tr.ID)
			return nil
		}); err != nil {
			return version{}, false, err
		}
		if base, err = parseVersion(tot.Val()); err != nil {
			return version{}, false, err
		}
		if dup.Val() && base.exists && base.t.Owner == tr.Owner {
			return version{}, true, nil
		}
		if err := base.t.Check(tr, base.exists); err != nil {
			return version{}, false, err
		}
		t = base.t
	}
	expInc, newInc := base.inc, base.inc
	if !base.exists {
		expInc, newInc = "", newIncarnation()
	}
	expTurns := t.Turns
	was := t
	t.Add(tr)
	fields := make([]any, 0, 30)
	if !base.exists {
		fields = append(fields, "inc", newInc, "created", t.Created.UnixNano(), "owner", t.Owner)
	}
	if !base.exists || !t.Updated.Equal(was.Updated) {
		fields = append(fields, "updated", t.Updated.UnixNano())
	}
	fields = append(fields, "turns", t.Turns, "messages", t.Messages)
	if !base.exists || t.Usage != was.Usage {
		usage, err := json.Marshal(t.Usage)
		if err != nil {
			return version{}, false, err
		}
		fields = append(fields, "usage", usage)
	}
	if !base.exists || t.CostUSD != was.CostUSD {
		fields = append(fields, "cost", strconv.FormatFloat(t.CostUSD, 'g', -1, 64))
	}
	if !base.exists || t.Title != was.Title {
		fields = append(fields, "title", t.Title)
	}
	if !base.exists || t.Model != was.Model {
		fields = append(fields, "model", t.Model)
	}
	if tr.Prefix != nil {
		p, err := json.Marshal(tr.Prefix.PrefixStats)
		if err != nil {
			return version{}, false, err
		}
		fields = append(fields, "prefix", p, "hashes", stored.EncodeHashes(tr.Prefix.Hashes))
	}
	if tr.Compaction != nil {
		fields = append(fields, "compaction", tr.Compaction, "upto", tr.Upto)
	}
	args := make([]any, 0, 9+len(fields)+2*len(tr.Set)+len(tr.Del)+len(tr.Messages))
	args = append(args, tr.ID, expInc, strconv.Itoa(expTurns), tr.Owner, id, indexValue(t.Info(id)),
		len(fields)/2, len(tr.Set), len(tr.Del))
	args = append(args, fields...)
	for key, v := range tr.Set {
		args = append(args, key, []byte(v))
	}
	for _, key := range tr.Del {
		args = append(args, key)
	}
	for _, m := range tr.Messages {
		args = append(args, []byte(m))
	}
	res, err := appendScript.Run(ctx, s.rdb, k, args...).Result()
	if err != nil {
		return version{}, false, err
	}
	switch r := res.(type) {
	case int64:
		switch r {
		case 1:
			s.versions.put(id, version{t: t, inc: newInc, exists: true})
			return version{}, true, nil
		case 0: // already stored
			s.versions.drop(id)
			return version{}, true, nil
		case -2:
			s.versions.drop(id)
			return version{}, false, fmt.Errorf("%w", session.ErrOwner)
		}
	case []any:
		if len(r) == len(appendFields)+1 && r[0] == int64(-1) {
			next, err := parseVersion(r[1:])
			if err != nil {
				return version{}, false, err
			}
			next.read = true
			return next, false, nil
		}
	}
	return version{}, false, fmt.Errorf("unexpected reply from the append script: %v", res)
}

// List returns one page of session summaries, newest UpdatedAt first, ties
// by ID descending. It reads the whole index (one hash of every session's
// metadata, no message), so it costs time in proportion to the number of
// sessions.
func (s *Store) List(ctx context.Context, opts session.ListOptions) (session.Page, error) {
	if _, err := stored.ParseCursor(opts.Cursor); err != nil {
		return session.Page{}, fmt.Errorf("redis: list: %w", unavailable(err))
	}
	all, err := s.rdb.HGetAll(ctx, s.prefix+"index").Result()
	if err != nil {
		return session.Page{}, fmt.Errorf("redis: list: %w", unavailable(err))
	}
	infos := make([]session.Info, 0, len(all))
	for id, v := range all {
		info, err := parseIndex(id, v)
		if err != nil {
			return session.Page{}, fmt.Errorf("redis: list: %w", err)
		}
		if stored.Listed(info.Owner, opts) {
			infos = append(infos, info)
		}
	}
	page, err := stored.Page(infos, opts)
	if err != nil {
		return session.Page{}, fmt.Errorf("redis: list: %w", unavailable(err))
	}
	return page, nil
}

var deleteScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('HDEL', KEYS[5], ARGV[1])
return 1`)

// Delete removes the session's keys atomically; ErrNotFound if there is
// none.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := check(ctx, id); err != nil {
		return err
	}
	n, err := deleteScript.Run(ctx, s.rdb, s.keys(id), id).Int()
	if err != nil {
		return fmt.Errorf("redis: delete %q: %w", id, unavailable(err))
	}
	if n == 0 {
		return fmt.Errorf("redis: delete %q: %w", id, session.ErrNotFound)
	}
	s.cache.Drop(id)
	s.versions.drop(id)
	return nil
}
