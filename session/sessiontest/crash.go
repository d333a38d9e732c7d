package sessiontest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

const (
	crashDirEnv  = "SESSIONTEST_CRASH_DIR"
	crashIterEnv = "SESSIONTEST_CRASH_ITER"
	// CrashKillsEnv, when set to a number, overrides the kills argument of
	// Crash (e.g. 200 for a long soak run).
	CrashKillsEnv = "SESSIONTEST_CRASH_KILLS"
)

// Crash checks that a durable store survives its process being killed: it
// runs the calling test's binary again as a child that appends turns in a
// loop (to one long session, and to a new session each round, so creation
// is hit too) and reports each append that returned, kills the child with
// SIGKILL at a random moment, then opens the store and checks that it
// opens, that every reported turn is there whole, that every tool_use has
// its result, that no turn is stored twice, and that it takes new appends.
// It does this kills times (CrashKillsEnv overrides) and logs the counts.
//
// open opens the store in dir; if the store is an io.Closer it is closed
// after each check. Call Crash from a top-level test: in the child process
// Crash runs the append loop and never returns.
func Crash(t *testing.T, kills int, open func(dir string) (session.Store, error)) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir, open)
		os.Exit(0) // not reached: the child is killed
	}
	if v := os.Getenv(CrashKillsEnv); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", CrashKillsEnv, v, err)
		}
		kills = n
	}
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{} // every tag whose Append returned nil, over all rounds
	stored := 0
	for round := range kills {
		for _, tag := range runChild(t, exe, dir, round) {
			acked[tag] = true
		}
		stored = checkAfterCrash(t, dir, round, acked, open)
	}
	t.Logf("crash consistency: %d SIGKILLs; %d appends acknowledged, all of them stored whole; %d turns stored in all (unacknowledged ones may land or not)",
		kills, len(acked), stored)
}

// runChild runs one child round and returns the tags it acknowledged.
func runChild(t *testing.T, exe, dir string, round int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^"+regexp.QuoteMeta(topLevel(t.Name()))+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashIterEnv+"="+strconv.Itoa(round))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		tags  []string
		first = make(chan struct{})
		once  sync.Once
		read  = make(chan struct{})
	)
	go func() {
		defer close(read)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if tag, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
				mu.Lock()
				tags = append(tags, tag)
				mu.Unlock()
				once.Do(func() { close(first) })
			}
		}
	}()
	select {
	case <-first:
	case <-read: // the child died on its own
		cmd.Wait()
		t.Fatalf("round %d: the child exited before appending anything", round)
	case <-ctx.Done():
		t.Fatalf("round %d: the child appended nothing within the deadline", round)
	}
	// Kill at a random moment: sometimes at once, mostly mid-stream.
	time.Sleep(time.Duration(rand.IntN(30_000)) * time.Microsecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-read
	cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	return tags
}

func topLevel(name string) string {
	top, _, _ := strings.Cut(name, "/")
	return top
}

// crashChild appends turns until it is killed, printing "acked <tag>" after
// each Append that returned nil.
func crashChild(dir string, open func(string) (session.Store, error)) {
	round, _ := strconv.Atoi(os.Getenv(crashIterEnv))
	s, err := open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child: open:", err)
		os.Exit(2)
	}
	ctx := context.Background()
	for n := 0; ; n++ {
		tag := fmt.Sprintf("r%d-%d", round, n)
		msgs := Conversation(tag, 4)
		if n%7 == 3 { // now and then a big turn, which takes longer to write
			msgs[3] = llm.AssistantText(msgs[3].Text() + strings.Repeat(" padding", 20_000))
		}
		id := "crash"
		if n%3 == 0 {
			id = fmt.Sprintf("crash-%d-%d", round, n) // a new session
		}
		tr := session.Turn{ID: tag, Messages: msgs, Usage: llm.Usage{InputTokens: 1},
			Hashes: []uint64{uint64(n)}, Prefix: session.PrefixStats{Requests: n + 1}}
		if err := s.Append(ctx, id, tr); err != nil {
			fmt.Fprintln(os.Stderr, "crash child: append:", err)
			os.Exit(2)
		}
		fmt.Printf("acked %s\n", tag)
	}
}

var tagRE = regexp.MustCompile(`^\[([ra]\d+-\d+) 0\] `)

// checkAfterCrash opens the store and checks it; it returns how many turns
// it holds.
func checkAfterCrash(t *testing.T, dir string, round int, acked map[string]bool, open func(string) (session.Store, error)) int {
	t.Helper()
	s, err := open(dir)
	if err != nil {
		t.Fatalf("round %d: the store does not open after SIGKILL: %v", round, err)
	}
	if c, ok := s.(io.Closer); ok {
		defer c.Close()
	}
	ctx := t.Context()
	present := map[string]bool{}
	turns := 0
	cursor := ""
	for {
		page, err := s.List(ctx, session.ListOptions{Limit: 500, Cursor: cursor})
		if err != nil {
			t.Fatalf("round %d: List after SIGKILL: %v", round, err)
		}
		for _, info := range page.Sessions {
			sess, err := s.Load(ctx, info.ID)
			if err != nil {
				t.Fatalf("round %d: Load(%q) after SIGKILL: %v", round, info.ID, err)
			}
			if err := checkTurns(sess, present); err != nil {
				t.Fatalf("round %d: session %q after SIGKILL: %v", round, info.ID, err)
			}
			if sess.Turns != len(sess.Messages)/4 || sess.Usage.InputTokens != sess.Turns || info.Turns != sess.Turns {
				t.Fatalf("round %d: session %q totals disagree with its messages: %d turns (listed %d), %d messages, usage %d",
					round, info.ID, sess.Turns, info.Turns, len(sess.Messages), sess.Usage.InputTokens)
			}
			turns += sess.Turns
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	for tag := range acked {
		if !present[tag] {
			t.Fatalf("round %d: turn %s was acknowledged (its Append returned nil) but is not stored", round, tag)
		}
	}
	// The store takes new turns after the crash.
	if err := s.Append(ctx, "crash", session.Turn{ID: fmt.Sprintf("after-%d", round), Messages: Conversation(fmt.Sprintf("a%d-0", round), 4),
		Usage: llm.Usage{InputTokens: 1}}); err != nil {
		t.Fatalf("round %d: Append after SIGKILL: %v", round, err)
	}
	return turns + 1
}

// checkTurns checks that msgs are whole 4-message turns made by
// Conversation, that each tool_use is answered by the next message, and
// that no turn repeats; it records the turns' tags in present.
func checkTurns(sess *session.Session, present map[string]bool) error {
	msgs := sess.Messages
	if len(msgs)%4 != 0 {
		return fmt.Errorf("%d messages: not whole turns", len(msgs))
	}
	for i := 0; i < len(msgs); i += 4 {
		m := tagRE.FindStringSubmatch(msgs[i].Text())
		if m == nil {
			return fmt.Errorf("message %d does not start a turn: %q", i, clip([]byte(msgs[i].Text())))
		}
		tag := m[1]
		if present[tag] {
			return fmt.Errorf("turn %s stored twice", tag)
		}
		present[tag] = true
		uses := msgs[i+1].ToolUses()
		if len(uses) != 1 || msgs[i+2].Role != llm.RoleTool || msgs[i+2].ToolCallID != uses[0].ID {
			return fmt.Errorf("turn %s: tool_use without its result", tag)
		}
		if msgs[i+3].Role != llm.RoleAssistant {
			return errors.New("turn " + tag + " is cut short")
		}
	}
	return nil
}
