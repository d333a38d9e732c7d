package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/session"
)

// Flag sets, added to the commands that use them. Defaults shown in --help
// are those of the config package; which value wins is decided by
// config.Resolve from the flags the user actually set.

func addProviderFlags(fs *pflag.FlagSet) {
	fs.String("provider", "", providerFlagHelp())
	fs.StringP("model", "m", "", "model id sent to the provider, or an alias (sonnet, 4o, ...: agcore models lists them) [$AGCORE_MODEL]")
	fs.String("base-url", "", baseURLFlagHelp())
	fs.Int("context-window", 0, "the model's context window in tokens, for models the catalog does not know [$AGCORE_CONTEXT_WINDOW]")
	fs.Int("retries", config.DefaultRetries, "retries of a failed model call (rate limits, overload, server and network errors); 0 disables [$AGCORE_RETRIES]")
	fs.String("timeout", config.DefaultTimeout.String(), "the longest one turn may take, the tool loop included; 0 for no limit [$AGCORE_TIMEOUT]")
	fs.String("idle-timeout", config.DefaultIdleTimeout.String(), "how long a model call may get nothing from the server, counted across its retries, before it is reported as not responding [$AGCORE_IDLE_TIMEOUT]")
}

func addAgentFlags(fs *pflag.FlagSet) {
	fs.String("tools", config.DefaultTools, "comma list of built-in tools to offer: read_file, list_dir, grep, write_file (empty for none) [$AGCORE_TOOLS]")
	fs.String("root", "", "the directory the file tools are confined to (default: the working directory) [$AGCORE_ROOT]")
	fs.StringArray("allow-secret", nil, "let the file tools use paths matching this secret pattern (.env*, .ssh/, *.pem, ...: refused by default), or this glob of names or paths (repeatable) [$AGCORE_ALLOW_SECRETS, a comma list]")
	fs.StringArray("mcp", nil, "an MCP server started over stdio, as a command line; its tools are offered too, as mcp__SERVER__TOOL (repeatable)")
	fs.StringArray("mcp-url", nil, "an MCP server reached over streamable HTTP; its tools are offered as mcp__SERVER__TOOL (repeatable)")
	fs.BoolP("yes", "y", false, "approve tools that need approval (write_file) without asking")
	fs.Int("max-steps", config.DefaultMaxSteps, "most model calls in one turn's tool loop [$AGCORE_MAX_STEPS]")
	fs.String("max-cost", "0", "most a turn may cost, in USD at the model's catalog prices: a model call that could cross it is not sent, the turn ends with what it did stored, and the command exits 1 naming the limit; 0 for none [$AGCORE_MAX_COST]")
	fs.Int("token-budget", 0, "most input plus output tokens a turn may use, all its model calls together, kept like --max-cost; 0 for none [$AGCORE_TOKEN_BUDGET]")
	fs.String("session-max-cost", "0", "most the session may cost, its stored turns included, kept like --max-cost; 0 for none [$AGCORE_SESSION_MAX_COST]")
	fs.Int("session-token-budget", 0, "most input plus output tokens the session may use, its stored turns included; 0 for none [$AGCORE_SESSION_TOKEN_BUDGET]")
	fs.Int("max-result-bytes", 0, "cut longer tool results, read_file's included (0: 64 KiB; negative: no limit) [$AGCORE_MAX_RESULT_BYTES]")
	fs.String("system", "", "the agent's instructions [$AGCORE_SYSTEM]")
	fs.String("compact", config.DefaultCompact, "compression when a request would exceed the input budget: auto (microcompact, then drop the oldest groups; no model call), summarize (adds an LLM summary), off [$AGCORE_COMPACT]")
}

func addSessionFlag(fs *pflag.FlagSet) {
	fs.String("session", "", "continue this session (its id, or a unique prefix of one) and store the turn in it; a new name starts a session of that name; without it a new id is made")
	fs.BoolP("continue", "c", false, "continue the most recently updated session")
}

func addStoreFlags(fs *pflag.FlagSet) {
	fs.String("store", "", "where sessions live: "+strings.Join(session.Syntaxes(), ", ")+" (memory: keeps nothing); default the embedded SQLite database $AGCORE_HOME/agcore.db [$AGCORE_STORE]")
	fs.String("config", "", "the config file (default $AGCORE_HOME/config.json) [$AGCORE_CONFIG]")
}

func addOutputFlags(fs *pflag.FlagSet) {
	fs.Bool("json", false, "newline-delimited JSON events on stdout instead of text")
	fs.Bool("hide-thinking", false, "do not show the model's thinking")
	fs.Bool("raw", false, "print the answer as the model wrote it: no Markdown rendering on a terminal [$AGCORE_RAW]")
	fs.String("log", "", "append a structured log of model and tool calls (no contents, never keys) to this file [$AGCORE_LOG]")
	addOtelFlag(fs)
}

// addTurnFlags adds the flags of the commands that run turns (run, chat).
func addTurnFlags(fs *pflag.FlagSet) {
	fs.String(config.AgentFlag, "", "run the config file's agent NAME (its \"agents\" section): its provider, model, base_url, system, tools and max_steps replace the command's")
	addProviderFlags(fs)
	addSessionFlag(fs)
	addStoreFlags(fs)
	addAgentFlags(fs)
	addOutputFlags(fs)
	fs.Int("max-tokens", 0, "cap of each model call's output tokens (0: the model's default) [$AGCORE_MAX_TOKENS]")
	fs.String("temperature", "", "sampling temperature, 0 to 2 (default: the model's) [$AGCORE_TEMPERATURE]")
	addAttachFlag(fs)
}

// turnSettings resolves the settings of a command that runs turns. A
// missing or unusable provider is reported with how to configure one; with
// --json every failure is also an error event.
func (a *app) turnSettings(cmd *cobra.Command) (*config.Settings, error) {
	s, err := a.settings(cmd)
	var se *config.SetupError
	switch {
	case errors.As(err, &se) || (err == nil && s.Provider == ""):
		if se != nil && se.Settings != nil {
			if cerr := se.Settings.Check(); cerr != nil { // a mistake beats a missing key
				return nil, a.failEarly(se.Settings, "invalid_request", exit(ExitUsage, "%v", cerr))
			}
		}
		return nil, a.noProvider(s, err)
	case err != nil:
		asJSON, _ := cmd.Flags().GetBool("json")
		return nil, a.failEarly(&config.Settings{JSON: asJSON}, "invalid_request", err)
	}
	if err := s.Check(); err != nil {
		return nil, a.failEarly(s, "invalid_request", exit(ExitUsage, "%v", err))
	}
	return s, nil
}

// settings resolves the command's settings from its flags, the environment
// and the config file.
func (a *app) settings(cmd *cobra.Command) (*config.Settings, error) {
	in := a.input(cmd)
	a.otelURL = in.Flags["otel"]
	s, err := config.Resolve(in)
	var se *config.SetupError
	if err != nil && !errors.As(err, &se) {
		return nil, exit(ExitUsage, "%v", err)
	}
	return s, err
}

// input is what config.Resolve reads for the command: the flags the user
// set, the environment, the directories.
func (a *app) input(cmd *cobra.Command) config.Input {
	in := config.Input{
		Flags:    map[string]string{},
		Lists:    map[string][]string{},
		Getenv:   a.env.Getenv,
		Cwd:      a.env.Cwd,
		UserHome: a.env.UserHome,
	}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			in.Lists[f.Name] = sv.GetSlice()
			return
		}
		in.Flags[f.Name] = f.Value.String()
	})
	return in
}

// noProvider reports a missing or unusable provider: how to configure one
// on stderr (and, with --json, an auth error event), exit status 2.
func (a *app) noProvider(s *config.Settings, err error) error {
	problem := ""
	if err != nil {
		problem = err.Error()
	}
	fmt.Fprint(a.env.Stderr, config.SetupHelp(s.Home, problem))
	if s.JSON {
		if problem == "" {
			problem = "no model provider is configured; see agcore run --help, or try agcore demo"
		}
		render.NewJSON(a.env.Stdout).Error("auth", problem)
	}
	return exit(ExitUsage, "")
}
