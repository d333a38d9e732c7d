package sqlite_test

// Durability beyond process death, for the part the store controls.
//
// The SIGKILL test (TestCrashConsistency) cannot see a lost page cache,
// and modernc.org/sqlite takes no Go VFS for writes, so SQLite's own fsyncs
// cannot be intercepted the way the file store's are (see package
// filestore's power-loss tests). What decides durability and atomicity
// here is in three places, and each has a test:
//
//   - Append is one transaction, rolled back on any failure:
//     TestFailedAppendRollsBack makes SQLite fail an Append inside its
//     transaction, after rows were written.
//   - The writer connection runs synchronous=FULL in WAL mode, so a commit
//     fsyncs the WAL before Append returns: TestWriterDurabilitySettings
//     reads both settings on that very connection. That SQLite then really
//     fsyncs (and the disk honours it) is SQLite's promise, not tested here.
//   - What a commit leaves in the database and WAL files is enough, and
//     every prefix of it holds whole turns: TestWALPrefixesHoldWholeTurns
//     opens copies of the files as a power loss could leave them.

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	msqlite "modernc.org/sqlite"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/sessiontest"
	"github.com/agcore/agcore/session/sqlite"
)

// powerTurn is the turn tag: n messages of tool-using exchanges (the first
// names the tag), one input token, the state key "last" set to the tag,
// and request hashes. A tag starting with "big" carries about 40 KB more,
// which SQLite stores in overflow pages.
func powerTurn(tag string, n int) session.Turn {
	msgs := sessiontest.Conversation(tag, n)
	if strings.HasPrefix(tag, "big") {
		msgs[n-1] = llm.AssistantText(msgs[n-1].Text() + strings.Repeat(" padding", 5000))
	}
	return session.Turn{ID: tag, Messages: msgs, Usage: llm.Usage{InputTokens: 1},
		State:  map[string]json.RawMessage{"last": json.RawMessage(fmt.Sprintf("%q", tag))},
		Hashes: []uint64{1, uint64(len(tag))}, Prefix: session.PrefixStats{Requests: 1}}
}

// rowCounts returns how many rows each table holds for the session.
func rowCounts(t *testing.T, db interface {
	QueryRow(string, ...any) *sql.Row
}, id string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for table, col := range map[string]string{"sessions": "id", "turns": "session_id", "messages": "session_id", "state": "session_id"} {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM `+table+` WHERE `+col+` = ?`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[table] = n
	}
	return counts
}

// TestFailedAppendRollsBack makes an Append fail inside its transaction,
// after some of its rows are written, by a trigger that a second handle on
// the database installs (RAISE(ABORT) undoes only the statement that fired
// it; the rows of the earlier statements stay in the transaction until the
// store rolls it back). The session must be exactly as before, row for row,
// and the same turn must store whole once the trigger is gone. This proves
// the rollback; replacing tx.Rollback with tx.Commit in Append's failure
// path fails every case. (Encoding errors, which the contract suite
// covers, fail before the transaction begins and so cannot prove it.)
func TestFailedAppendRollsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		id      string
		setup   int    // turns appended before
		msgs    int    // messages of the failing turn
		trigger string // when SQLite aborts the append
	}{
		{"at the third message of the turn", "s", 2, 4,
			`BEFORE INSERT ON messages WHEN NEW.session_id = 's' AND NEW.seq = 10`},
		{"at message 250 of 300, in the second insert statement", "s", 2, 300,
			`BEFORE INSERT ON messages WHEN NEW.session_id = 's' AND NEW.seq = 257`},
		{"at the state, after all messages", "s", 2, 4,
			`BEFORE INSERT ON state WHEN NEW.session_id = 's'`},
		{"at the session's totals, the last statement", "s", 2, 4,
			`BEFORE UPDATE ON sessions WHEN NEW.id = 's'`},
		{"at a new session's row, the last statement", "new", 0, 4,
			`BEFORE INSERT ON sessions WHEN NEW.id = 'new'`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			path := filepath.Join(t.TempDir(), "s.db")
			s := open(t, path)
			for i := range tc.setup {
				if err := s.Append(ctx, tc.id, powerTurn(fmt.Sprint("t", i), 4)); err != nil {
					t.Fatal(err)
				}
			}
			before, loadErr := s.Load(ctx, tc.id)
			listBefore, _ := s.List(ctx, session.ListOptions{})
			raw := rawDB(t, path)
			rowsBefore := rowCounts(t, raw, tc.id)
			if _, err := raw.Exec(`CREATE TRIGGER inject ` + tc.trigger + ` BEGIN SELECT RAISE(ABORT, 'injected'); END`); err != nil {
				t.Fatal(err)
			}

			turn := powerTurn("failing", tc.msgs)
			err := s.Append(ctx, tc.id, turn)
			if err == nil || !strings.Contains(err.Error(), "injected") {
				t.Fatalf("Append = %v, want the injected failure", err)
			}
			if rows := rowCounts(t, raw, tc.id); !maps.Equal(rows, rowsBefore) {
				t.Errorf("rows of the session after the failed append: %v, before: %v", rows, rowsBefore)
			}
			after, err := s.Load(ctx, tc.id)
			switch {
			case loadErr != nil: // a new session: there was none, and there is none
				if !errors.Is(loadErr, session.ErrNotFound) || !errors.Is(err, session.ErrNotFound) {
					t.Fatalf("Load before the failed append: %v; after it: %v; want ErrNotFound both times", loadErr, err)
				}
			case err != nil:
				t.Fatalf("Load after the failed append: %v", err)
			case !reflect.DeepEqual(after, before):
				t.Errorf("the session changed: %d turns, %d messages, state %s; before %d, %d, %s",
					after.Turns, len(after.Messages), after.State["last"], before.Turns, len(before.Messages), before.State["last"])
			}
			if listAfter, _ := s.List(ctx, session.ListOptions{}); !reflect.DeepEqual(listAfter, listBefore) {
				t.Errorf("List after the failed append: %+v, before: %+v", listAfter, listBefore)
			}

			// The turn was not half-stored: once the fault is gone, it
			// stores whole (a leftover turns row would make it a no-op).
			if _, err := raw.Exec(`DROP TRIGGER inject`); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(ctx, tc.id, turn); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(ctx, tc.id, powerTurn("next", 4)); err != nil {
				t.Fatal(err)
			}
			got, err := s.Load(ctx, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Turns != tc.setup+2 || len(got.Messages) != 4*tc.setup+tc.msgs+4 || got.Usage.InputTokens != tc.setup+2 ||
				string(got.State["last"]) != `"next"` {
				t.Errorf("after the retry and one more turn: %d turns, %d messages, %d input tokens, state %s; want %d, %d, %d, \"next\"",
					got.Turns, len(got.Messages), got.Usage.InputTokens, got.State["last"], tc.setup+2, 4*tc.setup+tc.msgs+4, tc.setup+2)
			}
		})
	}
}

// dsns records the name of every connection the "sqlite" driver opens
// from the time a test first calls recordDSNs.
var dsns struct {
	once sync.Once
	mu   sync.Mutex
	list []string
}

func recordDSNs() {
	dsns.once.Do(func() {
		msqlite.RegisterConnectionHook(func(_ msqlite.ExecQuerierContext, dsn string) error {
			dsns.mu.Lock()
			defer dsns.mu.Unlock()
			dsns.list = append(dsns.list, dsn)
			return nil
		})
	})
}

var fullSyncPragma = regexp.MustCompile(`(?i)^\s*synchronous\s*[(=]\s*(full|extra|2|3)\b`)

// asksForFullSync reports whether a connection name's query sets
// synchronous to FULL or EXTRA, with the driver's _synchronous (or _sync)
// key or a _pragma.
func asksForFullSync(q url.Values) bool {
	for _, key := range []string{"_synchronous", "_sync"} {
		for _, v := range q[key] {
			switch strings.ToUpper(v) {
			case "FULL", "2", "EXTRA", "3":
				return true
			}
		}
	}
	return slices.ContainsFunc(q["_pragma"], fullSyncPragma.MatchString)
}

// TestWriterDurabilitySettings reads, on the store's own writer connection
// (the one every Append commits on), the settings that make a commit
// durable: journal_mode=wal, and synchronous=FULL (2), under which a
// commit fsyncs the WAL before it returns. NORMAL (1) would not, and could
// lose the last turns on power loss; OFF (0) never fsyncs. A DSN that set
// either fails this test. This build of SQLite defaults to FULL in WAL
// mode, so a DSN that left the setting out would still read 2; the test
// therefore also checks, through a driver connection hook, that the
// writer's connection name asks for FULL itself, so that durability does
// not rest on a compile-time default of the driver.
func TestWriterDurabilitySettings(t *testing.T) {
	// Not parallel: recordDSNs registers a driver-wide connection hook,
	// which must not happen while another test opens a connection.
	recordDSNs()
	path := filepath.Join(t.TempDir(), "s.db")
	s := open(t, path)
	w := sqlite.WriterDB(s)
	check := func(when string) {
		t.Helper()
		var sync int
		var mode string
		if err := w.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil || sync != 2 {
			t.Errorf("%s: the writer's synchronous = %d, %v; want 2 (FULL)", when, sync, err)
		}
		if err := w.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
			t.Errorf("%s: the writer's journal_mode = %q, %v; want wal", when, mode, err)
		}
		if st := w.Stats(); st.MaxOpenConnections != 1 {
			t.Errorf("%s: the writer may open %d connections, want 1", when, st.MaxOpenConnections)
		}
	}
	check("after Open")
	if err := s.Append(t.Context(), "x", powerTurn("t0", 4)); err != nil {
		t.Fatal(err)
	}
	check("after an Append")

	// The connections of this store: the writer is the one that is not
	// query-only.
	dsns.mu.Lock()
	var writers []url.Values
	for _, dsn := range dsns.list {
		u, err := url.Parse(dsn)
		if err != nil || u.Path != filepath.ToSlash(s.Path()) {
			continue
		}
		if q := u.Query(); q.Get("_query_only") == "" {
			writers = append(writers, q)
		}
	}
	dsns.mu.Unlock()
	if len(writers) == 0 {
		t.Fatal("no writer connection of the store was seen")
	}
	for _, q := range writers {
		if !asksForFullSync(q) {
			t.Errorf("the writer's connection does not ask for synchronous=FULL or EXTRA itself (%v)", q)
		}
	}
}

var firstTag = regexp.MustCompile(`^\[(\S+) 0\] `)

// sessionTags opens the store on the database at path and returns each
// session's turn tags (a session without turns is an empty slice). It
// fails if a session is not whole turns that agree with its totals, or the
// database does not pass SQLite's quick_check.
func sessionTags(ctx context.Context, path string, ids []string) (_ map[string][]string, err error) {
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, s.Close()) }()
	got := map[string][]string{}
	for _, id := range ids {
		sess, err := s.Load(ctx, id)
		if errors.Is(err, session.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		tags := []string{}
		for i := 0; i < len(sess.Messages); i += 4 {
			m := firstTag.FindStringSubmatch(sess.Messages[i].Text())
			if m == nil || i+3 >= len(sess.Messages) || sess.Messages[i+3].Role != llm.RoleAssistant {
				return nil, fmt.Errorf("session %s: messages from %d are not a whole turn", id, i)
			}
			tags = append(tags, m[1])
		}
		last := ""
		if len(tags) > 0 {
			last = fmt.Sprintf("%q", tags[len(tags)-1])
		}
		if sess.Turns != len(tags) || sess.Usage.InputTokens != len(tags) || string(sess.State["last"]) != last {
			return nil, fmt.Errorf("session %s: totals %d turns, %d tokens, last %s disagree with turns %v",
				id, sess.Turns, sess.Usage.InputTokens, sess.State["last"], tags)
		}
		got[id] = tags
	}
	var ok string
	if err := sqlite.WriterDB(s).QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&ok); err != nil || ok != "ok" {
		return nil, fmt.Errorf("quick_check = %q, %v", ok, err)
	}
	return got, nil
}

// TestWALPrefixesHoldWholeTurns copies the database file and its WAL, as
// they are the moment an Append returns, into a new directory (without the
// -shm index, which SQLite rebuilds from the WAL) and opens the copy: the
// turn is there. Under synchronous=FULL those bytes were fsync'd before
// Append returned, so this is what a power cut right after leaves. It then
// opens copies whose WAL holds only a prefix of what the Append wrote,
// cut at and inside every frame, or with the rest zeroed (a power cut
// during the commit, the database file being untouched until a
// checkpoint): each holds the sessions as before the Append or as after
// it, never part of a turn. That is the store's part: one Append is one
// transaction, with nothing needed outside those two files. It cannot show
// that SQLite fsyncs, or where a real disk would cut; SQLite's checksummed
// WAL frames are what make any cut safe.
func TestWALPrefixesHoldWholeTurns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	s := open(t, path)
	ids := []string{"s", "n"}
	steps := []struct{ id, tag string }{{"s", "t0"}, {"s", "t1"}, {"s", "big2"}, {"n", "n0"}}
	want := map[string][]string{}
	copies := 0
	for _, st := range steps {
		db0, wal0 := readFile(t, path), readFile(t, path+"-wal")
		if err := s.Append(t.Context(), st.id, powerTurn(st.tag, 4)); err != nil {
			t.Fatal(err)
		}
		db1, wal1 := readFile(t, path), readFile(t, path+"-wal")
		if !bytes.Equal(db0, db1) || !bytes.HasPrefix(wal1, wal0) || len(wal1) < 32 {
			t.Fatalf("Append(%s, %s) did not only append to the WAL (a checkpoint ran?): db %d→%d bytes, WAL %d→%d",
				st.id, st.tag, len(db0), len(db1), len(wal0), len(wal1))
		}
		before := maps.Clone(want)
		want[st.id] = append(slices.Clone(want[st.id]), st.tag)

		// At the moment Append returned.
		if got, err := openCopy(t, db1, wal1, ids); err != nil || !tagsEqual(got, want) {
			t.Fatalf("a copy taken when Append(%s, %s) returned holds %v, %v; want %v", st.id, st.tag, got, err, want)
		}
		copies++
		// Cut during the commit.
		for _, cut := range walCuts(t, len(wal0), wal1) {
			for _, zero := range []bool{false, true} {
				wal := slices.Clone(wal1)
				if zero {
					clear(wal[cut:])
				} else {
					wal = wal[:cut]
				}
				got, err := openCopy(t, db1, wal, ids)
				if err != nil || !tagsEqual(got, before) && !tagsEqual(got, want) {
					t.Fatalf("the WAL of Append(%s, %s) cut at byte %d of %d..%d (zeroed after: %v): the copy holds %v, %v; want %v or %v",
						st.id, st.tag, cut, len(wal0), len(wal1), zero, got, err, before, want)
				}
				copies++
			}
		}
	}
	t.Logf("%d copies of the database and WAL opened, each holding whole turns", copies)
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return data
}

// walCuts returns where to cut the WAL wal between from (where the Append's
// writes start) and its end: at the start of each frame the Append wrote,
// after its 24-byte frame header, and in the middle of its page, and one
// byte before the end (with -short or the race detector, a sample of
// these).
func walCuts(t *testing.T, from int, wal []byte) []int {
	t.Helper()
	const walHeader, frameHeader = 32, 24
	pageSize := int(binary.BigEndian.Uint32(wal[8:12]))
	frame := frameHeader + pageSize
	start := max(from, walHeader)
	if from > 0 && (from-walHeader)%frame != 0 {
		t.Fatalf("the WAL before the Append (%d bytes) is not whole frames of %d", from, frame)
	}
	var cuts []int
	if from < walHeader {
		cuts = append(cuts, from, walHeader/2)
	}
	for off := start; off < len(wal); off += frame {
		cuts = append(cuts, off, off+frameHeader, off+frameHeader+pageSize/2)
	}
	cuts = append(cuts, len(wal)-1)
	if testing.Short() || raceEnabled { // a sample: the first, middle and last two
		n := len(cuts)
		cuts = slices.Compact([]int{cuts[0], cuts[n/2], cuts[n-2], cuts[n-1]})
	}
	return cuts
}

// openCopy writes db and wal as a new database and its WAL, opens it with
// the store and returns its sessions' turn tags.
func openCopy(t *testing.T, db, wal []byte, ids []string) (map[string][]string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-wal", wal, 0o600); err != nil {
		t.Fatal(err)
	}
	return sessionTags(t.Context(), path, ids)
}

func tagsEqual(a, b map[string][]string) bool {
	return maps.EqualFunc(a, b, func(x, y []string) bool { return slices.Equal(x, y) })
}
