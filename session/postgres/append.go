package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session/internal/stored"
)

// An append is one statement, run in its own implicit transaction: one
// round trip and one commit (pgx prepares it once per connection and
// keeps it in its statement cache). The statement makes the sessions row
// (a new session belongs to the appending owner) or, when it exists,
// locks and updates it: INSERT ... ON CONFLICT DO UPDATE waits for the
// lock of an append in flight and then reads the row as that append left
// it, so appends to one session are applied one after the other. The
// update is Totals.Add in SQL, under the check Totals.Check makes
// (appendWhere): a row that fails it is left as it was and the statement
// stores nothing. The CTEs after it read the row the update returned
// ("s"), so none runs when the row was left as it was: the turn's row
// (the unique index on (session_id, turn_id) refuses a turn already
// stored, which fails the whole statement: dupTurn) holding its
// messages, the first numbered from the row's count, and the state bag's
// changes. So an append writes two rows whatever the turn's size (schema
// version 3; one row per message before).

// appendSet is the update of an existing sessions row (s). The usage is
// summed in SQL (agcore_usage_add, schema.go) over every numeric field of
// the stored JSON and the turn's (llm.Usage is integers only) unless the
// stored text is the one the store last saw (@usage_was), whose sum with
// the turn's it computed already (@usage_now). The sum is a function, not
// a subquery, because the executor sets up a subquery's plan on every
// run of the statement, whether or not the CASE reaches it: that set-up
// alone cost an append more than the rest of the session row's update.
// The cost adds as float64 does in Go.
const appendSet = `updated_at = greatest(s.updated_at, @time), turns = s.turns + 1, messages = s.messages + @n,
	usage = CASE WHEN s.usage = @usage_was::text THEN @usage_now::text ELSE agcore_usage_add(s.usage, @usage::text) END,
	cost_usd = s.cost_usd + @cost,
	prefix = CASE WHEN @prefix::text IS NULL THEN s.prefix ELSE @prefix END,
	hashes = CASE WHEN @prefix::text IS NULL THEN s.hashes ELSE @hashes END,
	title = CASE WHEN coalesce(s.title, '') = '' THEN @title ELSE s.title END,
	model = CASE WHEN @model = '' THEN s.model ELSE @model END,
	compaction = CASE WHEN @compaction::bytea IS NULL THEN s.compaction ELSE @compaction END,
	upto = CASE WHEN @compaction::bytea IS NULL THEN s.upto ELSE @upto END`

// appendWhere is Totals.Check on an existing row: the appending owner's,
// and a compaction within the messages. The owner test is written so that
// it cannot be an index condition: as a plain owner = @owner, the generic
// plan pgx's prepared statement settles on finds the row of
// appendUpdate's WHERE id = @id through the index on (owner, updated_at,
// id), walking every entry of the owner's sessions, every version of
// them, instead of the one the primary key points to.
const appendWhere = `(s.owner = @owner) IS TRUE AND (@compaction::bytea IS NULL OR @upto <= s.messages + @n)`

// appendUpsert makes or updates the row; appendUpdate only updates it,
// for a session the store saw (cheaper) and for a turn that cannot start
// a session (its compaction reaches past its own messages).
const (
	appendUpsert = `WITH s AS (INSERT INTO agcore_sessions AS s (id, created_at, updated_at, incarnation, owner, title, model,
		turns, messages, usage, cost_usd, prefix, hashes, compaction, upto)
	VALUES (@id, @time, @time, @inc, @owner, @title, @model, 1, @n, @usage, @cost,
		@prefix, CASE WHEN @prefix::text IS NULL THEN NULL ELSE @hashes::bytea END,
		@compaction, CASE WHEN @compaction::bytea IS NULL THEN 0 ELSE @upto::integer END)
	ON CONFLICT (id) DO UPDATE SET ` + appendSet + `
	WHERE ` + appendWhere + `
	RETURNING s.turns, s.messages, s.usage)`
	appendUpdate = `WITH s AS (UPDATE agcore_sessions AS s SET ` + appendSet + `
	WHERE s.id = @id AND ` + appendWhere + `
	RETURNING s.turns, s.messages, s.usage)`
)

// appendTurn stores the turn with its messages; appendState changes the
// state bag (left out of a turn that changes none).
const (
	appendTurn = `,
t AS (INSERT INTO agcore_turns (session_id, seq, turn_id, time, messages, usage, cost_usd, first, msgs)
	SELECT @id, s.turns - 1, @turn_id, @time, @n, @usage, @cost, s.messages - @n, @msgs FROM s)`
	appendState = `,
d AS (DELETE FROM agcore_state WHERE session_id = @id AND key = ANY (@del::text[]) AND EXISTS (SELECT FROM s)),
st AS (INSERT INTO agcore_state (session_id, key, value) SELECT @id, k, v FROM s, unnest(@set_keys::text[], @set_vals::text[]) AS x (k, v)
	ON CONFLICT (session_id, key) DO UPDATE SET value = excluded.value)`
	appendEnd = `
SELECT s.turns, s.usage FROM s`
)

// The parameters of the append statements.
const (
	pID = iota
	pTime
	pOwner
	pTitle
	pModel
	pN
	pUsage
	pCost
	pPrefix
	pHashes
	pCompaction
	pUpto
	pTurnID
	pMsgs
	pUsageWas
	pUsageNow
	pInc
	pDel
	pSetKeys
	pSetVals
	nParams
)

var paramNames = [nParams]string{pID: "id", pTime: "time", pOwner: "owner", pTitle: "title", pModel: "model", pN: "n",
	pUsage: "usage", pCost: "cost", pPrefix: "prefix", pHashes: "hashes", pCompaction: "compaction", pUpto: "upto",
	pTurnID: "turn_id", pMsgs: "msgs", pUsageWas: "usage_was", pUsageNow: "usage_now", pInc: "inc", pDel: "del",
	pSetKeys: "set_keys", pSetVals: "set_vals"}

// statement is SQL whose @name parameters are numbered $1, $2, ... in the
// order they first appear; params[i] is the parameter $i+1.
type statement struct {
	sql    string
	params []int
}

var paramRE = regexp.MustCompile(`@[a-z_]+`)

func numbered(sql string) statement {
	index := map[string]int{}
	for i, n := range paramNames {
		index[n] = i
	}
	var st statement
	seen := map[string]string{}
	st.sql = paramRE.ReplaceAllStringFunc(sql, func(name string) string {
		if p, ok := seen[name]; ok {
			return p
		}
		i, ok := index[name[1:]]
		if !ok {
			panic("postgres: unknown append parameter " + name)
		}
		st.params = append(st.params, i)
		seen[name] = "$" + strconv.Itoa(len(st.params))
		return seen[name]
	})
	return st
}

// appendStatements[existing][state]: the upsert or the update, with or
// without the state bag's changes.
var appendStatements = [2][2]statement{
	{numbered(appendUpsert + appendTurn + appendEnd), numbered(appendUpsert + appendTurn + appendState + appendEnd)},
	{numbered(appendUpdate + appendTurn + appendEnd), numbered(appendUpdate + appendTurn + appendState + appendEnd)},
}

// seenUsage is a session's usage as the store last saw it stored: the
// column's text and its value.
type seenUsage struct {
	text  string
	usage llm.Usage
}

// appendTx appends tr in one statement. When the statement stored nothing
// (the row failed appendWhere), it reads why.
func (s *Store) appendTx(ctx context.Context, id string, tr *stored.Turn) error {
	var v [nParams]any
	turnUsage, err := json.Marshal(tr.Usage)
	if err != nil {
		return err
	}
	v[pID], v[pTime], v[pOwner], v[pTitle], v[pModel], v[pN] = id, tr.Time.UnixNano(), tr.Owner, tr.Title, tr.Model, len(tr.Messages)
	v[pUsage], v[pCost], v[pTurnID], v[pUpto] = string(turnUsage), tr.CostUSD, tr.ID, tr.Upto
	var prefix *string
	var hashes []byte
	if tr.Prefix != nil {
		p, err := json.Marshal(tr.Prefix.PrefixStats)
		if err != nil {
			return err
		}
		ps := string(p)
		prefix, hashes = &ps, stored.EncodeHashes(tr.Prefix.Hashes)
	}
	v[pPrefix], v[pHashes] = prefix, hashes
	var compaction []byte // NULL unless this turn replaces the view
	if tr.Compaction != nil {
		compaction = tr.Compaction
	}
	v[pCompaction] = compaction
	msgs := make([][]byte, len(tr.Messages))
	for i, m := range tr.Messages {
		msgs[i] = m
	}
	v[pMsgs] = msgs
	var was, now *string // NULL: sum in SQL
	var total llm.Usage
	seen, known := s.usage.Get(id)
	if known {
		total = seen.usage
		total.Add(tr.Usage)
		data, err := json.Marshal(total)
		if err != nil {
			return err
		}
		t, n := seen.text, string(data)
		was, now = &t, &n
	}
	v[pUsageWas], v[pUsageNow] = was, now
	v[pInc] = newIncarnation()
	state := 0
	if len(tr.Set)+len(tr.Del) > 0 {
		state = 1
		keys := make([]string, 0, len(tr.Set))
		vals := make([]string, 0, len(tr.Set))
		for k, val := range tr.Set {
			keys, vals = append(keys, k), append(vals, string(val))
		}
		del := tr.Del
		if del == nil {
			del = []string{}
		}
		v[pDel], v[pSetKeys], v[pSetVals] = del, keys, vals
	}
	// A session the store saw is updated (the cheaper statement; if it is
	// gone, the check below finds it and the retry makes it).
	existing := 0
	if known || tr.Compaction != nil && tr.Upto > len(tr.Messages) {
		existing = 1
	}
	st := appendStatements[existing][state]
	args := make([]any, len(st.params))
	for i, p := range st.params {
		args[i] = v[p]
	}
	var turns int
	var usage string
	err = s.pool.QueryRow(ctx, st.sql, args...).Scan(&turns, &usage)
	if err == nil {
		if now != nil && usage == *now {
			s.usage.Put(id, seenUsage{text: usage, usage: total})
		} else if turns == 1 && usage == string(turnUsage) {
			s.usage.Put(id, seenUsage{text: usage, usage: tr.Usage})
		} else if err := json.Unmarshal([]byte(usage), &total); err == nil {
			s.usage.Put(id, seenUsage{text: usage, usage: total})
		} else {
			s.usage.Drop(id)
		}
		return nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	// Nothing stored: another owner's session, a compaction past its
	// messages, or no session for appendUpdate. Read why (outside the
	// statement, so the row may have moved on: a check that now passes
	// tries again).
	var t stored.Totals
	var exists, dup bool
	err = s.pool.QueryRow(ctx, `SELECT owner, messages, EXISTS (SELECT 1 FROM agcore_turns WHERE session_id = $1 AND turn_id = $2)
		FROM agcore_sessions WHERE id = $1`, id, tr.ID).Scan(&t.Owner, &t.Messages, &dup)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		s.usage.Drop(id)
	case err != nil:
		return err
	default:
		exists = true
	}
	if dup && t.Owner == tr.Owner {
		return nil // stored meanwhile
	}
	if err := t.Check(tr, exists); err != nil {
		return refused{err}
	}
	return errMoved
}

// errMoved is an append that stored nothing because the session failed a
// check that it passes now: it is tried again.
var errMoved = errors.New("the session changed during the append")
