package filestore_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/sessiontest"
)

func appendTurns(t *testing.T, s session.Store, id string, tags ...string) {
	t.Helper()
	for _, tag := range tags {
		if err := s.Append(t.Context(), id, session.Turn{ID: tag, Messages: sessiontest.Conversation(tag, 4)}); err != nil {
			t.Fatal(err)
		}
	}
}

func openCounting(t *testing.T, dir string) (*filestore.Store, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	s, err := filestore.Open(dir, filestore.WithLogger(slog.New(countingHandler{&n})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, &n
}

// validLines checks that every line of the log decodes as JSON and ends in
// a newline, and returns how many there are.
func validLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("log does not end in a newline")
	}
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("line %d is not JSON: %.80q", n, sc.Text())
		}
		n++
	}
	return n
}

func TestTornLastLineIsDroppedThenCut(t *testing.T) {
	t.Parallel()
	full := func() []byte { // a whole turn line as the store writes it
		dir := t.TempDir()
		s := open(t, dir)
		appendTurns(t, s, "x", "torn")
		data, _ := os.ReadFile(filepath.Join(dir, "x.jsonl"))
		lines := bytes.SplitAfter(data, []byte("\n"))
		return lines[1]
	}()
	tails := []struct {
		name string
		tail []byte
	}{
		{"half a line", full[:len(full)/2]},
		{"all but the newline", full[:len(full)-1]},
		{"one byte", full[:1]},
		{"zeros", make([]byte, 4096)},
		{"half a line then zeros", append(append([]byte{}, full[:100]...), make([]byte, 512)...)},
		{"garbage with a newline", []byte("{\"turn\":\"x\",\"ti\n")},
	}
	for _, tc := range tails {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir)
			appendTurns(t, s, "sess", "t0", "t1", "t2")
			s.Close()
			path := filepath.Join(dir, "sess.jsonl")
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(tc.tail)
			f.Close()

			s2, warnings := openCounting(t, dir)
			got, err := s2.Load(t.Context(), "sess")
			if err != nil {
				t.Fatalf("Load with a torn tail: %v", err)
			}
			if got.Turns != 3 || len(got.Messages) != 12 {
				t.Fatalf("Load = %d turns, %d messages; want the 3 whole turns", got.Turns, len(got.Messages))
			}
			if warnings.Load() != 1 {
				t.Errorf("%d warnings, want 1 for the dropped line", warnings.Load())
			}
			s2.Load(t.Context(), "sess")
			if warnings.Load() != 1 {
				t.Errorf("the same torn line was reported again")
			}
			if info := listOne(t, s2); info.Turns != 3 || info.Messages != 12 {
				t.Errorf("List = %+v, want 3 turns and 12 messages", info)
			}
			// The torn turn can be retried, and the log is whole again.
			appendTurns(t, s2, "sess", "torn", "t3")
			if n := validLines(t, path); n != 6 {
				t.Errorf("log has %d lines after the next append, want header + 5 turns", n)
			}
			s2.Close()
			s3, warnings := openCounting(t, dir)
			got, err = s3.Load(t.Context(), "sess")
			if err != nil || got.Turns != 5 || warnings.Load() != 0 {
				t.Fatalf("after repair: %v, %d turns, %d warnings; want 5 turns, no warning", err, got.Turns, warnings.Load())
			}
		})
	}
}

func listOne(t *testing.T, s session.Store) session.Info {
	t.Helper()
	page, err := s.List(t.Context(), session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Sessions) != 1 {
		t.Fatalf("List = %+v, want one session", page.Sessions)
	}
	return page.Sessions[0]
}

func TestCorruptLogIsAnError(t *testing.T) {
	t.Parallel()
	corruptions := []struct {
		name   string
		modify func(lines [][]byte) [][]byte
	}{
		{"bad line between good ones", func(l [][]byte) [][]byte {
			l[2] = []byte("{not json}\n")
			return l
		}},
		{"bad header", func(l [][]byte) [][]byte {
			l[0] = []byte("{\"agcore_session\":1,\n")
			return l
		}},
		{"header of another session", func(l [][]byte) [][]byte {
			l[0] = bytes.Replace(l[0], []byte(`"id":"sess"`), []byte(`"id":"other"`), 1)
			return l
		}},
		{"future format", func(l [][]byte) [][]byte {
			l[0] = bytes.Replace(l[0], []byte(`"agcore_session":2`), []byte(`"agcore_session":99`), 1)
			return l
		}},
		{"empty file", func([][]byte) [][]byte { return nil }},
	}
	for _, tc := range corruptions {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir)
			appendTurns(t, s, "sess", "t0", "t1", "t2")
			s.Close()
			path := filepath.Join(dir, "sess.jsonl")
			data, _ := os.ReadFile(path)
			lines := tc.modify(bytes.SplitAfter(data, []byte("\n")))
			if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
				t.Fatal(err)
			}
			s2 := open(t, dir)
			if _, err := s2.Load(t.Context(), "sess"); !errors.Is(err, filestore.ErrCorrupt) {
				t.Errorf("Load: err = %v, want ErrCorrupt", err)
			}
			if err := s2.Append(t.Context(), "sess", session.Turn{ID: "t9", Messages: []llm.Message{llm.UserText("x")}}); !errors.Is(err, filestore.ErrCorrupt) {
				t.Errorf("Append onto a corrupt log: err = %v, want ErrCorrupt", err)
			}
			if page, err := s2.List(t.Context(), session.ListOptions{}); err != nil || len(page.Sessions) != 0 {
				t.Errorf("List with a corrupt log = %+v, %v; want it left out, no error", page.Sessions, err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, bytes.Join(lines, nil)) {
				t.Errorf("the store changed a corrupt log")
			}
		})
	}
}

func TestReopenAndSummaryRebuild(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir)
	appendTurns(t, s, "a", "1", "2")
	appendTurns(t, s, "b", "1")
	if _, err := s.Create(t.Context(), "empty"); err != nil {
		t.Fatal(err)
	}
	want, _ := s.Load(t.Context(), "a")
	s.Close()

	// Summaries missing, stale, or garbage: List rebuilds them from the logs.
	os.Remove(filepath.Join(dir, "a.meta.json"))
	os.WriteFile(filepath.Join(dir, "b.meta.json"), []byte(`{"size":1,"turns":99,"messages":99,"created_at":"2020-01-01T00:00:00Z"}`), 0o600)
	os.WriteFile(filepath.Join(dir, "empty.meta.json"), []byte(`garbage`), 0o600)
	os.WriteFile(filepath.Join(dir, "ghost.meta.json"), []byte(`{"size":10,"turns":1}`), 0o600) // no log: no session
	s2 := open(t, dir)
	page, err := s2.List(t.Context(), session.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]session.Info{}
	for _, info := range page.Sessions {
		got[info.ID] = info
	}
	if len(got) != 3 || got["a"].Turns != 2 || got["a"].Messages != 8 || got["b"].Turns != 1 || got["empty"].Turns != 0 {
		t.Fatalf("List after reopen = %+v", page.Sessions)
	}
	if !got["a"].CreatedAt.Equal(want.CreatedAt) || !got["a"].UpdatedAt.Equal(want.UpdatedAt) {
		t.Errorf("rebuilt times %v/%v, want %v/%v", got["a"].CreatedAt, got["a"].UpdatedAt, want.CreatedAt, want.UpdatedAt)
	}
	data, err := os.ReadFile(filepath.Join(dir, "b.meta.json"))
	if err != nil || !strings.Contains(string(data), `"turns":1`) {
		t.Errorf("stale summary not rewritten: %s, %v", data, err)
	}
	loaded, err := s2.Load(t.Context(), "a")
	if err != nil || len(loaded.Messages) != 8 {
		t.Fatalf("Load after reopen: %v, %d messages", err, len(loaded.Messages))
	}
	// Turn ids survive the reopen: a retry is still a no-op.
	appendTurns(t, s2, "a", "2")
	if again, _ := s2.Load(t.Context(), "a"); again.Turns != 2 {
		t.Errorf("retry after reopen stored a duplicate: %d turns", again.Turns)
	}
}

func TestFileFormat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir)
	turn := session.Turn{ID: "run-1", Messages: []llm.Message{llm.UserText("hi")},
		Usage: llm.Usage{InputTokens: 3}, CostUSD: 0.5,
		State:  map[string]json.RawMessage{"k": json.RawMessage(`{"n": 1}`), "gone": nil},
		Prefix: session.PrefixStats{Requests: 1, LastDivergence: -1}, Hashes: []uint64{7, 8}}
	if err := s.Append(t.Context(), "fmt", turn); err != nil {
		t.Fatal(err)
	}
	turn.ID, turn.Hashes, turn.State = "run-2", []uint64{7, 8, 9, 10}, nil
	if err := s.Append(t.Context(), "fmt", turn); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "fmt.jsonl"))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want a header and 2 turns:\n%s", len(lines), data)
	}
	var hdr map[string]any
	json.Unmarshal([]byte(lines[0]), &hdr)
	if hdr["agcore_session"] != 2.0 || hdr["id"] != "fmt" || hdr["created_at"] == nil {
		t.Errorf("header = %s", lines[0])
	}
	for _, want := range []string{`"turn":"run-1"`, `"messages":[{"type":"user","content":[{"type":"text","text":"hi"}]}]`,
		`"usage":{"input_tokens":3,"output_tokens":0}`, `"cost_usd":0.5`, `"state":{"k":{"n":1}}`, `"state_del":["gone"]`,
		`"prefix":{"requests":1,"prefix_stable":0,"last_divergence":-1,"keep":0,"hashes":[7,8]}`} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("turn line lacks %s:\n%s", want, lines[1])
		}
	}
	// The second turn's hashes extend the first's: only the new ones are written.
	if !strings.Contains(lines[2], `"keep":2,"hashes":[9,10]`) {
		t.Errorf("hashes not delta-encoded:\n%s", lines[2])
	}
	got, err := s.Load(t.Context(), "fmt")
	if err != nil {
		t.Fatal(err) // got is nil
	}
	if len(got.Hashes) != 4 || got.Hashes[3] != 10 {
		t.Errorf("Load hashes = %v", got.Hashes)
	}
	for _, name := range []string{"fmt.jsonl", "fmt.meta.json"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Error(err) // fi is nil
			continue
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v; want 0600", name, fi.Mode().Perm())
		}
	}
}

func TestSymlinksCannotEscape(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.jsonl")
	os.WriteFile(secret, []byte("do not touch\n"), 0o600)
	dir := t.TempDir()
	if err := os.Symlink(secret, filepath.Join(dir, "evil.jsonl")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	os.Symlink(outside, filepath.Join(dir, "sub")) // a directory link, too
	s := open(t, dir)
	if _, err := s.Load(t.Context(), "evil"); err == nil {
		t.Error("Load followed a symlink out of the directory")
	}
	if err := s.Append(t.Context(), "evil", session.Turn{ID: "t", Messages: []llm.Message{llm.UserText("x")}}); err == nil {
		t.Error("Append followed a symlink out of the directory")
	}
	if err := s.Delete(context.Background(), "evil"); err != nil && !errors.Is(err, session.ErrNotFound) {
		t.Logf("Delete of the link: %v", err)
	}
	if data, _ := os.ReadFile(secret); string(data) != "do not touch\n" {
		t.Errorf("the file outside the directory changed: %q", data)
	}
	if _, err := s.List(t.Context(), session.ListOptions{}); err != nil {
		t.Errorf("List with a symlink in the directory: %v", err)
	}
}

func TestOpenRemovesStaleTemporaryFilesOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir)
	// Ids that look like temporary names are still sessions.
	ids := []string{"x.tmp-0123456789abcdef", "y.jsonl.tmp-0123456789abcdef", "z.meta.json.tmp-0123456789abcdef"}
	for _, id := range ids {
		appendTurns(t, s, id, "t")
	}
	s.Close()
	stale := []string{"x.jsonl.tmp-0123456789abcdef", "x.meta.json.tmp-fedcba9876543210"}
	for _, name := range stale {
		os.WriteFile(filepath.Join(dir, name), []byte("half"), 0o600)
	}
	s = open(t, dir)
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale temporary file %s left: %v", name, err)
		}
	}
	for _, id := range ids {
		if got, err := s.Load(t.Context(), id); err != nil || got.Turns != 1 {
			t.Errorf("session %q after reopen: %v", id, err)
		}
	}
}
