package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
)

const chatHelp = `Commands (answered here, never sent to the model):
  /help       this list
  /session    the session's id
  /new        start a new session
  /model      the model and provider
  /prompts    the MCP servers' prompts
  /prompt NAME [ARG=VALUE ...]   send an MCP server's prompt (SERVER/NAME
              when two servers have one of that name; "quote" a value
              with spaces)
  /exit       leave (also /quit, Ctrl-D)
A line that starts with // is sent with one slash less.
Several lines as one prompt: paste them, or type """ on a line, the lines,
and """ again; a line ending in \ also continues on the next.
Ctrl-C cancels a turn (nothing of it is stored); at the prompt it clears
the line, and twice at an empty prompt it exits.`

func (a *app) newChatCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chat [flags]",
		Short: "Chat interactively over the same machinery as run (Ctrl-C cancels a turn, Ctrl-D exits)",
		Long: `Chat runs each prompt you type as a turn of one session, with the same tools,
store and output as run. On a terminal it has a line editor (emacs or vi
keys per ~/.inputrc, history in $AGCORE_HOME/chat_history); a pasted text of
several lines is one prompt. With piped stdin it reads a prompt a line
until end of input.

` + chatHelp + `

` + providerHelp(),
		Example: `  agcore chat
  agcore chat -c
  agcore chat --session work --tools read_file,list_dir,grep,write_file
  agcore chat --provider ollama -m llama3.2
  printf 'Hi\nWhat did I just say?\n' | agcore chat --store memory:
  printf 'Hi\nWhat did I just say?\n' | agcore chat --provider demo --record ~/chat.jsonl && agcore replay ~/chat.jsonl`,
		Args: cobra.NoArgs,
		RunE: a.chat,
	}
	addTurnFlags(cmd.Flags())
	addRecordFlag(cmd.Flags())
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
		return a.failEarly(s, "invalid_request", err)
	}
	opts, err := a.turnOptions(s)
	if err != nil {
		return a.failEarly(s, "invalid_request", err)
	}
	// -a: sent with the first prompt.
	if f, _ := cmd.Flags().GetStringArray("attach"); slices.Contains(f, "-") {
		return a.failEarly(s, "invalid_request", exit(ExitUsage, "-a - attaches stdin, which chat reads its prompts from: attach a FILE instead"))
	}
	if opts.attach, _, err = a.attachments(ctx, cmd, s); err != nil {
		return a.failEarly(s, "invalid_request", err)
	}

	var in lineReader
	if f, ok := a.env.Stdin.(*os.File); ok && f == os.Stdin && isTerminal(f) && isTerminal(a.env.Stdout) {
		tr := newTermReader(s.Home)
		in, opts.ask = tr, tr.ask
	} else {
		in = newPipedReader(a.env.Stdin)
	}

	opts.record = recordPath(cmd)
	opts.cmd = cmd
	rt, err := a.build(ctx, s, opts)
	if err != nil {
		return a.failEarly(s, "", err)
	}
	defer rt.Close()
	closeNamed, err := a.joinHandoffs(ctx, opts.cmd, rt)
	if err != nil {
		return a.failEarly(s, "invalid_request", err)
	}
	defer closeNamed()

	sessionID, existed, err := a.pickSession(ctx, rt, spec)
	if err != nil {
		return a.failEarly(s, "invalid_request", err)
	}
	rt.setSink(a.newSink(s))
	defer rt.sink.Close()

	if !s.JSON {
		which := "new session"
		if existed {
			which = "session " + sessionID
		}
		who := ""
		if s.Agent != "" {
			who = "agent " + s.Agent + " · "
		}
		fmt.Fprintf(a.env.Stderr, "agcore chat · %s%s (%s) · %s · %s\n/help for commands; Ctrl-C cancels a turn, Ctrl-D exits.\n",
			who, s.Model, s.Provider, which, toolSummary(rt))
	}
	interrupted := false // the last thing the user did was Ctrl-C at an empty prompt
	for ctx.Err() == nil {
		text, err := in.next(ctx)
		if errors.Is(err, errInterrupted) {
			if strings.TrimSpace(text) == "" {
				if interrupted {
					break
				}
				interrupted = true
				a.say(s, "(Ctrl-C again or Ctrl-D to exit)")
			}
			continue
		}
		if err != nil { // io.EOF (Ctrl-D), or the command was cancelled
			break
		}
		interrupted = false
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "/") && !strings.HasPrefix(text, "//") {
			send, quit := a.chatCommand(ctx, rt, s, &sessionID, text)
			if quit {
				break
			}
			if send == "" {
				continue
			}
			text = send // /prompt: the MCP prompt's text
		} else {
			text = strings.TrimPrefix(text, "/") // "//x" sends "/x"
		}
		if _, err := a.runTurn(ctx, rt, sessionID, text); err != nil {
			var te *turnError
			if !errors.As(err, &te) {
				return err
			}
		}
	}
	a.chatBye(ctx, rt, sessionID)
	return nil
}

// say prints a line for the person at the terminal (nothing with --json).
func (a *app) say(s *config.Settings, line string) {
	if !s.JSON {
		fmt.Fprintln(a.env.Stderr, line)
	}
}

// chatCommand answers a slash command locally; it reports whether the
// command ends the chat, and what to send the model instead of the line
// (/prompt), if anything.
func (a *app) chatCommand(ctx context.Context, rt *runtime, s *config.Settings, sessionID *string, line string) (send string, quit bool) {
	name, rest, _ := strings.Cut(line, " ")
	switch name {
	case "/prompts":
		a.say(s, a.listPrompts(ctx, rt))
	case "/prompt":
		text, err := a.usePrompt(ctx, rt, rest)
		if err != nil {
			a.say(s, err.Error())
			return "", false
		}
		return text, false
	case "/exit", "/quit":
		return "", true
	case "/help":
		a.say(s, chatHelp)
	case "/session":
		a.say(s, "session "+*sessionID)
	case "/new":
		*sessionID = newSessionID()
		a.say(s, "new session")
	case "/model":
		a.say(s, fmt.Sprintf("%s (%s)", s.Model, s.Provider))
	default:
		a.say(s, fmt.Sprintf("unknown command %s: /help lists the commands (start the line with // to send it to the model)", name))
	}
	return "", false
}

// chatBye says how to continue the session, if it holds anything.
func (a *app) chatBye(ctx context.Context, rt *runtime, sessionID string) {
	if rt.s.JSON {
		return
	}
	stored := false
	if rt.store.Durable {
		if ss, err := rt.store.Load(context.WithoutCancel(ctx), sessionID); err == nil && ss.Turns > 0 {
			stored = true
		}
	}
	if !stored {
		fmt.Fprintln(a.env.Stderr, "nothing was stored")
		return
	}
	fmt.Fprintf(a.env.Stderr, "session %s (continue: agcore chat --session %s)\n", sessionID, sessionID)
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
