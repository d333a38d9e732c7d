package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

func (a *app) newSessionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show and remove stored sessions",
		Long: `Sessions are kept in the store (--store; default the embedded SQLite database
$AGCORE_HOME/agcore.db). Each run or chat turn is appended to its session only
when it completes.`,
		Example: `  agcore sessions list
  agcore sessions show 20260105-143012.123-9f86d081884c7d65d6d4f5e2
  agcore sessions show --json work | jq '.messages | length'
  agcore sessions rm work`,
		Args: cobra.NoArgs,
	}
	addStoreFlags(cmd.PersistentFlags())

	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the sessions, most recently updated first",
		Long: `List prints one line per session: id, turns, messages and when it was last
updated. With --json it prints {"sessions":[{"id","messages","turns","created_at","updated_at"},...]}.`,
		Example: `  agcore sessions list
  agcore sessions list --json | jq -r '.sessions[].id'`,
		Args: cobra.NoArgs,
		RunE: a.sessionsList,
	}
	list.Flags().Bool("json", false, "print JSON")

	show := &cobra.Command{
		Use:   "show ID [--json]",
		Short: "Print a session's messages",
		Long: `Show prints the session's messages. With --json it prints {"id":"ID","messages":[...]},
the messages in the storage format of the message model: each tagged by
"type" (system, user, assistant, tool_result) with "content", a list of
blocks each tagged by "type" (text, image, audio, file, tool_use, thinking,
redacted_thinking, extension); a tool_result message also has "tool_call_id"
and "is_error".`,
		Example: `  agcore sessions show work
  agcore sessions show --json work`,
		Args: cobra.ExactArgs(1),
		RunE: a.sessionsShow,
	}
	show.Flags().Bool("json", false, "print the messages as JSON in their storage format")

	rm := &cobra.Command{
		Use:     "rm ID",
		Short:   "Remove a session",
		Example: `  agcore sessions rm work`,
		Args:    cobra.ExactArgs(1),
		RunE:    a.sessionsRemove,
	}
	cmd.AddCommand(list, show, rm)
	return cmd
}

// openSessions opens the store the command's settings name.
func (a *app) openSessions(cmd *cobra.Command) (*openedStore, error) {
	s, err := a.settings(cmd)
	var se *config.SetupError
	if err != nil && !errors.As(err, &se) { // the provider does not matter here
		return nil, err
	}
	st, err := openStore(cmd.Context(), s.Store, s.Home, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, exit(ExitFailed, "%v", err)
	}
	return st, nil
}

func (a *app) sessionsList(cmd *cobra.Command, _ []string) error {
	st, err := a.openSessions(cmd)
	if err != nil {
		return err
	}
	defer st.close()
	var all []session.Info
	for cursor := ""; ; {
		page, err := st.List(cmd.Context(), session.ListOptions{Cursor: cursor})
		if err != nil {
			return exit(ExitFailed, "listing sessions: %v", err)
		}
		all = append(all, page.Sessions...)
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		if all == nil {
			all = []session.Info{}
		}
		return writeJSON(a.env.Stdout, map[string]any{"sessions": all})
	}
	if len(all) == 0 {
		fmt.Fprintf(a.env.Stderr, "no sessions in %s\n", st.desc)
		return nil
	}
	tw := tabwriter.NewWriter(a.env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTURNS\tMESSAGES\tUPDATED")
	for _, s := range all {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", s.ID, s.Turns, s.Messages, s.UpdatedAt.Local().Format("2006-01-02 15:04:05"))
	}
	return tw.Flush()
}

func (a *app) sessionsShow(cmd *cobra.Command, args []string) error {
	st, err := a.openSessions(cmd)
	if err != nil {
		return err
	}
	defer st.close()
	s, err := st.Load(cmd.Context(), args[0])
	if err != nil {
		return sessionError(err, args[0], st.desc)
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		msgs := s.Messages
		if msgs == nil {
			msgs = []llm.Message{}
		}
		return writeJSON(a.env.Stdout, struct {
			ID       string        `json:"id"`
			Messages []llm.Message `json:"messages"`
		}{s.ID, msgs})
	}
	return printSession(a.env.Stdout, s)
}

func (a *app) sessionsRemove(cmd *cobra.Command, args []string) error {
	st, err := a.openSessions(cmd)
	if err != nil {
		return err
	}
	defer st.close()
	if err := st.Delete(cmd.Context(), args[0]); err != nil {
		return sessionError(err, args[0], st.desc)
	}
	fmt.Fprintf(a.env.Stdout, "removed session %s\n", args[0])
	return nil
}

func sessionError(err error, id, store string) error {
	switch {
	case errors.Is(err, session.ErrNotFound):
		return exit(ExitFailed, "no session %q in %s", id, store)
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

// printSession writes a session as a readable transcript.
func printSession(w io.Writer, s *session.Session) error {
	cost := "" // a session does not record whether a zero cost was known
	if s.CostUSD > 0 {
		cost = " · " + render.USD(s.CostUSD)
	}
	fmt.Fprintf(w, "session %s · %s · %s · %s input / %s cached / %s output tokens%s · updated %s\n",
		s.ID, count(s.Turns, "turn"), count(len(s.Messages), "message"), render.Thousands(s.Usage.InputTokens),
		render.Thousands(s.Usage.CachedInputTokens), render.Thousands(s.Usage.OutputTokens), cost, s.UpdatedAt.Local().Format(time.DateTime))
	for _, m := range s.Messages {
		fmt.Fprintln(w)
		switch m.Role {
		case llm.RoleTool:
			state := "ok"
			if m.IsError {
				state = "error"
			}
			text := m.Text()
			fmt.Fprintf(w, "[tool result %s: %s, %s]\n%s\n", m.ToolCallID, state, render.Size(len(text)), indent(render.Clip(text, 600)))
			continue
		default:
			fmt.Fprintf(w, "[%s]\n", m.Role)
		}
		for _, b := range m.Content {
			switch b := b.(type) {
			case llm.Text:
				fmt.Fprintln(w, b.Text)
			case llm.Thinking:
				fmt.Fprintf(w, "(thinking) %s\n", b.Text)
			case llm.ToolUse:
				fmt.Fprintf(w, "→ %s %s  [%s]\n", b.Name, render.ShortArgs(b.InputOrEmpty(), 200), b.ID)
			default:
				fmt.Fprintf(w, "(%s block)\n", b.BlockType())
			}
		}
	}
	return nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n  ")
}

// count formats "1 turn", "2 turns".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
