package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/compact"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/filestore"
	"github.com/agcore/agcore/session/sqlite"
)

const (
	crashChildEnv = "AGCORE_RELIABILITY_CRASH_CHILD" // the store kind the child appends to
	crashDirEnv   = "AGCORE_RELIABILITY_CRASH_DIR"
	crashRoundEnv = "AGCORE_RELIABILITY_CRASH_ROUND"
	// crashLongEnv=long runs TestCrashConsistencyLong.
	crashLongEnv = "AGCORE_CRASH"
	// crashKillsEnv overrides the kill count of TestCrashConsistency.
	crashKillsEnv = "AGCORE_CRASH_KILLS"
)

// TestCrashConsistency kills a child process running agent turns with
// tool calls into each durable store, 20 times per store (5 with -short;
// AGCORE_CRASH_KILLS overrides), and checks the store after every kill.
func TestCrashConsistency(t *testing.T) {
	// In parallel with the other tests that wait on processes (not with
	// those that count goroutines: parallel tests run after them).
	t.Parallel()
	kills := 20
	if testing.Short() {
		kills = 5
	}
	kills = envInt(crashKillsEnv, kills)
	for _, kind := range []string{"filestore", "sqlite"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			crashRounds(t, kind, kills)
		})
	}
}

// TestCrashConsistencyLong is the full run: 200 SIGKILLs per store. It runs
// only with AGCORE_CRASH=long.
func TestCrashConsistencyLong(t *testing.T) {
	if os.Getenv(crashLongEnv) != "long" {
		t.Skip("set AGCORE_CRASH=long to run 200 SIGKILLs per store")
	}
	for _, kind := range []string{"filestore", "sqlite"} {
		t.Run(kind, func(t *testing.T) { crashRounds(t, kind, 200) })
	}
}

func openStore(kind, dir string) (session.Store, error) {
	if kind == "sqlite" {
		return sqlite.Open(context.Background(), filepath.Join(dir, "sessions.db"))
	}
	return filestore.Open(filepath.Join(dir, "files"))
}

func closeStore(s session.Store) {
	if c, ok := s.(io.Closer); ok {
		c.Close()
	}
}

// crashRounds runs the child kills times against one store directory.
func crashRounds(t *testing.T, kind string, kills int) {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var early, stored, unacked int
	for round := range kills {
		if killChild(t, exe, kind, dir, round) {
			early++
		}
		stored, unacked = checkCrashed(t, kind, dir, round)
	}
	acked := len(readAcks(t, dir))
	t.Logf("%s: %d SIGKILLs (%d before the child's first acknowledged turn); %d turns acknowledged, all stored whole and valid; %d turns stored in all, %d of them unacknowledged (killed between Append and the acknowledgement); the store took a new turn after every kill",
		kind, kills, early, acked, stored, unacked)
}

// killChild runs one child round and kills it at a random moment; it
// reports whether the kill came before the child's first acknowledgement of
// the round.
func killChild(t *testing.T, exe, kind, dir string, round int) bool {
	t.Helper()
	before := len(readAcks(t, dir))
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+kind, crashDirEnv+"="+dir, crashRoundEnv+"="+strconv.Itoa(round))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	early := round%4 == 3
	if early {
		// Any moment from process start: opening, creating, the first
		// append.
		time.Sleep(time.Duration(rand.IntN(60_000)) * time.Microsecond)
	} else {
		deadline := time.Now().Add(30 * time.Second)
		for len(readAcks(t, dir)) == before {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("round %d: no turn acknowledged within 30s; child stderr:\n%s", round, stderr.String())
			}
			time.Sleep(200 * time.Microsecond)
		}
		time.Sleep(time.Duration(rand.IntN(100_000)) * time.Microsecond)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("round %d: the child ended on its own (%v); stderr:\n%s", round, err, stderr.String())
	}
	return early && len(readAcks(t, dir)) == before
}

// readAcks returns the acknowledged turns: tag → session id. Only whole
// lines count.
func readAcks(t *testing.T, dir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "acks"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	acks := map[string]string{}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		tag, sid, _ := strings.Cut(sc.Text(), " ")
		acks[tag] = sid
	}
	return acks
}

// checkCrashed opens the store after a kill and checks every session: it
// validates, every acknowledged turn is in it once and whole, and the store
// takes a new turn. It returns the turns stored and how many of them were
// not acknowledged.
func checkCrashed(t *testing.T, kind, dir string, round int) (stored, unacked int) {
	t.Helper()
	ctx := t.Context()
	store, err := openStore(kind, dir)
	if err != nil {
		t.Fatalf("round %d: the store does not open after SIGKILL: %v", round, err)
	}
	defer closeStore(store)
	acks := readAcks(t, dir)
	present := map[string]string{}
	for cursor := ""; ; {
		page, err := store.List(ctx, session.ListOptions{Limit: 500, Cursor: cursor})
		if err != nil {
			t.Fatalf("round %d: List: %v", round, err)
		}
		for _, info := range page.Sessions {
			s, err := store.Load(ctx, info.ID)
			if err != nil {
				t.Fatalf("round %d: Load %s: %v", round, info.ID, err)
			}
			if err := compact.Validate(s.Messages); err != nil {
				t.Fatalf("round %d: session %s does not validate after SIGKILL: %v", round, info.ID, err)
			}
			tags := turnTags(s.Messages)
			if len(tags) != s.Turns || info.Turns != s.Turns || len(s.Messages) != 5*s.Turns {
				t.Fatalf("round %d: session %s: %d turns (listed %d), %d user messages, %d messages: not whole turns",
					round, info.ID, s.Turns, info.Turns, len(tags), len(s.Messages))
			}
			for _, tag := range tags {
				if _, dup := present[tag]; dup {
					t.Fatalf("round %d: turn %s stored twice", round, tag)
				}
				present[tag] = info.ID
			}
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	for tag, sid := range acks {
		if present[tag] != sid {
			t.Fatalf("round %d: turn %s was acknowledged (its run returned, persisted) but is not in session %s", round, tag, sid)
		}
	}
	for tag := range present {
		if _, ok := acks[tag]; !ok && !strings.HasPrefix(tag, "after-") {
			unacked++
		}
	}
	// The store takes a new turn after the crash.
	a := newAgent(pipeline(turnModel{}, nil, 1), store, nil)
	tag := fmt.Sprintf("after-%d", round)
	if _, err := runTurn(ctx, a, "crash", "turn "+tag, false); err != nil {
		t.Fatalf("round %d: a turn after SIGKILL: %v", round, err)
	}
	return len(present) + 1, unacked
}

// turnTags returns the tags of the turns in msgs, from their user messages
// ("turn <tag>").
func turnTags(msgs []llm.Message) []string {
	var tags []string
	for _, m := range msgs {
		if m.Role == llm.RoleUser {
			tags = append(tags, strings.TrimPrefix(m.Text(), "turn "))
		}
	}
	return tags
}

// crashChild runs agent turns until it is killed, appending "tag session"
// to dir/acks (fsync'd) after each turn whose run returned persisted.
func crashChild() {
	kind, dir := os.Getenv(crashChildEnv), os.Getenv(crashDirEnv)
	round, _ := strconv.Atoi(os.Getenv(crashRoundEnv))
	fail := func(what string, err error) {
		fmt.Fprintf(os.Stderr, "crash child: %s: %v\n", what, err)
		os.Exit(2)
	}
	store, err := openStore(kind, dir)
	if err != nil {
		fail("open", err)
	}
	ack, err := os.OpenFile(filepath.Join(dir, "acks"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fail("acks", err)
	}
	a := newAgent(pipeline(turnModel{}, nil, 1), store, nil)
	ctx := context.Background()
	for n := 0; ; n++ {
		tag := fmt.Sprintf("r%d-%d", round, n)
		if n%4 == 2 {
			tag += "-big" // its lookup result is 50 KB, a longer write
		}
		sid := "crash"
		if n%5 == 0 {
			sid = "crash-" + tag // a new session
		}
		if _, err := runTurn(ctx, a, sid, "turn "+tag, false); err != nil {
			fail("turn "+tag, err)
		}
		if _, err := fmt.Fprintf(ack, "%s %s\n", tag, sid); err != nil {
			fail("ack", err)
		}
		if err := ack.Sync(); err != nil {
			fail("ack sync", err)
		}
	}
}

// turnModel answers a turn "turn <tag>" with two tool calls and, once their
// results are in, with a text: 5 messages per turn.
type turnModel struct{}

func (turnModel) Info() llm.ModelInfo { return llm.ModelInfo{Provider: "test", Name: "turns"} }

func (turnModel) Generate(_ context.Context, req *llm.Request) (*llm.Response, error) {
	var tag string
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			tag = strings.TrimPrefix(m.Text(), "turn ")
		}
	}
	if last := req.Messages[len(req.Messages)-1]; last.Role == llm.RoleTool {
		return &llm.Response{Model: "turns", Message: llm.AssistantText("done " + tag), FinishReason: llm.FinishStop}, nil
	}
	key := "k"
	if strings.HasSuffix(tag, "-big") {
		key = "big"
	}
	in, _ := json.Marshal(map[string]string{"key": key})
	return &llm.Response{Model: "turns", FinishReason: llm.FinishToolUse, Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		llm.Text{Text: "calling"},
		llm.ToolUse{ID: tag + "-add", Name: "add", Input: json.RawMessage(`{"a":1,"b":2}`)},
		llm.ToolUse{ID: tag + "-lookup", Name: "lookup", Input: in},
	}}}, nil
}

func (m turnModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	resp, err := m.Generate(ctx, req)
	if err != nil {
		return func(yield func(llm.Event, error) bool) { yield(llm.Event{}, err) }
	}
	return llm.StreamOf(resp)
}
