package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/scaleout"
	"github.com/agcore/agcore/session"
)

const (
	scaleProcs    = 4  // agcore processes at a time
	scaleSessions = 3  // sessions they all write
	scaleTurns    = 30 // turns each process runs, one `agcore run` each: 10 a session (with -short 9: 3 a session)
)

// toolTurnProvider is an OpenAI-compatible provider that any number of
// runs can share, since it answers from the request alone: a turn whose
// user message is "[TAG] ..." gets a read_file call with the id
// "call-TAG", then, once the result is sent, the answer "done TAG" — the
// turns scaleout.CheckTurns checks. A TAG starting with "kill" gets an
// answer that stops after its first piece and never ends.
func toolTurnProvider(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		tag := ""
		for i := len(req.Messages) - 1; i >= 0 && tag == ""; i-- {
			if m := req.Messages[i]; m.Role == "user" {
				tag, _, _ = strings.Cut(strings.TrimPrefix(contentText(m.Content), "["), "]")
			}
		}
		if req.Messages[len(req.Messages)-1].Role != "tool" {
			openaiReply(turn{calls: []call{{"call-" + tag, "read_file", `{"path":"a.txt"}`}}, in: 20, out: 5})(w, r)
			return
		}
		openaiReply(turn{text: "done " + tag, in: 30, out: 2, hang: strings.HasPrefix(tag, "kill")})(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// contentText is the text of a Chat Completions message's content, a
// string or a list of parts.
func contentText(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				s, _ := m["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	}
	return ""
}

// TestScaleOutThroughTheCLI: 4 agcore processes at a time write the same
// 3 sessions of a PostgreSQL or Redis store, each turn a tool call and its
// result, while another agcore run is SIGKILLed in the middle of its
// answer; every acknowledged turn is then stored once, whole, and the
// killed one not at all.
func TestScaleOutThroughTheCLI(t *testing.T) {
	t.Parallel()
	forEachRemoteStore(t, func(t *testing.T, rs remoteStore) {
		srv := toolTurnProvider(t)
		c := newCLI(t).openai(&fake{Server: srv}, "sk-test")
		root := t.TempDir()
		writeFiles(t, root, map[string]string{"a.txt": "alpha\n"})
		sid := func(i int) string { return fmt.Sprintf("%ss%d", rs.prefix, i%scaleSessions) }
		args := func(tag, id string, extra ...string) []string {
			return append([]string{"run", "--store", rs.url, "--tools", "read_file", "--root", root, "--session", id}, append(extra, "["+tag+"] go")...)
		}

		turns := scaleTurns
		if testing.Short() {
			turns = 9
		}
		var mu sync.Mutex
		acked := map[string]string{} // tag → session
		start := time.Now()
		var wg sync.WaitGroup
		for p := range scaleProcs {
			wg.Go(func() {
				for i := range turns {
					tag := fmt.Sprintf("p%d-%d", p, i)
					r := c.run("", args(tag, sid(i))...)
					if r.code != 0 {
						t.Errorf("turn %s: exit %d: %s", tag, r.code, r.stderr)
						return
					}
					noSecret(t, rs.pw, "run", r.stdout, r.stderr)
					mu.Lock()
					acked[tag] = sid(i)
					mu.Unlock()
				}
			})
		}
		killed := killMidAnswer(t, c, args("kill-0", sid(0), "--json"))
		wg.Wait()
		elapsed := time.Since(start)

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		st, err := session.Open(ctx, rs.url)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		seen := map[string]int{}
		stored := 0
		for i := range scaleSessions {
			sess, err := st.Load(ctx, sid(i))
			if err != nil {
				t.Fatalf("%s: %v", sid(i), err)
			}
			stored += sess.Turns
			if err := scaleout.CheckTurns(sess, sid(i), acked, seen); err != nil {
				t.Errorf("%s: %v", sid(i), err)
			}
		}
		lost, twice := 0, 0
		for tag := range acked {
			if seen[tag] == 0 {
				lost++
			}
		}
		for _, n := range seen {
			if n > 1 {
				twice++
			}
		}
		t.Logf("%s: %d agcore processes at a time, %d turns acknowledged, %d stored over %d sessions in %v; %d lost, %d twice",
			rs.kind, scaleProcs, len(acked), stored, scaleSessions, elapsed.Round(time.Millisecond), lost, twice)
		if len(acked) != scaleProcs*turns || stored != len(acked) || lost != 0 || twice != 0 {
			t.Errorf("want %d turns acknowledged and each stored once", scaleProcs*turns)
		}
		if killed && seen["kill-0"] != 0 {
			t.Error("the turn of the process killed mid-answer was stored")
		}
	})
}

// killMidAnswer runs agcore with args (--json), SIGKILLs it once the
// answer has begun (a text delta after the tool call's result), and
// reports whether it did.
func killMidAnswer(t *testing.T, c *cli, args []string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.command(ctx, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed, sawResult := false, false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `"type":"tool_result"`) {
			sawResult = true
		}
		if strings.Contains(line, `"type":"text_delta"`) && sawResult && !killed {
			cmd.Process.Signal(os.Kill)
			killed = true
		}
	}
	cmd.Wait()
	if !killed {
		t.Errorf("agcore %s never began its answer after a tool result", strings.Join(args, " "))
	}
	return killed
}
