package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/cmd/agcore/internal/render"
)

const jsonHelp = `With --json, stdout carries one JSON event a line:
  {"type":"start","session":"ID","model":"NAME"}
  {"type":"thinking_delta","text":"..."}
  {"type":"text_delta","text":"..."}
  {"type":"tool_call","id":"call_1","name":"read_file","input":{...}}
  {"type":"tool_result","id":"call_1","name":"read_file","is_error":false,"output":"..."}
  {"type":"done","finish_reason":"stop","text":"...","usage":{"input_tokens":N,"output_tokens":N,"cached_input_tokens":N},"cost_usd":N,"cost_known":true}
  {"type":"error","code":"rate_limited|auth|context_length|overloaded|server|network|invalid_request|blocked|budget|cancelled|timeout|internal","message":"..."}
With spending limits (--max-cost, --token-budget, --session-max-cost,
--session-token-budget) done has "budget": what is left of them; a model
call that could cross one is not sent: the turn ends with done
(finish_reason "budget": what it did is stored) and then an error event
with the code "budget" naming the limit, and the exit status is 1.
Exit status: 0 after done; 1 after error (the session is left as it was);
2 for a usage or configuration mistake, or no provider, found before any
model call; 130 when cancelled with Ctrl-C (one quiet line; with --json an
error event with the code "cancelled").`

func (a *app) newRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [flags] [PROMPT]",
		Short: "Run one user turn, the whole tool loop included, and stream the answer",
		Long: `Run sends PROMPT (the arguments joined by spaces) as one user turn. Piped
stdin is read too: alone it is the prompt ("-" or no arguments), with
arguments it follows them after a blank line (git diff | agcore run "Review
this:"). The model may call tools, as many rounds as --max-steps allows; the
answer streams on stdout (rendered as Markdown on a terminal a line at a
time, unless --raw), tool calls, thinking and the usage line on stderr. The turn is stored in the
session (--session ID or a unique prefix of one, -c for the newest, or a new
one) only when it completes; its id is printed then, and otherwise the
output says nothing was stored. --timeout bounds the whole turn; a server
silent for --idle-timeout (counted across retries) is reported as not
responding.

With --schema FILE.json the answer is one JSON object that validates
against the JSON Schema in the file (asked for through the provider's
native structured-output mode, or a forced answer tool where it has none;
tools still run first): it is printed alone, compact, on stdout, and
nothing else is (with --json, the events go to stdout as usual and the
done event carries the answer as "object"). An answer that does not validate gets the model one
repair turn; if none validates, or the model refuses, run exits 1 and
says why on stderr.

` + providerHelp() + "\n\n" + jsonHelp,
		Example: `  agcore run "Summarize README.md"
  agcore run -c "And what about the tests?"
  git diff | agcore run -m sonnet "Review this change:"
  agcore run --session notes "And what about the tests?"
  agcore run --provider ollama --model qwen3 --tools read_file,grep "Where is main defined?"
  agcore run --tools read_file,write_file --yes "Write a CHANGELOG.md from the git log in log.txt"
  agcore run --record ~/run.jsonl "Summarize README.md"
  agcore run --mcp 'npx -y @modelcontextprotocol/server-everything' "Add 2 and 3 with get-sum"
  git diff | agcore run --json - | jq -r 'select(.type=="text_delta").text'
  agcore run --provider demo --schema '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}' "Ada Lovelace wrote the first program"`,
		Args: cobra.ArbitraryArgs,
		RunE: a.run,
	}
	addTurnFlags(cmd.Flags())
	addRecordFlag(cmd.Flags())
	cmd.Flags().String("schema", "", "answer with one JSON object that validates against the JSON Schema in `FILE` (or given inline, starting with {): printed alone on stdout, or exit 1 and the reason; with --json the done event's \"object\"")
	return cmd
}

func (a *app) run(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	s, err := a.turnSettings(cmd)
	if err != nil {
		return err
	}
	attach, stdinTaken, err := a.attachments(ctx, cmd, s)
	if err != nil {
		return a.failEarly(s, "invalid_request", err)
	}
	prompt, err := a.prompt(args, stdinTaken)
	if err != nil {
		return a.failEarly(s, "invalid_request", err)
	}
	spec, err := sessionSpecOf(cmd)
	if err != nil {
		return a.failEarly(s, "invalid_request", err)
	}
	opts, err := a.turnOptions(s)
	if err != nil {
		return a.failEarly(s, "invalid_request", err)
	}
	if isTerminal(a.env.Stdin) && isTerminal(a.env.Stderr) {
		asker := &lineAsker{w: a.env.Stderr, r: a.env.Stdin}
		opts.ask = asker.ask
	}
	opts.record = recordPath(cmd)
	opts.cmd = cmd
	opts.attach = attach
	// One Ctrl-C ends run: it cancels the turn and the command.
	a.intr.setOneShot()
	if path, _ := cmd.Flags().GetString("schema"); path != "" {
		schema, err := readSchema(path)
		if err != nil {
			return err
		}
		return a.typedTurn(ctx, s, opts, spec, prompt, schema)
	}
	return a.oneTurn(ctx, s, opts, spec, prompt, textNotes{after: storedNote})
}

// storedNote says after a turn whether the session holds it.
func storedNote(rt *runtime, t turnOutcome) string {
	switch {
	case t.err != nil && t.stored && rt.store.Durable:
		return "session " + t.id + " (what the turn did before the limit)"
	case t.err != nil && t.existed && !t.stored:
		return fmt.Sprintf("session %s is as it was", t.id)
	case t.err != nil && !t.stored:
		return ""
	case !rt.store.Durable:
		return fmt.Sprintf("not stored (--store %s)", rt.store.Description)
	}
	return "session " + t.id
}

// textNotes are printed on stderr around a turn in text mode.
type textNotes struct {
	before func(rt *runtime, id string) string
	after  func(rt *runtime, t turnOutcome) string
}

// turnOutcome is what notes know of a turn.
type turnOutcome struct {
	id      string // the session
	existed bool   // it held turns before this one
	err     error  // why the turn did not complete, nil when it did
	stored  bool   // the turn was stored (a spending limit stopped it after its first model call)
}

// oneTurn builds the runtime, picks the session, runs one turn and reports
// its outcome as the exit status.
func (a *app) oneTurn(ctx context.Context, s *config.Settings, opts buildOptions, spec sessionSpec, prompt string, notes textNotes) error {
	rt, err := a.build(ctx, s, opts)
	if err != nil {
		if ctx.Err() != nil { // Ctrl-C while starting (an MCP server, say)
			err = exit(ExitInterrupted, "interrupted while starting: %v", err)
		}
		return a.failEarly(s, "", err)
	}
	defer rt.Close()
	closeNamed, err := a.joinHandoffs(ctx, opts.cmd, rt)
	if err != nil {
		return a.failEarly(s, "invalid_request", err)
	}
	defer closeNamed()
	id, existed, err := a.pickSession(ctx, rt, spec)
	if err != nil {
		return a.failEarly(s, "invalid_request", err)
	}
	rt.setSink(a.newSink(s))
	defer rt.sink.Close()
	if notes.before != nil && !s.JSON {
		fmt.Fprint(a.env.Stderr, notes.before(rt, id))
	}
	resp, err := a.runTurn(ctx, rt, id, prompt)
	if notes.after != nil {
		if note := notes.after(rt, turnOutcome{id: id, existed: existed, err: err, stored: resp != nil}); note != "" {
			rt.sink.Note(note)
		}
	}
	var te *turnError
	if errors.As(err, &te) {
		if te.interrupted {
			return exit(ExitInterrupted, "")
		}
		return exit(ExitFailed, "")
	}
	return err
}

// failEarly reports an error that happened before the turn could start:
// with --json also as an error event, so that a program reading stdout
// always gets one. code "" picks one from the exit status.
func (a *app) failEarly(s *config.Settings, code string, err error) error {
	if s == nil || !s.JSON {
		return err
	}
	msg := err.Error()
	var ee *exitError
	if errors.As(err, &ee) && code == "" {
		switch ee.code {
		case ExitUsage:
			code = "invalid_request"
		case ExitInterrupted:
			code = "cancelled"
		}
	}
	if code == "" {
		code = "internal"
	}
	render.NewJSON(a.env.Stdout).Error(code, msg)
	return err
}
