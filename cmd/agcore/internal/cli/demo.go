package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/provider/demo"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool/fstool"
)

// demoDelay paces the demo model's text on a terminal, so a person can
// watch it stream.
const demoDelay = 20 * time.Millisecond

// demoPrompt is the user turn the demo runs.
const demoPrompt = "Give me a short overview of the working directory: list it, read the files that say what it is, and summarize them."

func (a *app) newDemoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole machinery offline on a built-in scripted model (no key needed)",
		Long: `Demo runs one real turn with no network and no key. A built-in scripted demo
model (not a language model: it follows a fixed plan) drives a real session:
it lists the working directory (or --root) with the real list_dir tool, reads
a few of its files in parallel with read_file, and streams a summary made
from what the tools returned. The turn goes through the same pipeline as run
(logging, retries, hooks, the tool loop, the agent) and is stored in the
embedded SQLite database ($AGCORE_HOME/agcore.db, or --store), so you can
inspect it afterwards with agcore sessions show.`,
		Example: `  agcore demo
  agcore demo --root ~/src/project
  agcore demo --json | jq -c 'select(.type != "text_delta")'
  AGCORE_HOME=$(mktemp -d) agcore demo`,
		Args: cobra.NoArgs,
		RunE: a.demo,
	}
	fs := cmd.Flags()
	fs.String("root", "", "the directory the demo looks at (default: the working directory)")
	addStoreFlags(fs)
	addOutputFlags(fs)
	return cmd
}

func (a *app) demo(cmd *cobra.Command, _ []string) error {
	s, err := a.settings(cmd)
	var se *config.SetupError
	if err != nil && !errors.As(err, &se) {
		return err
	}
	// The demo needs no provider and runs the read-only built-in tools
	// only: no MCP server and nothing that writes.
	s.Provider, s.Model = "demo", demo.Name
	s.Kind, _ = config.KindNamed("demo")
	s.Tools, s.MCP, s.Yes = fstool.DefaultNames, nil, false
	if err := s.Check(); err != nil {
		return a.failEarly(s, "invalid_request", exit(ExitUsage, "%v", err))
	}
	opts, err := a.turnOptions(s)
	if err != nil {
		return a.failEarly(s, "invalid_request", err)
	}
	return a.oneTurn(cmd.Context(), s, opts, sessionSpec{}, demoPrompt, textNotes{
		before: func(rt *runtime, _ string) string {
			return fmt.Sprintf("agcore demo · model: %s\n  tools %s on %s · store %s\n\n> %s\n\n",
				demo.Label, strings.Join(s.Tools, ", "), s.Root, rt.store.Description, demoPrompt)
		},
		after: func(rt *runtime, t turnOutcome) string {
			id := t.id
			if t.err != nil {
				return ""
			}
			if !rt.store.Durable {
				return fmt.Sprintf("\nnot stored (--store %s)", rt.store.Description)
			}
			store := ""
			if s.Store != "" {
				store = " --store " + session.Redact(s.Store)
			}
			return fmt.Sprintf(`
session %s stored in %s
  inspect it:   agcore sessions show%s %s
  list them:    agcore sessions list%s
  continue it:  agcore chat%s --session %s   (with a provider configured: see agcore run --help;
                or offline, on the same scripted model: --provider demo)`, id, rt.store.Description, store, id, store, store, id)
		},
	})
}
