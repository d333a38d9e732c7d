package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/session"

	agtemporal "github.com/agcore/agcore/temporal"
)

func newRunCmd() *cobra.Command {
	var (
		c                                        common
		sessionID, turnID, model, instr, toolsCS string
		provider, compactMode, schema, record    string
		agentsFile, headerFile                   string
		maxCost, sessionMaxCost, temperature     float64
		tokenBudget, sessionTokenBudget          int
		maxSteps, maxTokens, contextWindow       int
		approvalTimeout, timeout                 time.Duration
		asJSON, yes                              bool
		to                                       agtemporal.Timeouts
	)
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Submit one turn as a workflow, stream its output and print the answer",
		Long: `run submits PROMPT as one turn (workflow id agcore-turn/SESSION/TURN) to the
workers of the task queue and waits for it. The turn runs agcore's agent
itself inside the workflow: spending limits, guardrails, handoffs, agents
as tools, typed answers (--schema), compaction and approvals hold as in
agcore run. With --redis, the answer streams as the model writes it (a
model call that is retried says so, and its partial text is void). A call
that needs approval is announced with the approve command to run.
Submitting the same --session and --turn again attaches to that turn
instead of running it twice. agcore run --temporal resolves the agents
(--config, --agent and its handoffs) and runs this command.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := refuseLocalFlags(cmd); err != nil {
				return err
			}
			ctx := cmd.Context()
			prompt := strings.Join(args, " ")
			if prompt == "" || prompt == "-" {
				b, err := io.ReadAll(os.Stdin)
				if err != nil {
					return err
				}
				prompt = strings.TrimSpace(string(b))
			}
			if prompt == "" {
				return usageError{errors.New("no prompt: give it as arguments or on stdin")}
			}
			if sessionID == "" {
				sessionID = session.NewID()
			}
			if turnID == "" {
				turnID = session.NewID()
			}
			in := agtemporal.TurnInput{SessionID: sessionID, TurnID: turnID,
				Messages: []llm.Message{llm.UserText(prompt)}, MaxTokens: maxTokens,
				ApprovalTimeout: approvalTimeout, ApproveAll: yes, Timeout: timeout, Timeouts: to, Record: record != ""}
			if agentsFile != "" {
				b, err := os.ReadFile(agentsFile)
				if err == nil {
					err = json.Unmarshal(b, &in.Agents)
				}
				if err != nil {
					return usageError{fmt.Errorf("--agents: %w", err)}
				}
			} else {
				spec := agent.Spec{Name: "agcore", Provider: provider, Model: model, Instructions: instr, MaxSteps: maxSteps,
					ContextWindow: contextWindow, Compact: compactMode,
					Budget:        budget.Limits{CostUSD: maxCost, Tokens: tokenBudget},
					SessionBudget: budget.Limits{CostUSD: sessionMaxCost, Tokens: sessionTokenBudget}}
				if toolsCS != "" {
					spec.Tools = []string{}
					if toolsCS != "none" {
						spec.Tools = strings.Split(toolsCS, ",")
					}
				}
				in.Agents = []agent.Spec{spec}
			}
			if cmd.Flags().Changed("temperature") {
				in.Temperature = &temperature
			}
			if err := agent.CheckSpecs(in.Agents); err != nil {
				return usageError{err}
			}
			if headerFile != "" {
				b, err := os.ReadFile(headerFile)
				if err == nil {
					in.RecordHeader = new(replay.Header)
					err = json.Unmarshal(b, in.RecordHeader)
				}
				if err != nil {
					return usageError{fmt.Errorf("--record-header: %w", err)}
				}
			}
			if schema != "" {
				if !json.Valid([]byte(schema)) {
					return usageError{errors.New("--schema: not JSON")}
				}
				in.Schema = json.RawMessage(schema)
			}
			rdb, err := c.redis()
			if err != nil {
				return err
			}
			if rdb != nil {
				defer rdb.Close()
			}
			cl, err := c.dial(ctx, slog.LevelWarn, "agcore")
			if err != nil {
				return err
			}
			defer cl.Close()
			defer c.tracing.close()
			if c.tracing != nil {
				// The client's span: the workflow, its activities and the
				// model and tool calls in them are its children.
				var span trace.Span
				ctx, span = c.tracing.tp.Tracer("agcore-temporal").Start(ctx, "agcore run "+turnID,
					trace.WithAttributes(attribute.String("gen_ai.operation.name", "invoke_agent"),
						attribute.String("gen_ai.agent.name", in.Agents[0].Name), attribute.String("gen_ai.conversation.id", sessionID)))
				defer span.End()
			}
			wr, err := agtemporal.StartTurn(ctx, cl, c.queue, in)
			if err != nil {
				return err
			}
			out := &turnOutput{json: asJSON, typed: schema != "", w: os.Stdout, errw: os.Stderr}
			out.start(sessionID, turnID, wr.GetID(), in.Agents)

			approveCmd := approveCommand(cmd, &c, sessionID, turnID)
			var streamed atomic.Bool
			var follow func(ended <-chan struct{})
			if rdb != nil && !asJSON && schema == "" {
				follow = func(ended <-chan struct{}) {
					p := &livePrinter{out: os.Stdout, errw: os.Stderr}
					_ = agtemporal.Follow(ctx, rdb, agtemporal.StreamKey(wr.GetID()), ended, func(ev agtemporal.LiveEvent) bool {
						if p.event(ev) {
							streamed.Store(true)
						}
						return true
					})
				}
			}
			var res agtemporal.TurnResult
			err = awaitTurn(ctx, func() error { return wr.Get(ctx, &res) },
				func(ctx context.Context) ([]agtemporal.PendingApproval, error) {
					return agtemporal.Pending(ctx, cl, wr.GetID())
				}, func(a agtemporal.PendingApproval) {
					fmt.Fprintf(os.Stderr, "\n%s %s waits for approval: %s %s (or --deny)\n", a.Tool, a.Input, approveCmd, a.CallID)
					if a.Tool == agtemporal.ElicitationTool {
						fmt.Fprintf(os.Stderr, "its form is answered with --content, a JSON object fitting requested_schema: %s --content '{...}' %s\n", approveCmd, a.CallID)
					}
				}, follow)
			if err != nil {
				return out.fail(turnID, agtemporal.TurnError(err))
			}
			if record != "" && len(res.Record) > 0 {
				if err := os.WriteFile(record, res.Record, 0o600); err != nil {
					return fmt.Errorf("--record: %w", err)
				}
			}
			return out.done(&res, sessionID, streamed.Load())
		},
	}
	c.add(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&sessionID, "session", "s", "", "session the turn continues (default: a new one)")
	fs.StringVar(&turnID, "turn", "", "turn id (default: a new one); the same --session and --turn attach to the same turn")
	fs.StringVar(&provider, "provider", "", "the provider of the turn's model, made by the workers with their own key (default: the workers' own)")
	fs.StringVarP(&model, "model", "m", "", "model of the turn: registered on the workers, or made by them (default: the workers' own)")
	fs.StringVar(&instr, "instructions", "", "system instructions of the turn")
	fs.StringVar(&toolsCS, "tools", "", "the workers' tools to offer, comma-separated (default all; none: no tools)")
	fs.IntVar(&maxSteps, "max-steps", 0, "most model calls of the turn; the calls of the last one are not run (default 20, as agcore run)")
	fs.IntVar(&maxTokens, "max-tokens", 0, "cap of each model call's output")
	fs.Float64Var(&temperature, "temperature", 0, "sampling temperature, 0 to 2 (default: the model's)")
	fs.IntVar(&contextWindow, "context-window", 0, "the model's context window in tokens, for models the catalog does not know")
	fs.StringVar(&compactMode, "compact", "", "compression when a request would exceed the input budget: auto, summarize, off (default auto)")
	fs.Float64Var(&maxCost, "max-cost", 0, "most the turn may cost, in USD at the model's catalog prices (0: none)")
	fs.IntVar(&tokenBudget, "token-budget", 0, "most input plus output tokens the turn may use (0: none)")
	fs.Float64Var(&sessionMaxCost, "session-max-cost", 0, "most the session may cost, its stored turns included (0: none)")
	fs.IntVar(&sessionTokenBudget, "session-token-budget", 0, "most tokens the session may use, its stored turns included (0: none)")
	fs.StringVar(&schema, "schema", "", "answer with one JSON object that validates against this JSON Schema (inline JSON), printed alone on stdout")
	fs.StringVar(&record, "record", "", "keep a replayable record of the turn in this file (agcore replay re-runs it in-process)")
	fs.BoolVarP(&yes, "yes", "y", false, "approve tools that need approval without asking")
	fs.DurationVar(&timeout, "timeout", 0, "the longest the turn's workflow may run (0: no limit)")
	fs.DurationVar(&approvalTimeout, "approval-timeout", 0, "deny a call still waiting for approval after this long (0: wait forever)")
	fs.BoolVar(&asJSON, "json", false, "newline-delimited JSON events on stdout, as agcore run --json")
	fs.StringVar(&instr, "system", "", "the same as --instructions (the agcore command's name)")
	_ = fs.MarkHidden("system")
	fs.StringVar(&agentsFile, "agents", "", "a JSON file of the turn's agents ([]agent.Spec), as agcore run --temporal writes it")
	fs.StringVar(&headerFile, "record-header", "", "a JSON file of the record's header, as agcore run --temporal writes it")
	_ = fs.MarkHidden("agents")
	_ = fs.MarkHidden("record-header")
	addLocalFlags(fs)
	fs.DurationVar(&to.Heartbeat, "model-heartbeat", 0, "heartbeat timeout of a model call (default 20s)")
	fs.DurationVar(&to.Persist, "persist-timeout", 0, "timeout of the session append (default 1m)")
	fs.DurationVar(&to.Tool, "tool-timeout", 0, "timeout of one tool call (default 10m)")
	return cmd
}

// localFlags are the agcore command's run flags that configure the worker,
// not a durable turn: given to agcore-temporal run, they are refused with
// where they belong. raw, hide-thinking and otel only shape this process's
// output and are accepted.
var localFlags = map[string]string{
	"base-url": "the worker's (agcore worker --base-url)",
	"store":    "the worker's (agcore worker --store)", "root": "the worker's (agcore worker --root)",
	"mcp": "the worker's (agcore worker --mcp)", "mcp-url": "the worker's (agcore worker --mcp-url)",
	"max-result-bytes": "the worker's (agcore worker --max-result-bytes)",
	"config":           "read by agcore run --temporal, which sends the agents it names",
	"agent":            "read by agcore run --temporal, which sends the agents it names",
	"retries":          "Temporal's (retries follow the workflow's retry policy)",
	"idle-timeout":     "the worker's (its adapters')", "log": "the worker's",
	"continue": "not available to durable runs (name the --session)",
}

func addLocalFlags(fs *pflag.FlagSet) {
	for name := range localFlags {
		if name == "continue" {
			fs.Bool(name, false, "")
		} else {
			fs.String(name, "", "")
		}
		_ = fs.MarkHidden(name)
	}
	fs.Bool("raw", false, "")
	fs.Bool("hide-thinking", false, "")
	_ = fs.MarkHidden("raw")
	_ = fs.MarkHidden("hide-thinking")
}

func refuseLocalFlags(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if where, ok := localFlags[f.Name]; ok && err == nil {
			err = usageError{fmt.Errorf("--%s is %s, not a setting of a durable run", f.Name, where)}
		}
	})
	return err
}

// awaitTurn waits for the turn's end (get returns), meanwhile announcing
// the calls that wait for approval and, with follow, showing the live
// output. Nothing is waited for once get has returned: the announcer
// stops at once, a query in flight included, and follow reads the output
// to its end without blocking.
func awaitTurn(ctx context.Context, get func() error, pending func(context.Context) ([]agtemporal.PendingApproval, error),
	report func(agtemporal.PendingApproval), follow func(ended <-chan struct{})) error {
	var wg sync.WaitGroup
	ended := make(chan struct{})
	if follow != nil {
		wg.Go(func() { follow(ended) })
	}
	actx, stopAnnouncing := context.WithCancel(ctx)
	wg.Go(func() { announce(actx, time.Second, pending, report) })
	err := get()
	stopAnnouncing()
	close(ended)
	wg.Wait()
	return err
}

// announce calls pending every period until ctx ends, and report once
// each call it returns. It returns as soon as ctx ends, a query in flight
// included.
func announce(ctx context.Context, period time.Duration, pending func(context.Context) ([]agtemporal.PendingApproval, error), report func(agtemporal.PendingApproval)) {
	seen := map[string]bool{}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p, err := pending(ctx)
		if err != nil || ctx.Err() != nil {
			continue
		}
		for _, a := range p {
			if !seen[a.CallID] {
				seen[a.CallID] = true
				report(a)
			}
		}
	}
}

// approveCommand is the approve command line, to run as printed, that
// decides the calls of this turn: the same program (agcore when run
// through agcore run --temporal), the Temporal server, and the namespace,
// task queue and blob store when they are not the defaults.
func approveCommand(cmd *cobra.Command, c *common, sessionID, turnID string) string {
	prog := "agcore-temporal"
	if os.Getenv(viaAgcoreEnv) != "" {
		prog = "agcore"
	}
	args := []string{prog, "approve", "--temporal", c.address}
	if c.namespace != "default" {
		args = append(args, "--namespace", c.namespace)
	}
	if c.queue != agtemporal.DefaultTaskQueue {
		args = append(args, "--task-queue", c.queue)
	}
	if cmd.Flags().Changed("blobs") && c.blobs != "" {
		args = append(args, "--blobs", c.blobs)
	}
	args = append(args, "--session", sessionID, "--turn", turnID)
	for i, a := range args {
		args[i] = shellQuote(a)
	}
	return strings.Join(args, " ")
}

// viaAgcoreEnv is set by the agcore command when it runs this one, so
// that the commands printed name agcore.
const viaAgcoreEnv = "AGCORE_VIA_AGCORE"

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and ./:@=+,_-.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("./:@=+,_-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// livePrinter shows a turn's live output as agcore run shows a turn: the
// answer text on out, each model call's text on a line of its own (a
// tool call or the next call's text ends the current line), tool calls
// and retries on errw.
type livePrinter struct {
	out, errw io.Writer
	tr        agtemporal.Transcript
	step      int
	mid       bool // out's last byte is not a newline
}

// event shows one event and reports whether it printed answer text.
func (p *livePrinter) event(ev agtemporal.LiveEvent) bool {
	if p.tr.Add(ev) {
		p.endLine()
		fmt.Fprintln(p.errw, "[the model call was retried: the text above is void]")
	}
	switch ev.Kind {
	case agtemporal.LiveText:
		if ev.Text == "" {
			return false
		}
		if ev.Step != p.step {
			p.endLine()
			p.step = ev.Step
		}
		fmt.Fprint(p.out, ev.Text)
		p.mid = !strings.HasSuffix(ev.Text, "\n")
		return true
	case agtemporal.LiveToolCall:
		p.endLine()
		fmt.Fprintf(p.errw, "  → %s (%s)\n", ev.Text, ev.CallID)
	}
	return false
}

func (p *livePrinter) endLine() {
	if p.mid {
		fmt.Fprintln(p.out)
		p.mid = false
	}
}
