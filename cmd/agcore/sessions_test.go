package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

// sessions list: titles, model, turns, tokens and cost, newest first; -c
// continues the newest; ids work by unique prefix everywhere.
func TestSessionsListContinueAndPrefixes(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		openaiReply(turn{text: "Paris.", in: 100, out: 10}),
		openaiReply(turn{text: "Blue.", in: 50, out: 5}),
		openaiReply(turn{text: "Still blue.", in: 70, out: 6}),
		openaiReply(turn{text: "Lyon too.", in: 120, out: 8}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	c.ok("run", "--tools", "", "--session", "travel-2026", "What is the capital of France? Answer in one word please, thanks")
	c.ok("run", "--tools", "", "--session", "colours", "What colour is the sky?")
	c.ok("run", "--tools", "", "-c", "And at noon?") // continues "colours", the newest
	if got := srv.messages(2); !strings.Contains(got, "What colour is the sky?") {
		t.Errorf("-c did not continue the newest session: %s", got)
	}
	c.ok("run", "--tools", "", "--session", "trav", "And Lyon?") // a prefix of travel-2026
	if got := srv.messages(3); !strings.Contains(got, "capital of France") {
		t.Errorf("--session trav did not continue travel-2026: %s", got)
	}

	var listed struct {
		Sessions []struct {
			ID, Title, Model string
			Turns            int
			Usage            map[string]int
			CostUSD          float64 `json:"cost_usd"`
		}
	}
	if err := json.Unmarshal([]byte(c.ok("sessions", "list", "--json").stdout), &listed); err != nil {
		t.Fatal(err)
	}
	if len(listed.Sessions) != 2 {
		t.Fatalf("sessions: %+v", listed.Sessions)
	}
	first, second := listed.Sessions[0], listed.Sessions[1]
	if first.ID != "travel-2026" || first.Turns != 2 || first.Model != "gpt-4o-mini" ||
		first.Usage["input_tokens"] != 220 || first.Usage["output_tokens"] != 18 || first.CostUSD <= 0 ||
		first.Title != "What is the capital of France? Answer in one word please, thanks" {
		t.Errorf("newest session: %+v", first)
	}
	if second.ID != "colours" || second.Turns != 2 || second.Title != "What colour is the sky?" {
		t.Errorf("second session: %+v", second)
	}
	text := c.ok("sessions", "list").stdout
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "TITLE") || !strings.Contains(lines[0], "COST") ||
		!strings.HasPrefix(lines[1], "travel-2026") || !strings.Contains(lines[1], "gpt-4o-mini") || !strings.Contains(lines[1], "238") ||
		!strings.Contains(lines[1], "What is the capital of France? Answer in one wo…") {
		t.Errorf("sessions list:\n%s", text)
	}

	if r := c.ok("sessions", "show", "col"); !strings.Contains(r.stdout, "session colours · gpt-4o-mini (openai) · 2 turns · 120 input / 0 cached / 11 output tokens · $") ||
		!strings.Contains(r.stdout, "── you ──\nAnd at noon?") {
		t.Errorf("sessions show col:\n%s", r.stdout)
	}
	srv.add(openaiReply(turn{text: "ok"}), openaiReply(turn{text: "ok"}))
	c.ok("run", "--tools", "", "--store", "memory:", "x") // not stored anywhere
	c.ok("run", "--tools", "", "--session", "travel-notes", "y")
	if r := c.run("", "sessions", "show", "trav"); r.code != 2 || !strings.Contains(r.stderr, `"trav" matches 2 sessions`) {
		t.Errorf("an ambiguous prefix: exit %d, %q", r.code, r.stderr)
	}
	if r := c.ok("sessions", "rm", "col"); strings.TrimSpace(r.stdout) != "removed session colours" {
		t.Errorf("rm by prefix: %q", r.stdout)
	}

	// Completion offers the stored ids.
	r := c.ok("__complete", "sessions", "show", "trav")
	if !strings.Contains(r.stdout, "travel-2026\t") || !strings.Contains(r.stdout, "travel-notes\t") {
		t.Errorf("completion of session ids:\n%s", r.stdout)
	}
}

// A read-only command never creates a store: a mistyped --store is an
// error, and with no store yet there is nothing to list.
func TestReadingCommandsCreateNoStore(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	typo := filepath.Join(c.dir, "typo")
	for _, args := range [][]string{
		{"sessions", "list", "--store", "file:" + typo},
		{"sessions", "show", "x", "--store", "sqlite:" + typo + ".db"},
	} {
		r := c.run("", args...)
		if r.code != 2 || !strings.Contains(r.stderr, "nothing has been stored there") {
			t.Errorf("%v: exit %d, %q", args, r.code, r.stderr)
		}
	}
	r := c.ok("sessions", "list")
	if !strings.Contains(r.stderr, "no sessions in sqlite:") {
		t.Errorf("an empty default store: %q", r.stderr)
	}
	for _, p := range []string{typo, typo + ".db", filepath.Join(c.home, "agcore.db")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
}

// New session ids start with their random part, so a few characters name
// one; ids of the earlier form (the time first) still work, by prefix
// too; the list is ordered by the last update whatever the ids look like.
func TestSessionIDsRandomFirst(t *testing.T) {
	t.Parallel()
	const old = "20261203-041905.196-cb55a1f0e2d34c5b6a7f8e9d"
	srv := newFake(t)
	c := newCLI(t).openai(srv, "sk-test")
	list := func() []string {
		t.Helper()
		var listed struct{ Sessions []struct{ ID string } }
		if err := json.Unmarshal([]byte(c.ok("sessions", "list", "--json").stdout), &listed); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range listed.Sessions {
			ids = append(ids, s.ID)
		}
		return ids
	}
	srv.add(openaiReply(turn{text: "one"}), openaiReply(turn{text: "two"}))
	c.ok("run", "--tools", "", "--session", old, "In the old session")
	c.ok("run", "--tools", "", "A new session")
	ids := list()
	if len(ids) != 2 || ids[1] != old || !regexp.MustCompile(`^[0-9a-f]{24}-[0-9]{8}-[0-9]{6}\.[0-9]{3}$`).MatchString(ids[0]) {
		t.Fatalf("sessions %q; want a new id (random part first) and then %s", ids, old)
	}
	fresh := ids[0]

	srv.add(openaiReply(turn{text: "three"}), openaiReply(turn{text: "four"}))
	c.ok("run", "--tools", "", "--session", "20261203", "Back to the old one") // a prefix of the old form
	if got := list(); len(got) != 2 || got[0] != old || got[1] != fresh {
		t.Errorf("after the old session's turn: %q; want it first", got)
	}
	c.ok("run", "--tools", "", "--session", fresh[:6], "Back to the new one") // six characters name it
	if got := list(); len(got) != 2 || got[0] != fresh || got[1] != old {
		t.Errorf("after the new session's turn: %q; want it first", got)
	}
	if got := srv.messages(3); !strings.Contains(got, "A new session") {
		t.Errorf("--session %s did not continue %s: %s", fresh[:6], fresh, got)
	}
	if r := c.ok("sessions", "show", fresh[:6]); !strings.Contains(r.stdout, "session "+fresh) {
		t.Errorf("sessions show %s:\n%s", fresh[:6], r.stdout)
	}
}

// sessions list -n N prints the N newest sessions from the stored
// metadata and, when more are left, the --cursor of the next page; the
// pages together are the whole listing, and --json carries each
// session's metadata and the next cursor.
func TestSessionsListPages(t *testing.T) {
	skipShort(t, "TestSessionsListContinueAndPrefixes lists through the binary in -short; paging is sessiontest's contract, run by every store")
	t.Parallel()
	srv := newFake(t)
	c := newCLI(t).openai(srv, "sk-test")
	var want []string // newest first
	for i := range 5 {
		srv.add(openaiReply(turn{text: "ok", in: 10 * (i + 1), out: i + 1}))
		id := "s" + string(rune('a'+i))
		c.ok("run", "--tools", "", "--session", id, "Prompt number "+id+"\nsecond line")
		want = append([]string{id}, want...)
	}
	type info struct {
		ID, Title, Model string
		Turns, Messages  int
		Usage            map[string]int
		CostUSD          float64 `json:"cost_usd"`
		CreatedAt        string  `json:"created_at"`
		UpdatedAt        string  `json:"updated_at"`
	}
	var listed struct {
		Sessions []info
		Next     string
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("the listing never ends")
		}
		args := []string{"sessions", "list", "--json", "-n", "2"}
		if cursor != "" {
			args = append(args, "--cursor", cursor)
		}
		listed.Sessions, listed.Next = nil, ""
		if err := json.Unmarshal([]byte(c.ok(args...).stdout), &listed); err != nil {
			t.Fatal(err)
		}
		if len(listed.Sessions) > 2 {
			t.Fatalf("-n 2 printed %d sessions", len(listed.Sessions))
		}
		for _, s := range listed.Sessions {
			got = append(got, s.ID)
			n := int(s.ID[1]-'a') + 1
			if s.Title != "Prompt number "+s.ID || s.Model != "gpt-4o-mini" || s.Turns != 1 || s.Messages != 2 ||
				s.Usage["input_tokens"] != 10*n || s.Usage["output_tokens"] != n || s.CostUSD <= 0 || s.CreatedAt == "" || s.UpdatedAt == "" {
				t.Errorf("listed %+v", s)
			}
		}
		if cursor = listed.Next; cursor == "" {
			break
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("pages of 2 listed %v, want %v", got, want)
	}
	// The table: a page, and on stderr the command for the next one.
	r := c.ok("sessions", "list", "-n", "3")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "se ") || !strings.Contains(lines[1], "Prompt number se") || !strings.Contains(lines[1], "gpt-4o-mini") {
		t.Errorf("sessions list -n 3:\n%s", r.stdout)
	}
	m := regexp.MustCompile(`more: agcore sessions list -n 3 --cursor (\S+)`).FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no next page on stderr: %q", r.stderr)
	}
	r = c.ok("sessions", "list", "-n", "3", "--cursor", m[1])
	lines = strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "sb ") || !strings.HasPrefix(lines[2], "sa ") || r.stderr != "" {
		t.Errorf("the second page:\n%s\n%s", r.stdout, r.stderr)
	}
	// -n 0 (the default) lists them all.
	if r := c.ok("sessions", "list", "-n", "0"); strings.Count(r.stdout, "\n") != 6 {
		t.Errorf("sessions list -n 0:\n%s", r.stdout)
	}
	for _, args := range [][]string{{"-n", "-1"}, {"--cursor", "garbage!"}} {
		if r := c.run("", append([]string{"sessions", "list"}, args...)...); r.code != 2 {
			t.Errorf("sessions list %v: exit %d, %q", args, r.code, r.stderr)
		}
	}
	// sessions show still prints the whole history.
	if r := c.ok("sessions", "show", "sc"); !strings.Contains(r.stdout, "Prompt number sc\nsecond line") {
		t.Errorf("sessions show sc:\n%s", r.stdout)
	}
}

// TestSessionsExport: sessions export ID writes the session whole as JSON
// (its messages in the storage format, decodable back), --markdown as a
// Markdown transcript with each prompt, answer, tool call and result; an
// unknown id exits 1.
func TestSessionsExport(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	writeFiles(t, c.dir, map[string]string{"README.md": "# Demo\nA ```fenced``` project.\n"})
	c.ok("run", "--provider", "demo", "--session", "work", "--tools", "read_file,list_dir", "Summarize README.md")
	c.ok("run", "--provider", "demo", "--session", "work", "And again")

	r := c.ok("sessions", "export", "wo")
	var got struct {
		ID       string        `json:"id"`
		Turns    int           `json:"turns"`
		Messages []llm.Message `json:"messages"`
		Usage    llm.Usage     `json:"usage"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("export: %v\n%s", err, r.stdout)
	}
	var tools int
	for _, m := range got.Messages {
		if m.Role == llm.RoleTool {
			tools++
		}
	}
	if got.ID != "work" || got.Turns != 2 || got.Messages[0].Text() != "Summarize README.md" || tools == 0 || got.Usage.InputTokens == 0 {
		t.Fatalf("export: id %q, %d turns, %d tool results, usage %+v, messages %+v", got.ID, got.Turns, tools, got.Usage, got.Messages)
	}

	md := c.ok("sessions", "export", "--markdown", "work").stdout
	for _, want := range []string{"# Summarize README.md\n", "- session: `work`", "\n## You\n\nSummarize README.md\n", "\n## Assistant\n", "**→ ", "### Tool result: ", "````\n# Demo\nA ```fenced``` project.\n````", "\n## You\n\nAnd again\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("export --markdown lacks %q:\n%s", want, md)
		}
	}
	if r := c.run("", "sessions", "export", "nope"); r.code != 1 || !strings.Contains(r.stderr, `no session "nope"`) {
		t.Errorf("export of an unknown id: exit %d %q", r.code, r.stderr)
	}
}
