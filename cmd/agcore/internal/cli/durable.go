package cli

// Durable runs on Temporal. The Temporal SDK lives in its own module
// (github.com/agcore/agcore/temporal), so that agcore's go.mod never
// carries it; these thin commands run its command, agcore-temporal, with
// the same arguments.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
)

// temporalBinEnv names the agcore-temporal executable to run, overriding
// the search next to agcore and on PATH.
const temporalBinEnv = "AGCORE_TEMPORAL_BIN"

// temporalInstall builds agcore-temporal from a clone of agcore: the
// temporal module replaces agcore with the clone's own (../), which go
// install pkg@version refuses, so it is installed from the clone.
const temporalInstall = "git clone https://github.com/agcore/agcore && cd agcore/temporal && go install ./cmd/agcore-temporal"

func (a *app) newWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "worker [flags]",
		Short: "Run a Temporal worker for durable runs (agcore-temporal worker)",
		Long: `worker runs agcore-temporal worker with the same arguments: a Temporal worker
that runs the turns submitted with agcore run --temporal. With --config FILE,
the file's provider, store, root, tools and MCP servers are the worker's
(flags given on the command line win); the file's agents need nothing more:
agcore run --temporal sends each turn's agents as data. See agcore worker
--help once agcore-temporal is installed (` + temporalInstall + `).`,
		Example: `  agcore worker --provider openai --store sqlite:./agcore.db --redis redis://127.0.0.1:6379/0
  agcore worker --temporal temporal.internal:7233 --task-queue agents --provider anthropic`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.helpWithout(cmd, args) {
				return nil
			}
			args, err := workerConfigArgs(args)
			if err != nil {
				return err
			}
			return a.execTemporal(cmd.Context(), "worker", args)
		},
	}
}

// helpWithout shows cmd's own help when args ask for help and
// agcore-temporal, whose help it would show, is not installed.
func (a *app) helpWithout(cmd *cobra.Command, args []string) bool {
	if !slices.Contains(args, "--help") && !slices.Contains(args, "-h") {
		return false
	}
	if _, err := a.temporalBinary(); err == nil {
		return false
	}
	cmd.SetOut(a.env.Stdout)
	_ = cmd.Help()
	fmt.Fprintf(a.env.Stdout, "\nagcore-temporal, which runs it, is not installed: %s\n", temporalInstall)
	return true
}

// workerConfigArgs replaces --config FILE among worker's arguments with the
// worker flags the file sets and the arguments do not.
func workerConfigArgs(args []string) ([]string, error) {
	var path string
	out := make([]string, 0, len(args))
	given := map[string]bool{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--config" && i+1 < len(args):
			path = args[i+1]
			i++
			continue
		case strings.HasPrefix(a, "--config="):
			path = strings.TrimPrefix(a, "--config=")
			continue
		case strings.HasPrefix(a, "--"):
			name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
			given[name] = true
		case a == "-p":
			given["provider"] = true
		case a == "-m":
			given["model"] = true
		}
		out = append(out, a)
	}
	if path == "" {
		return args, nil
	}
	f, found, err := config.LoadFile(path)
	if err != nil {
		return nil, exit(ExitUsage, "--config: %v", err)
	}
	if !found {
		return nil, exit(ExitUsage, "--config %s: no such file", path)
	}
	add := func(flag, v string) {
		if v != "" && !given[flag] {
			out = append(out, "--"+flag+"="+v)
		}
	}
	add("provider", f.Provider)
	add("store", f.Store)
	add("root", f.Root)
	if f.Tools != nil && !given["tools"] {
		t := strings.Join(*f.Tools, ",")
		if t == "" {
			t = "none"
		}
		out = append(out, "--tools="+t)
	}
	if !given["mcp"] && !given["mcp-url"] {
		for _, m := range f.MCP {
			if m.Command != "" {
				out = append(out, "--mcp="+m.Command)
			} else if m.URL != "" {
				out = append(out, "--mcp-url="+m.URL)
			}
		}
	}
	return out, nil
}

func (a *app) newApproveDurableCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "approve [flags] [CALL_ID...]",
		Short: "List or decide the tool calls a durable turn waits on (agcore-temporal approve)",
		Long: `approve runs agcore-temporal approve with the same arguments: without call ids
it lists the calls a turn started with agcore run --temporal waits on, with
call ids it approves them (or denies them with --deny). --response RESPONSE_ID
addresses the turn of a background response of agcore serve --temporal instead
of --session and --turn (GET and POST /v1/approvals of the servers list and
decide the same calls). An MCP server's request for input (tool
mcp_elicitation) is approved with --content, the form's answer as a JSON
object, checked against its requested schema.`,
		Example: `  agcore approve --session work --turn 20260105-143012.123-9f86
  agcore approve --session work --turn 20260105-143012.123-9f86 call_1
  agcore approve --session work --turn 20260105-143012.123-9f86 --deny --reason "not that file" call_1`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.helpWithout(cmd, args) {
				return nil
			}
			return a.execTemporal(cmd.Context(), "approve", args)
		},
	}
}

// durableFlags are the flags of agcore-temporal run that a local run has
// no use for: run defines them so that agcore run --temporal takes every
// flag agcore-temporal run does, and refuses them without --temporal.
// (TestE2EAgcoreRunTakesEveryDurableFlag, in the temporal module, checks
// that the two commands agree.)
var durableFlags = []struct{ name, kind, help string }{
	{"redis", "string", "Redis URL the answer streams through as the worker writes it [$AGCORE_REDIS]"},
	{"blobs", "string", "claim-check store of payloads over 256 KiB, a directory or a redis:// URL, the workers' own [$AGCORE_BLOBS]"},
	{"turn", "string", "the turn's id (default: a new one); the same --session and --turn attach to that turn instead of running it again"},
	{"namespace", "string", `Temporal namespace (default "default")`},
	{"task-queue", "string", `task queue of the workers (default "agcore")`},
	{"instructions", "string", "the same as --system"},
	{"approval-timeout", "duration", "deny a call still waiting for approval after this long (default: wait forever)"},
	{"model-heartbeat", "duration", "heartbeat timeout of a model call (default 20s)"},
	{"persist-timeout", "duration", "timeout of the session append (default 1m)"},
	{"tool-timeout", "duration", "timeout of one tool call (default 10m)"},
}

// withTemporal adds --temporal and the durable flags to run: with
// --temporal, the turn is submitted to Temporal by agcore-temporal run,
// given the flags set on the command line.
func (a *app) withTemporal(run *cobra.Command) *cobra.Command {
	fs := run.Flags()
	fs.String("temporal", "", "run the turn durably on the Temporal server at HOST:PORT (with agcore-temporal; see agcore worker); the flags marked durable go with it")
	durable := map[string]bool{}
	for _, f := range durableFlags {
		help := "durable (with --temporal): " + f.help
		switch f.kind {
		case "int":
			fs.Int(f.name, 0, help)
		case "duration":
			fs.Duration(f.name, 0, help)
		default:
			fs.String(f.name, "", help)
		}
		durable[f.name] = true
	}
	run.Example += `
  agcore run --temporal 127.0.0.1:7233 --redis redis://127.0.0.1:6379/0 --session work --turn tidy-1 "Tidy the notes in docs/"
  agcore run --temporal 127.0.0.1:7233 --session work --turn tidy-1 "Tidy the notes in docs/"   # attach to that turn`
	local := run.RunE
	run.RunE = func(cmd *cobra.Command, args []string) error {
		if addr, _ := cmd.Flags().GetString("temporal"); addr == "" {
			var err error
			cmd.Flags().Visit(func(f *pflag.Flag) {
				if durable[f.Name] && err == nil {
					err = exit(ExitUsage, "--%s is a setting of durable runs: give --temporal HOST:PORT with it (see agcore run --help)", f.Name)
				}
			})
			if err != nil {
				return err
			}
			return local(cmd, args)
		}
		return a.durableRun(cmd, args)
	}
	return run
}

// temporalBinary finds agcore-temporal: $AGCORE_TEMPORAL_BIN, then next
// to the running executable, then on PATH.
func (a *app) temporalBinary() (string, error) {
	if p, ok := a.env.Getenv(temporalBinEnv); ok && p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", exit(ExitFailed, "%s=%s: %v", temporalBinEnv, p, err)
		}
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), "agcore-temporal")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath("agcore-temporal"); err == nil {
		return p, nil
	}
	return "", exit(ExitFailed, "durable runs need agcore-temporal, which was found neither next to agcore nor on PATH: install it with\n  %s\nor set %s", temporalInstall, temporalBinEnv)
}

// execTemporal runs agcore-temporal sub args with the command's standard
// streams and exits with its status. A cancellation (Ctrl-C) is passed
// on as an interrupt.
func (a *app) execTemporal(ctx context.Context, sub string, args []string) error {
	bin, err := a.temporalBinary()
	if err != nil {
		return err
	}
	c := exec.CommandContext(ctx, bin, append([]string{sub}, args...)...)
	c.Stdin, c.Stdout, c.Stderr = a.env.Stdin, a.env.Stdout, a.env.Stderr
	// The commands it prints (approve) name agcore.
	c.Env = append(os.Environ(), "AGCORE_VIA_AGCORE=1")
	// Stopping agcore (SIGINT, SIGTERM: they cancel ctx) stops the child
	// with an interrupt, and SIGKILL after WaitDelay; a killed agcore takes
	// it along where the system allows (childAttr).
	c.Cancel = func() error { return c.Process.Signal(os.Interrupt) }
	c.WaitDelay = 10 * time.Second
	c.SysProcAttr = childAttr()
	err = c.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() > 0:
		return exit(ee.ExitCode(), "")
	case ctx.Err() != nil:
		return exit(ExitInterrupted, "")
	default:
		return exit(ExitFailed, "running %s: %v", bin, err)
	}
}
