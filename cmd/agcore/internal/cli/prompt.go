package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

// maxStdin bounds the piped input read as (part of) a prompt.
const maxStdin = 8 << 20

// unknownWindowWarning is the prompt size above which a model with an
// unknown context window gets a warning: more than many local models hold.
const unknownWindowWarning = 32_000

// prompt builds the prompt from the arguments and piped stdin, as llm and
// mods do: the arguments alone; stdin alone ("-" or no arguments); or
// both, the arguments first, then a blank line, then stdin
// (`git diff | agcore run "Review this:"`).
func (a *app) prompt(args []string, stdinTaken bool) (string, error) {
	p := strings.TrimSpace(strings.Join(args, " "))
	if p == "-" {
		if stdinTaken {
			return "", exit(ExitUsage, "-a - attaches stdin, so the prompt cannot come from it too: give the PROMPT as arguments")
		}
		p = ""
	}
	if a.env.Stdin != nil && !isTerminal(a.env.Stdin) && !stdinTaken {
		b, err := io.ReadAll(io.LimitReader(a.env.Stdin, maxStdin+1))
		if err != nil {
			return "", exit(ExitFailed, "reading the prompt from stdin: %v", err)
		}
		if len(b) > maxStdin {
			return "", exit(ExitUsage, "piped input is larger than %s: send a smaller part of it", render.Size(maxStdin))
		}
		if in := strings.TrimSpace(string(b)); in != "" {
			if p != "" {
				p += "\n\n"
			}
			p += in
		}
	}
	if p == "" {
		return "", exit(ExitUsage, "run needs a PROMPT: give it as arguments or pipe it in (see agcore run --help)")
	}
	return p, nil
}

// checkPrompt refuses, before anything is sent, a prompt that cannot fit
// the model's context window however the history is compressed, and warns
// about a large prompt for a model whose window is unknown.
func (a *app) checkPrompt(rt *runtime, prompt string) error {
	if rt.counter == nil {
		return nil
	}
	msgs := []llm.Message{llm.UserText(prompt)}
	if rt.instr != "" {
		msgs = append(msgs, llm.SystemText(rt.instr))
	}
	n := rt.counter.CountMessages(msgs) + rt.counter.CountTools(tool.Definitions(rt.agent.Tools()))
	window := rt.info.ContextWindow
	switch {
	case window > 0 && n > window:
		return fmt.Errorf("your prompt is about %s tokens; %s's window is %s, so nothing was sent: send a shorter prompt (or give the window with --context-window if it is larger)",
			render.Thousands(n), rt.s.Model, render.Thousands(window))
	case window == 0 && n > unknownWindowWarning:
		rt.sink.Note(fmt.Sprintf("warning: sending a prompt of about %s tokens, and %s's context window is unknown (give it with --context-window to have prompts checked and compressed)",
			render.Thousands(n), rt.s.Model))
	}
	return nil
}
