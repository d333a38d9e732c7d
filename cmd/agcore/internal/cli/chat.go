package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/chzyer/readline"
	"github.com/spf13/cobra"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
)

const chatPrompt = "> "

func (a *app) newChatCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Chat interactively over the same machinery as run (Ctrl-C cancels a turn, Ctrl-D exits)",
		Long: `Chat reads one prompt a line and runs each as a turn of one session, with the
same tools, store and output as run. On a terminal it keeps a readline prompt
with history ($AGCORE_HOME/chat_history); with piped stdin it reads a prompt
a line until end of input.

Ctrl-C during a turn cancels it (the session keeps its previous state); a
second Ctrl-C, or Ctrl-D at the prompt, exits. Type /exit to leave, /session
to print the session id.

` + providerHelp,
		Example: `  agcore chat
  agcore chat --session work --tools read_file,list_dir,grep,write_file
  agcore chat --provider ollama --model llama3.2
  printf 'Hi\nWhat did I just say?\n' | agcore chat --store memory:`,
		Args: cobra.NoArgs,
		RunE: a.chat,
	}
	addTurnFlags(cmd.Flags())
	return cmd
}

func (a *app) chat(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	s, err := a.turnSettings(cmd)
	if err != nil {
		return err
	}
	spec, err := sessionSpecOf(cmd)
	if err != nil {
		return err
	}
	opts := a.turnOptions(s)

	var in lineReader
	if f, ok := a.env.Stdin.(*os.File); ok && isTerminal(f) && isTerminal(a.env.Stdout) {
		rl, err := a.readline(s)
		if err != nil {
			return exit(ExitFailed, "chat: %v", err)
		}
		defer rl.Close()
		in = rl
		opts.ask = rl.ask
	} else {
		in = newPipedLines(a.env.Stdin)
	}

	rt, err := a.build(ctx, s, opts)
	if err != nil {
		return err
	}
	defer rt.Close()
	sessionID, _, err := a.pickSession(ctx, rt, spec)
	if err != nil {
		return err
	}
	rt.sink = a.newSink(s)
	defer rt.sink.Close()

	if !s.JSON {
		fmt.Fprintf(a.env.Stderr, "agcore chat · %s (%s) · session %s · %s\nCtrl-C cancels a turn, Ctrl-D exits, /help for commands.\n",
			s.Model, s.Provider, sessionID, toolSummary(rt))
	}
	interrupted := false // the last thing the user did was Ctrl-C
	for ctx.Err() == nil {
		line, err := in.next(ctx)
		if errors.Is(err, readline.ErrInterrupt) {
			if line == "" {
				if interrupted {
					break
				}
				interrupted = true
				fmt.Fprintln(a.env.Stderr, "(Ctrl-C again or Ctrl-D to exit)")
			}
			continue
		}
		if err != nil { // io.EOF (Ctrl-D), or the command was cancelled
			break
		}
		line = strings.TrimSpace(line)
		switch line {
		case "":
			continue
		case "/exit", "/quit":
			return a.chatBye(s, sessionID)
		case "/session":
			fmt.Fprintln(a.env.Stderr, "session "+sessionID)
			continue
		case "/help":
			fmt.Fprintln(a.env.Stderr, "/session prints the session id, /exit leaves; Ctrl-C cancels a turn, Ctrl-D exits.")
			continue
		}
		interrupted = false
		if _, err := a.runTurn(ctx, rt, sessionID, line); err != nil {
			var te *turnError
			if !errors.As(err, &te) {
				return err
			}
			interrupted = te.interrupted
		}
	}
	return a.chatBye(s, sessionID)
}

func (a *app) chatBye(s *config.Settings, sessionID string) error {
	if !s.JSON {
		fmt.Fprintf(a.env.Stderr, "session %s (continue: agcore chat --session %s)\n", sessionID, sessionID)
	}
	return nil
}

// toolSummary names the tools offered, for the chat banner.
func toolSummary(rt *runtime) string {
	n := len(rt.agent.Tools())
	if n == 0 {
		return "no tools"
	}
	names := make([]string, 0, n)
	for _, t := range rt.agent.Tools() {
		names = append(names, t.Name())
	}
	if n > 6 {
		return fmt.Sprintf("%d tools (%s, …)", n, strings.Join(names[:6], ", "))
	}
	return "tools: " + strings.Join(names, ", ")
}

// lineReader gives chat its prompts.
type lineReader interface {
	next(ctx context.Context) (string, error)
}

// rlReader is the interactive prompt, with history.
type rlReader struct{ rl *readline.Instance }

func (a *app) readline(s *config.Settings) (*rlReader, error) {
	history := ""
	if err := os.MkdirAll(s.Home, 0o700); err == nil {
		history = filepath.Join(s.Home, "chat_history")
		// Create it private before readline opens it.
		if f, err := os.OpenFile(history, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			f.Close()
		}
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:          chatPrompt,
		HistoryFile:     history,
		InterruptPrompt: "^C",
		// Prompts are saved by next, not approval answers.
		DisableAutoSaveHistory: true,
		Stdout:                 a.env.Stdout,
		Stderr:                 a.env.Stderr,
	})
	if err != nil {
		return nil, err
	}
	return &rlReader{rl: rl}, nil
}

func (r *rlReader) next(context.Context) (string, error) {
	line, err := r.rl.Readline()
	if err == nil && strings.TrimSpace(line) != "" {
		_ = r.rl.SaveHistory(line)
	}
	return line, err
}

// ask asks an approval question on the prompt line.
func (r *rlReader) ask(_ context.Context, question string) (string, error) {
	r.rl.SetPrompt(question)
	defer r.rl.SetPrompt(chatPrompt)
	return r.rl.Readline()
}

func (r *rlReader) Close() error { return r.rl.Close() }

// pipedLines reads prompts from a pipe, a line at a time.
type pipedLines struct{ asker lineAsker }

func newPipedLines(r io.Reader) *pipedLines {
	return &pipedLines{asker: lineAsker{w: io.Discard, r: r}}
}

func (p *pipedLines) next(ctx context.Context) (string, error) { return p.asker.ask(ctx, "") }
