package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

func (a *app) newSessionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, export, fork and remove stored sessions",
		Long: `Sessions are kept in the store (--store; default the embedded SQLite database
$AGCORE_HOME/agcore.db). Each run or chat turn is appended to its session only
when it completes.`,
		Example: `  agcore sessions list
  agcore sessions show 9f86d0     # any unique prefix of an id
  agcore sessions show --json work | jq '.messages | length'
  agcore sessions rm work`,
		Args: cobra.NoArgs,
	}
	addStoreFlags(cmd.PersistentFlags())

	list := &cobra.Command{
		Use:   "list [-n N] [--cursor C] [--json]",
		Short: "List the sessions, most recently updated first",
		Long: `List prints one line per session, newest first: its id, title (the first line
of its first prompt, shortened), the model of its last turn, turns, tokens
(input and output), cost and when it was last updated. It reads only what the
store keeps of each session (never its messages), so it is fast on any number
of sessions. A session id can be given to the other commands, and to
--session, by any unique prefix of it.

With a session limit (the config file's session_max_cost or
session_token_budget, their variables, or --session-max-cost and
--session-token-budget) the tokens and cost columns show spend against it:
"12,000/50,000" and "$0.12/$1.00".

-n N (--limit N) prints the N newest sessions; 0 (the default) prints them all.
When more are left, a last line on stderr gives the command that prints the
next N: the same with --cursor C, C an opaque position in the listing.

With --json it prints {"sessions":[{"id","title","model","turns","messages",
"usage":{"input_tokens","output_tokens","cached_input_tokens",...},"cost_usd",
"created_at","updated_at"},...],"next":"C","session_limits":{"tokens":N,
"cost_usd":N}}; "next" (present only when -n left sessions out) is the
--cursor of the next page, "session_limits" the session limits, when there
are any. Empty fields are left out.

Sessions belong to an owner: agcore serve's principals own theirs, the CLI's
are the single user's (""). List shows the single user's; --all-owners shows
everyone's, each with its "owner".

Listing never creates or changes a store: a store named with --store that
does not exist is an error, and a database you cannot write is read.`,
		Example: `  agcore sessions list
  agcore sessions list -n 20
  agcore sessions list -n 20 --cursor MTc2NzYyNzQwMDAwMDAwMDAwMDp3b3Jr
  agcore sessions list --json | jq -r '.sessions[].id'`,
		Args: cobra.NoArgs,
		RunE: a.sessionsList,
	}
	list.Flags().Bool("json", false, "print JSON")
	list.Flags().IntP("limit", "n", 0, "print at most `N` sessions, the newest (0: all)")
	list.Flags().String("cursor", "", "start after the position `C` a previous -n listing printed")
	list.Flags().Bool("all-owners", false, "list every owner's sessions, not only the single user's")
	list.Flags().String("session-max-cost", "0", "show each session's cost against this limit (default: the config file's session_max_cost) [$AGCORE_SESSION_MAX_COST]")
	list.Flags().Int("session-token-budget", 0, "show each session's tokens against this limit (default: the config file's session_token_budget) [$AGCORE_SESSION_TOKEN_BUDGET]")

	show := &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Print a session as a transcript, with its usage and cost",
		Long: `Show prints the session (ID, or a unique prefix of it) as a transcript: a
header with its model, turns, tokens and cost, then each prompt, answer,
tool call and tool result. With --json it prints {"id":"ID","messages":[...],
"usage":{...},"cost_usd":N,"turns":N,"model":"NAME"}, the messages in the
storage format of the message model: each tagged by "type" (system, user,
assistant, tool_result) with "content", a list of blocks each tagged by
"type" (text, image, audio, file, tool_use, thinking, redacted_thinking,
extension); a tool_result message also has "tool_call_id" and "is_error".`,
		Example: `  agcore sessions show work
  agcore sessions show 20260105-1430
  agcore sessions show --json work | jq '.messages | length'`,
		Args:              cobra.ExactArgs(1),
		RunE:              a.sessionsShow,
		ValidArgsFunction: a.completeSessions,
	}
	show.Flags().Bool("json", false, "print the session as JSON, its messages in their storage format")

	rm := &cobra.Command{
		Use:               "rm ID...",
		Short:             "Remove sessions (each an ID, or a unique prefix of one); none is removed unless every one is found",
		Example:           `  agcore sessions rm work`,
		Args:              cobra.MinimumNArgs(1),
		RunE:              a.sessionsRemove,
		ValidArgsFunction: a.completeSessions,
	}
	fork := &cobra.Command{
		Use:   "fork ID [--at TURN] [--to NEW]",
		Short: "Branch a session at one of its turns into a new session",
		Long: `Fork copies the first TURN turns of the session ID (or a unique prefix of it;
all of its turns without --at) into a new session, NEW or a fresh id, with
the same owner and model, and prints the new id. The source is not
changed; the branch goes on from there (agcore run --session NEW ...), as
"regenerate" and "edit an earlier message" do in a chat. A turn begins with
the user's message: a session whose turns only answered function calls can
be forked at its last turn only.`,
		Example: `  agcore sessions fork work --at 1 --to work-retry
  agcore sessions fork notes`,
		Args:              cobra.ExactArgs(1),
		RunE:              a.sessionsFork,
		ValidArgsFunction: a.completeSessions,
	}
	fork.Flags().Int("at", 0, "the last turn the branch keeps (1 is the first); 0 keeps them all")
	fork.Flags().String("to", "", "the new session's id (default: a fresh one)")
	export := &cobra.Command{
		Use:   "export ID [--markdown]",
		Short: "Write a session out whole: JSON (default) or a Markdown transcript",
		Long: `Export writes the session (ID, or a unique prefix of it) on stdout, whole and
unabridged, to keep or share it. By default it is one JSON object:
{"id","owner","title","model","created_at","updated_at","turns","usage",
"cost_usd","messages":[...],"state":{...},"agents":[...],"parent":{...}},
the messages in the storage format of the message model (see sessions show
--json), the state the session's providers keep, as stored. With --markdown
it is a Markdown transcript: a heading per message (who said it, which agent
answered), the text as written, each tool call with its arguments and each
tool result in full, as fenced blocks. Exporting never changes the store.`,
		Example: `  agcore sessions export work > work.json
  agcore sessions export --markdown work > work.md`,
		Args:              cobra.ExactArgs(1),
		RunE:              a.sessionsExport,
		ValidArgsFunction: a.completeSessions,
	}
	export.Flags().Bool("markdown", false, "write a Markdown transcript instead of JSON")
	cmd.AddCommand(list, show, export, rm, fork)
	return cmd
}

func (a *app) sessionsFork(cmd *cobra.Command, args []string) error {
	at, _ := cmd.Flags().GetInt("at")
	to, _ := cmd.Flags().GetString("to")
	if at < 0 {
		return exit(ExitUsage, "--at must be a turn number (1 or more), or 0 for all of them")
	}
	if to == "" {
		to = session.NewID()
	}
	st, err := a.openSessions(cmd, false)
	if err != nil {
		return err
	}
	defer st.Close()
	id, err := resolveID(cmd.Context(), st, args[0])
	if err != nil {
		return sessionError(err, args[0], st.Description)
	}
	got, err := session.Fork(cmd.Context(), st, id, to, at)
	switch {
	case errors.Is(err, session.ErrNoTurn):
		return exit(ExitUsage, "%v", err)
	case errors.Is(err, session.ErrExists):
		return exit(ExitFailed, "a session %q exists already: name another with --to", to)
	case err != nil:
		return sessionError(err, id, st.Description)
	}
	fmt.Fprintf(a.env.Stderr, "forked session %s at turn %d\n", id, got.Turns)
	fmt.Fprintln(a.env.Stdout, got.ID)
	return nil
}

// openSessions opens the store the command's settings name; toRead opens
// it for reading only.
func (a *app) openSessions(cmd *cobra.Command, toRead bool) (*openedStore, error) {
	s, err := a.settings(cmd)
	var se *config.SetupError
	if err != nil && !errors.As(err, &se) { // the provider does not matter here
		return nil, err
	}
	if err := config.CheckStore(s.Store); err != nil {
		return nil, exit(ExitUsage, "--store %q %v", session.Redact(s.Store), err)
	}
	return openStore(cmd.Context(), s.Store, s.Home, slog.New(slog.DiscardHandler), toRead)
}

// listPage is the most sessions sessions list asks a store for at once.
const listPage = 1000

func (a *app) sessionsList(cmd *cobra.Command, _ []string) error {
	limit, _ := cmd.Flags().GetInt("limit")
	cursor, _ := cmd.Flags().GetString("cursor")
	anyOwner, _ := cmd.Flags().GetBool("all-owners")
	if limit < 0 {
		return exit(ExitUsage, "--limit %d: want 0 (all) or more", limit)
	}
	st, err := a.openSessions(cmd, true)
	if err != nil {
		return err
	}
	defer st.Close()
	// Only the stored metadata is read, a page at a time: pages of
	// listPage sessions, as few as the listing needs (a store that reads
	// every summary for each page, the file store, reads them once).
	var all []session.Info
	next := ""
	for {
		opts := session.ListOptions{Cursor: cursor, AnyOwner: anyOwner, Limit: listPage}
		if limit > 0 {
			opts.Limit = min(limit-len(all), listPage)
		}
		page, err := st.List(cmd.Context(), opts)
		if err != nil {
			if cursor != "" && len(all) == 0 {
				return exit(ExitUsage, "--cursor %q: %v", cursor, err)
			}
			return exit(ExitFailed, "listing sessions in %s: %v", st.Description, err)
		}
		all = append(all, page.Sessions...)
		cursor = page.Next
		if cursor == "" {
			break
		}
		if limit > 0 && len(all) >= limit {
			next = cursor
			break
		}
	}
	if all == nil {
		all = []session.Info{}
	}
	var limits budget.Limits                   // the session limits spend is shown against
	if set, _ := a.settings(cmd); set != nil { // a missing provider does not matter here
		limits = budget.Limits{CostUSD: set.SessionMaxCost, Tokens: set.SessionTokenBudget}
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		var lim *budget.Limits
		if !limits.IsZero() {
			lim = &limits
		}
		return writeJSON(a.env.Stdout, struct {
			Sessions []session.Info `json:"sessions"`
			Next     string         `json:"next,omitempty"`
			Limits   *budget.Limits `json:"session_limits,omitempty"`
		}{all, next, lim})
	}
	if len(all) == 0 {
		fmt.Fprintf(a.env.Stderr, "no sessions in %s yet\n", st.Description)
		return nil
	}
	// One write for the table, not one per cell (tabwriter writes each
	// cell and its padding apart).
	out := bufio.NewWriterSize(a.env.Stdout, 64<<10)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	owners := ""
	if anyOwner {
		owners = "OWNER\t"
	}
	fmt.Fprintln(tw, "ID\t"+owners+"TITLE\tMODEL\tTURNS\tTOKENS\tCOST\tUPDATED")
	for _, s := range all {
		owner := ""
		if anyOwner {
			owner = orDash(s.Owner) + "\t"
		}
		tokens, usd := render.Thousands(s.Usage.InputTokens+s.Usage.OutputTokens), cost(s.CostUSD)
		if limits.Tokens > 0 {
			tokens += "/" + render.Thousands(limits.Tokens)
		}
		if limits.CostUSD > 0 {
			usd += "/" + render.USD(limits.CostUSD)
		}
		fmt.Fprintf(tw, "%s\t%s%s\t%s\t%d\t%s\t%s\t%s\n", s.ID, owner, orDash(clipTitle(s.Title, 48)), orDash(s.Model), s.Turns,
			tokens, usd, s.UpdatedAt.Local().Format("2006-01-02 15:04"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if next != "" {
		fmt.Fprintf(a.env.Stderr, "more: agcore sessions list -n %d --cursor %s\n", limit, next)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cost formats a session's cost; a session does not record whether a zero
// cost was known, so 0 is shown as unknown.
func cost(v float64) string {
	if v == 0 {
		return "-"
	}
	return render.USD(v)
}

// loadSession loads the session id names (or a unique prefix of it).
func loadSession(ctx context.Context, st *openedStore, id string) (*session.Session, error) {
	full, err := resolveID(ctx, st, id)
	if err != nil {
		return nil, sessionError(err, id, st.Description)
	}
	s, err := st.Load(ctx, full)
	if err != nil {
		return nil, sessionError(err, full, st.Description)
	}
	return s, nil
}

func (a *app) sessionsShow(cmd *cobra.Command, args []string) error {
	st, err := a.openSessions(cmd, true)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := loadSession(cmd.Context(), st, args[0])
	if err != nil {
		return err
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		msgs := s.Messages
		if msgs == nil {
			msgs = []llm.Message{}
		}
		meta := metaOf(s)
		return writeJSON(a.env.Stdout, struct {
			ID       string           `json:"id"`
			Messages []llm.Message    `json:"messages"`
			Model    string           `json:"model,omitempty"`
			Provider string           `json:"provider,omitempty"`
			Turns    int              `json:"turns"`
			Usage    render.UsageJSON `json:"usage"`
			CostUSD  float64          `json:"cost_usd"`
			// Agents and Parent: see session.AgentsKey and session.ParentKey.
			Agents []session.AgentSpan `json:"agents,omitempty"`
			Parent *session.Parent     `json:"parent,omitempty"`
		}{s.ID, msgs, meta.Model, meta.Provider, s.Turns,
			render.UsageJSON{InputTokens: s.Usage.InputTokens, OutputTokens: s.Usage.OutputTokens, CachedInputTokens: s.Usage.CachedInputTokens}, s.CostUSD,
			session.Agents(s), parentOf(s)})
	}
	return buffered(a.env.Stdout, func(w io.Writer) error { return printSession(w, s) })
}

// buffered runs write on a buffer over w, flushed at its end: a text of
// many small pieces goes out in a few writes.
func buffered(w io.Writer, write func(io.Writer) error) error {
	b := bufio.NewWriterSize(w, 64<<10)
	if err := write(b); err != nil {
		b.Flush()
		return err
	}
	return b.Flush()
}

func (a *app) sessionsRemove(cmd *cobra.Command, args []string) error {
	st, err := a.openSessions(cmd, false)
	if err != nil {
		return err
	}
	defer st.Close()
	// Every id is resolved before any session is removed: a mistyped one
	// removes nothing.
	ids := make([]string, 0, len(args))
	for _, arg := range args {
		id, err := resolveID(cmd.Context(), st, arg)
		if err != nil {
			return sessionError(err, arg, st.Description)
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		if err := st.Delete(cmd.Context(), id); err != nil {
			return sessionError(err, id, st.Description)
		}
		fmt.Fprintf(a.env.Stdout, "removed session %s\n", id)
	}
	return nil
}

func sessionError(err error, id, store string) error {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return err
	case errors.Is(err, session.ErrNotFound):
		return exit(ExitFailed, "no session %q in %s (agcore sessions list shows them)", id, store)
	case errors.Is(err, session.ErrInvalidID):
		return exit(ExitUsage, "%v", err)
	}
	return exit(ExitFailed, "session %q: %v", id, err)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printSession writes a session as a readable transcript: a header with
// its totals, then each message.
func printSession(w io.Writer, s *session.Session) error {
	meta := metaOf(s)
	model := ""
	if meta.Model != "" {
		model = fmt.Sprintf(" · %s (%s)", meta.Model, meta.Provider)
	}
	costText := "" // a session does not record whether a zero cost was known
	if s.CostUSD > 0 {
		costText = " · " + render.USD(s.CostUSD)
	}
	fmt.Fprintf(w, "session %s%s · %s · %s input / %s cached / %s output tokens%s · updated %s\n",
		s.ID, model, count(s.Turns, "turn"), render.Thousands(s.Usage.InputTokens),
		render.Thousands(s.Usage.CachedInputTokens), render.Thousands(s.Usage.OutputTokens), costText, s.UpdatedAt.Local().Format(time.DateTime))
	if p := parentOf(s); p != nil {
		fmt.Fprintf(w, "sub-agent session: agent %s's call %s in session %s (turn %s) ran it\n", orDash(p.Agent), p.ToolCallID, orDash(p.Session), p.RunID)
	}
	spans := session.Agents(s)   // who answered what, when the session's agents hand off
	names := map[string]string{} // tool call id → tool name
	for i, m := range s.Messages {
		switch m.Role {
		case llm.RoleTool:
			state, text := "✓", m.Text()
			if m.IsError {
				state = "✗ error:"
			}
			fmt.Fprintf(w, "  %s %s [tool result %s, %s]\n%s\n", state, names[m.ToolCallID], m.ToolCallID, render.Size(len(text)), indent(render.Clip(text, 600), "      "))
			continue
		case llm.RoleUser:
			fmt.Fprint(w, "\n── you ──\n")
		case llm.RoleAssistant:
			if who := session.AgentAt(spans, i); who != "" {
				fmt.Fprintf(w, "\n── assistant (%s) ──\n", who)
			} else {
				fmt.Fprint(w, "\n── assistant ──\n")
			}
		default:
			fmt.Fprintf(w, "\n── %s ──\n", m.Role)
		}
		for _, b := range m.Content {
			switch b := b.(type) {
			case llm.Text:
				fmt.Fprintln(w, strings.TrimRight(b.Text, "\n"))
			case llm.Thinking:
				fmt.Fprintf(w, "(thinking) %s\n", b.Text)
			case llm.ToolUse:
				names[b.ID] = b.Name
				fmt.Fprintf(w, "  → %s %s  [%s]\n", b.Name, render.ShortArgs(b.InputOrEmpty(), 200), b.ID)
			default:
				fmt.Fprintf(w, "(%s block)\n", b.BlockType())
			}
		}
	}
	return nil
}

// parentOf returns the calling run a sub-agent's session records, or nil.
func parentOf(s *session.Session) *session.Parent {
	p, ok, err := session.GetState[session.Parent](s, session.ParentKey)
	if !ok || err != nil {
		return nil
	}
	return &p
}

func indent(s, by string) string {
	return by + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+by)
}

// count formats "1 turn", "2 turns".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func (a *app) sessionsExport(cmd *cobra.Command, args []string) error {
	st, err := a.openSessions(cmd, true)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := loadSession(cmd.Context(), st, args[0])
	if err != nil {
		return err
	}
	if md, _ := cmd.Flags().GetBool("markdown"); md {
		return buffered(a.env.Stdout, func(w io.Writer) error { return writeMarkdown(w, s) })
	}
	msgs := s.Messages
	if msgs == nil {
		msgs = []llm.Message{}
	}
	return writeJSON(a.env.Stdout, struct {
		ID        string                     `json:"id"`
		Owner     string                     `json:"owner,omitempty"`
		Title     string                     `json:"title,omitempty"`
		Model     string                     `json:"model,omitempty"`
		CreatedAt time.Time                  `json:"created_at"`
		UpdatedAt time.Time                  `json:"updated_at"`
		Turns     int                        `json:"turns"`
		Usage     llm.Usage                  `json:"usage"`
		CostUSD   float64                    `json:"cost_usd"`
		Messages  []llm.Message              `json:"messages"`
		State     map[string]json.RawMessage `json:"state,omitempty"`
		Agents    []session.AgentSpan        `json:"agents,omitempty"`
		Parent    *session.Parent            `json:"parent,omitempty"`
	}{s.ID, s.Owner, s.Title, s.Model, s.CreatedAt, s.UpdatedAt, s.Turns, s.Usage, s.CostUSD,
		msgs, s.State, session.Agents(s), parentOf(s)})
}

// writeMarkdown writes a session as a Markdown transcript, unabridged.
func writeMarkdown(w io.Writer, s *session.Session) error {
	bw := &errWriter{w: w}
	title := s.Title
	if title == "" {
		title = s.ID
	}
	fmt.Fprintf(bw, "# %s\n\n", firstLine(title))
	meta := metaOf(s)
	fmt.Fprintf(bw, "- session: `%s`\n", s.ID)
	if meta.Model != "" {
		fmt.Fprintf(bw, "- model: %s (%s)\n", meta.Model, orDash(meta.Provider))
	}
	fmt.Fprintf(bw, "- %s · %s input / %s cached / %s output tokens", count(s.Turns, "turn"),
		render.Thousands(s.Usage.InputTokens), render.Thousands(s.Usage.CachedInputTokens), render.Thousands(s.Usage.OutputTokens))
	if s.CostUSD > 0 {
		fmt.Fprintf(bw, " · %s", render.USD(s.CostUSD))
	}
	fmt.Fprintf(bw, "\n- created %s, updated %s\n", s.CreatedAt.UTC().Format(time.RFC3339), s.UpdatedAt.UTC().Format(time.RFC3339))
	if p := parentOf(s); p != nil {
		fmt.Fprintf(bw, "- sub-agent session: agent %s's call `%s` in session `%s`\n", orDash(p.Agent), p.ToolCallID, orDash(p.Session))
	}
	spans := session.Agents(s)
	names := map[string]string{} // tool call id → tool name
	for i, m := range s.Messages {
		switch m.Role {
		case llm.RoleTool:
			head := "Tool result"
			if m.IsError {
				head = "Tool error"
			}
			fmt.Fprintf(bw, "\n### %s: %s (`%s`)\n\n", head, orDash(names[m.ToolCallID]), m.ToolCallID)
			fence(bw, "", m.Text())
			continue
		case llm.RoleUser:
			fmt.Fprint(bw, "\n## You\n\n")
		case llm.RoleAssistant:
			if who := session.AgentAt(spans, i); who != "" {
				fmt.Fprintf(bw, "\n## Assistant (%s)\n\n", who)
			} else {
				fmt.Fprint(bw, "\n## Assistant\n\n")
			}
		default:
			fmt.Fprintf(bw, "\n## %s\n\n", strings.ToUpper(string(m.Role[:1]))+string(m.Role[1:]))
		}
		for _, b := range m.Content {
			switch b := b.(type) {
			case llm.Text:
				fmt.Fprintf(bw, "%s\n\n", strings.TrimRight(b.Text, "\n"))
			case llm.Thinking:
				fmt.Fprintf(bw, "> *thinking:* %s\n\n", strings.ReplaceAll(strings.TrimSpace(b.Text), "\n", "\n> "))
			case llm.ToolUse:
				names[b.ID] = b.Name
				fmt.Fprintf(bw, "**→ %s** (`%s`)\n\n", b.Name, b.ID)
				fence(bw, "json", string(b.InputOrEmpty()))
			case llm.Image:
				fmt.Fprintf(bw, "*(image %s)*\n\n", orDash(b.MediaType))
			case llm.File:
				fmt.Fprintf(bw, "*(file %s %s)*\n\n", b.Name, orDash(b.MediaType))
			default:
				fmt.Fprintf(bw, "*(%s block)*\n\n", b.BlockType())
			}
		}
	}
	return bw.err
}

// fence writes text as a fenced code block whose fence is longer than any
// run of backticks inside it.
func fence(w io.Writer, lang, text string) {
	ticks := "```"
	for strings.Contains(text, ticks) {
		ticks += "`"
	}
	fmt.Fprintf(w, "%s%s\n%s\n%s\n\n", ticks, lang, strings.TrimRight(text, "\n"), ticks)
}

// firstLine is s's first line, trimmed.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
