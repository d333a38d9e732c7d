// Package cli implements the agcore command: its cobra commands, the
// pipeline they build (provider adapter, middleware, tools, agent, store)
// and the way a turn is run and shown.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// Exit statuses.
const (
	ExitOK          = 0   // the command succeeded; after a turn, its done event
	ExitFailed      = 1   // the turn failed (an error event) or the command could not do its job
	ExitUsage       = 2   // bad flags or arguments, or no usable provider configured
	ExitInterrupted = 130 // cancelled with Ctrl-C (128 + SIGINT)
)

// Env is what the command runs with: main passes the process's own.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv looks up an environment variable; nil means os.LookupEnv.
	Getenv func(string) (string, bool)
	// Cwd is the working directory and UserHome the user's home (for
	// ~/.agcore).
	Cwd, UserHome string
	// Signals delivers interrupts (Ctrl-C, SIGTERM); nil means none.
	Signals <-chan os.Signal
	// Exit ends the process at once (a repeated Ctrl-C); nil means os.Exit.
	Exit func(code int)
}

// exitError carries an exit status; its message, if any, has not been
// printed yet.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// exit returns an error that makes Main exit with code after printing msg
// (nothing when msg is empty).
func exit(code int, format string, args ...any) error {
	msg := ""
	if format != "" {
		msg = fmt.Sprintf(format, args...)
	}
	return &exitError{code: code, msg: msg}
}

// app is one invocation of the command.
type app struct {
	env     Env
	intr    *interrupts
	otelURL string // --otel, read by build (otel.go)
}

// Main runs the command line args (without the program name) and returns
// the exit status.
func Main(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.LookupEnv
	}
	if env.Exit == nil {
		env.Exit = os.Exit
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &app{env: env, intr: newInterrupts(cancel, env.Exit)}
	if env.Signals != nil {
		stop := a.intr.watch(env.Signals)
		defer stop()
	}
	root := a.newRoot()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(env.Stderr, "agcore: "+ee.msg)
		}
		return ee.code
	}
	// Cobra's own errors: unknown commands and flags, wrong arguments.
	fmt.Fprintf(env.Stderr, "agcore: %v (see agcore --help)\n", err)
	return ExitUsage
}

func (a *app) newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "agcore",
		Short: "Run LLM agents from the command line: one-shot, chat, sessions, tools",
		Long: `agcore runs an LLM agent in your terminal: the model streams its answer, calls
the built-in file tools (confined to --root) and any MCP server's tools, and
every turn is kept in a session you can continue, inspect or remove.

Start with the offline demo, which needs no key:

  agcore demo

Then configure a provider (agcore run --help shows how) and run a turn or chat.`,
		Example: `  agcore demo
  agcore run "What does this repository do?"
  agcore run --provider anthropic --json "List the Go packages here" | jq .
  agcore chat --session work
  agcore sessions list`,
		Version:           version(),
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return exit(ExitUsage, "%v (see %s --help)", err, c.CommandPath())
	})
	root.AddCommand(a.withTemporal(a.newRunCmd()), a.newChatCmd(), a.newDemoCmd(), a.newSessionsCmd(), a.newModelsCmd(), a.newConfigCmd())
	root.AddCommand(a.newWorkerCmd(), a.newApproveDurableCmd()) // durable.go
	root.AddCommand(a.newServeCmd())
	root.AddCommand(a.newVersionCmd()) // version.go
	root.AddCommand(a.newReplayCmd())  // replay.go
	root.AddCommand(a.newEvalCmd())    // eval.go
	root.AddCommand(a.newMCPCmd())     // mcpcmd.go
	a.registerCompletions(root)
	rejectUnknownSubcommands(root)
	withCompletionExamples(root)
	return root
}

// rejectUnknownSubcommands makes a command that only groups others
// (agcore sessions) fail on an unknown subcommand with exit status 2, as
// the root does, where cobra would print its help and succeed. Alone, it
// still prints its help.
func rejectUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		rejectUnknownSubcommands(sub)
	}
	if c.Parent() == nil || !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return exit(ExitUsage, "unknown command %q for %q (see %s --help)", args[0], cmd.CommandPath(), cmd.CommandPath())
		}
		return cmd.Help()
	}
}

// isTerminal reports whether v is a terminal (a *os.File on a TTY).
func isTerminal(v any) bool {
	f, ok := v.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	fd := f.Fd()
	return isatty.IsTerminal(fd) || isatty.IsCygwinTerminal(fd)
}

// termWidth returns the width of the terminal v is, or 0.
func termWidth(v any) int {
	f, ok := v.(interface{ Fd() uintptr })
	if !ok {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// colorOK reports whether ANSI colours may be used on a terminal.
func (a *app) colorOK() bool {
	if v, ok := a.env.Getenv("NO_COLOR"); ok && v != "" {
		return false
	}
	term, _ := a.env.Getenv("TERM")
	return !strings.EqualFold(term, "dumb")
}
