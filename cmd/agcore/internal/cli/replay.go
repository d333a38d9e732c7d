package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// addRecordFlag adds --record to run and chat.
func addRecordFlag(fs *pflag.FlagSet) {
	fs.String("record", "", "keep a replayable record of the run in this file (JSON Lines: every model request as sent and its answer, every tool result); agcore replay re-runs it")
}

// recordPath returns --record, or "".
func recordPath(cmd *cobra.Command) string {
	p, _ := cmd.Flags().GetString("record")
	return p
}

// The settings a record keeps in its header's meta, which a replay uses
// where the current configuration leaves them at their defaults: the
// settings that shape requests and are not machine paths.
var recordedSettings = []string{"system", "tools", "compact", "max_steps", "max_result_bytes"}

// openRecord creates the --record file with a header saying what the
// run is made of.
func openRecord(path string, s *config.Settings, info llm.ModelInfo, instr string, tools []tool.Tool) (*replay.Recorder, error) {
	return replay.Create(path, recordHeader(s, info, instr, tools))
}

// recordHeader is the header of a record of the runs of the agent built
// from s, info, instr and tools.
func recordHeader(s *config.Settings, info llm.ModelInfo, instr string, tools []tool.Tool) replay.Header {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name()
	}
	meta := map[string]string{
		"tools":   strings.Join(s.Tools, ","),
		"compact": s.Compact,
	}
	if s.Agent != "" {
		meta["agent"] = s.Agent // the config file's agent (--agent), rebuilt with its handoffs
	}
	if s.System != "" {
		meta["system"] = s.System
	}
	if s.MaxSteps != config.DefaultMaxSteps {
		meta["max_steps"] = strconv.Itoa(s.MaxSteps)
	}
	if s.MaxResultBytes != 0 {
		meta["max_result_bytes"] = strconv.Itoa(s.MaxResultBytes)
	}
	return replay.Header{
		Agcore:          readBuildInfo().Version,
		Provider:        info.Provider,
		Model:           info.Name,
		ContextWindow:   info.ContextWindow,
		MaxOutputTokens: info.MaxOutputTokens,
		Instructions:    instr,
		Tools:           names,
		Meta:            meta,
	}
}

func (a *app) newReplayCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replay [flags] FILE",
		Short: "Re-run a recorded run (agcore run --record) with the current configuration and show how its requests drifted",
		Long: `Replay re-runs the turns of a record made with agcore run --record or chat
--record, with no network and no key: each model call is answered with the
recorded answer, while the agent around it is built from the current
configuration (the same flags, environment and config file as run). Each
request the replay makes is compared with the recorded one, and every
difference is printed in the message model's terms, one line each:

  call 2 (turn 1): system prompt changed: "Be brief." → "Be thorough."
  call 3 (turn 1): message 4: tool result of call call_1 (grep) differs: ...
  call 3 (turn 1): tool write_file added to the definitions
  call 5 (turn 2): compaction cut moved: ...
  call 5 (turn 2): parameter max_tokens changed: 1000 → 2000

Settings the current configuration leaves at their defaults (--system,
--tools, --compact, --max-steps, --max-result-bytes) are taken from the
record, as is the model when no provider is configured (one found only
from an API key in the environment does not count). Tools run for real,
in --root, unless --recorded-tools names those whose recorded results
answer instead ("all" for every recorded tool). The replay uses sessions
in memory: nothing is stored. A record of the config file's agent (run
--agent NAME, or a serve --record-dir turn of a named agent) is replayed
as that agent, joined to the agents its handoffs name, unless --agent
names another. Each turn's replayed answer is printed after its drift;
--json prints one JSON object a line instead: {"type":"drift",...} per
drifted call, {"type":"turn",...} per turn with its answer, and a last
{"type":"summary",...}.

Exit status: 0 when the replay ran (drift or not); 1 with --strict when a
request drifted (the replay stops at the first one) or a turn failed; 2
for a usage mistake or a file that is not a record.`,
		Example: `  agcore run --provider demo --record ~/run.jsonl "Summarize this project" && agcore replay ~/run.jsonl
  agcore run --provider demo --record ~/run.jsonl "Summarize this project" && agcore replay --system "Be terse." ~/run.jsonl
  agcore run --provider demo --record ~/run.jsonl "Summarize this project" && ! agcore replay --strict --system "Be terse." ~/run.jsonl
  agcore run --provider demo --record ~/run.jsonl "Summarize this project" && agcore replay --recorded-tools all --root ~ ~/run.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: a.replay,
	}
	fs := cmd.Flags()
	fs.Bool("strict", false, "fail (exit 1) at the first request that differs from the recorded one, instead of answering it anyway and reporting the drift")
	fs.String(config.AgentFlag, "", "replay as the config file's agent NAME, joined to its handoffs (default: the record's agent, if any)")
	fs.Bool("json", false, "newline-delimited JSON objects on stdout (drift, turn with its answer, summary) instead of text")
	fs.StringSlice("recorded-tools", nil, `answer the calls of these tools with their recorded results instead of running them (comma list; "all" for every tool the record has)`)
	addProviderFlags(fs)
	addStoreFlags(fs)
	addAgentFlags(fs)
	fs.String("log", "", "append a structured log of model and tool calls (no contents, never keys) to this file [$AGCORE_LOG]")
	return cmd
}

func (a *app) replay(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	rec, err := replay.Load(args[0])
	if err != nil {
		return exit(ExitUsage, "%v", err)
	}
	if len(rec.Turns) == 0 {
		return exit(ExitUsage, "%s marks no turn (a record made without Recorder.Turn): there is nothing to re-run", args[0])
	}
	if agentName := rec.Header.Meta["agent"]; agentName != "" && agentName != "agcore" && !cmd.Flags().Changed(config.AgentFlag) {
		// The recorded agent, with its handoffs: rebuilt without them, every
		// call would drift (the transfer tools missing).
		_ = cmd.Flags().Set(config.AgentFlag, agentName)
	}
	jsonOut, _ := cmd.Flags().GetBool("json")
	s, err := a.settings(cmd)
	var se *config.SetupError
	switch {
	case errors.As(err, &se) && se.Settings != nil:
		s = se.Settings // a missing key does not matter: nothing is sent
	case err != nil:
		return err
	}
	if err := fromRecord(s, rec.Header); err != nil {
		return exit(ExitUsage, "%v", err)
	}
	if err := s.Check(); err != nil {
		return exit(ExitUsage, "%v", err)
	}
	s.Store = "memory:" // a replay keeps nothing
	s.JSON = false

	strict, _ := cmd.Flags().GetBool("strict")
	named, _ := cmd.Flags().GetStringSlice("recorded-tools")
	if slices.Contains(named, "all") {
		named = rec.ToolNames()
	}

	out := a.env.Stdout
	rp := &replayPrinter{w: out, json: jsonOut}
	drifted := 0
	info := rec.Header.Info()
	if explicitProvider(s) {
		info = modelInfo(s, replay.NewModel(rec, replay.Options{}))
	}
	m := replay.NewModel(rec, replay.Options{Strict: strict, Info: &info, OnDrift: func(d replay.Drift) {
		drifted++
		rp.drift(d)
	}})
	opts := buildOptions{adapter: m, info: info, replaying: true}
	if len(named) > 0 {
		opts.toolMW = []tool.Middleware{rec.ToolMiddleware(named...)}
		opts.standIns = func(have func(string) bool) []tool.Tool {
			return rec.StandIns(func(name string) bool { return have(name) || !slices.Contains(named, name) })
		}
	}
	rt, err := a.build(ctx, s, opts)
	if err != nil {
		return err
	}
	defer rt.Close()
	// The agents the recorded one hands off to, answered by the record too.
	rt.replayOpts = &opts
	closeNamed, err := a.joinHandoffs(ctx, cmd, rt)
	if err != nil {
		return err
	}
	defer closeNamed()

	rp.start(args[0], rec)
	modelChanged := rec.Header.Provider != info.Provider || rec.Header.Model != info.Name
	if modelChanged {
		rp.modelChanged(rec.Header, info)
		if strict {
			return exit(ExitFailed, "strict: the model differs from the recorded one")
		}
	}
	failed := false
	sessions := map[string]*session.Session{}
	for _, turn := range rec.Turns {
		sess := sessions[turn.Session]
		if sess == nil {
			sess = &session.Session{Messages: turn.History}
			sessions[turn.Session] = sess
		}
		tctx, cancel := ctx, context.CancelFunc(func() {})
		if s.Timeout > 0 {
			tctx, cancel = context.WithTimeout(ctx, s.Timeout)
		}
		resp, err := rt.agent.Run(tctx, turn.Input, &agent.RunOptions{Session: sess})
		cancel()
		switch {
		case err == nil:
			rp.turn(turn.N, resp, nil)
		case errors.Is(err, replay.ErrDrift):
			rp.stopped(turn.N)
			return exit(ExitFailed, "")
		case errors.Is(err, replay.ErrExhausted):
			// Reported as drift (a call the record does not have).
			rp.turn(turn.N, nil, err)
			failed = true
		default:
			if ctx.Err() != nil {
				return exit(ExitInterrupted, "interrupted")
			}
			rp.turn(turn.N, nil, err)
			failed = true
		}
	}
	m.Finish()
	rp.summary(drifted, m.Calls(), len(rec.Calls), failed, modelChanged)
	if strict && (drifted > 0 || failed || modelChanged) {
		return exit(ExitFailed, "")
	}
	return nil
}

// explicitProvider reports whether the settings name a provider by flag,
// environment, config file or model, not only by an API key found in the
// environment.
func explicitProvider(s *config.Settings) bool {
	src := s.Sources["provider"]
	return s.Provider != "" && src != "none" && !strings.HasPrefix(src, "detected")
}

// fromRecord fills the settings the current configuration leaves at
// their defaults from the record's header.
func fromRecord(s *config.Settings, h replay.Header) error {
	for _, key := range recordedSettings {
		v, ok := h.Meta[key]
		if !ok || (s.Sources[key] != "default" && s.Sources[key] != "") {
			continue
		}
		var err error
		switch key {
		case "system":
			s.System = v
		case "tools":
			s.Tools = nil
			for _, t := range strings.Split(v, ",") {
				if t = strings.TrimSpace(t); t != "" {
					s.Tools = append(s.Tools, t)
				}
			}
		case "compact":
			s.Compact = v
		case "max_steps":
			s.MaxSteps, err = strconv.Atoi(v)
		case "max_result_bytes":
			s.MaxResultBytes, err = strconv.Atoi(v)
		}
		if err != nil {
			return fmt.Errorf("the record's %s %q: %v", key, v, err)
		}
		s.Sources[key] = "record"
	}
	return nil
}

// replayPrinter writes what agcore replay finds: text, or with --json
// one JSON object a line.
type replayPrinter struct {
	w    io.Writer
	json bool
}

func (p *replayPrinter) emit(v any) {
	b, _ := json.Marshal(v)
	fmt.Fprintf(p.w, "%s\n", b)
}

func (p *replayPrinter) start(file string, rec *replay.Record) {
	if p.json {
		p.emit(map[string]any{"type": "start", "file": file, "turns": len(rec.Turns), "calls": len(rec.Calls),
			"provider": rec.Header.Provider, "model": rec.Header.Model, "agcore": rec.Header.Agcore, "agent": rec.Header.Meta["agent"]})
		return
	}
	fmt.Fprintf(p.w, "replaying %s: %s, %s, recorded with %s\n", file, count(len(rec.Turns), "turn"), count(len(rec.Calls), "model call"), recordedWith(rec.Header))
}

func (p *replayPrinter) modelChanged(h replay.Header, info llm.ModelInfo) {
	if p.json {
		p.emit(map[string]any{"type": "model_changed", "from": h.Provider + "/" + h.Model, "to": info.Provider + "/" + info.Name})
		return
	}
	fmt.Fprintf(p.w, "model changed: %s/%s → %s/%s\n", orDash(h.Provider), orDash(h.Model), info.Provider, info.Name)
}

// drift writes a call's differences, one a line.
func (p *replayPrinter) drift(d replay.Drift) {
	if p.json {
		p.emit(map[string]any{"type": "drift", "call": d.Call, "turn": d.Turn, "differences": d.Differences})
		return
	}
	where := fmt.Sprintf("call %d", d.Call)
	if d.Turn > 0 {
		where += fmt.Sprintf(" (turn %d)", d.Turn)
	}
	for _, x := range d.Differences {
		fmt.Fprintf(p.w, "%s: %s\n", where, x)
	}
}

// turn writes a replayed turn's answer (and the agent that gave it), or
// its error.
func (p *replayPrinter) turn(n int, resp *agent.Response, err error) {
	if p.json {
		ev := map[string]any{"type": "turn", "turn": n}
		if err != nil {
			ev["error"] = err.Error()
		} else {
			ev["agent"], ev["answer"] = resp.Agent, resp.Text()
		}
		p.emit(ev)
		return
	}
	switch {
	case errors.Is(err, replay.ErrExhausted):
		// Reported as drift (a call the record does not have).
	case err != nil:
		fmt.Fprintf(p.w, "turn %d failed: %v\n", n, err)
	default:
		fmt.Fprintf(p.w, "turn %d answer (%s):\n%s\n", n, resp.Agent, strings.TrimRight(resp.Text(), "\n"))
	}
}

func (p *replayPrinter) stopped(n int) {
	if p.json {
		p.emit(map[string]any{"type": "stopped", "turn": n})
		return
	}
	fmt.Fprintf(p.w, "strict: the replay stopped at turn %d\n", n)
}

func (p *replayPrinter) summary(drifted, replayed, recorded int, failed, modelChanged bool) {
	if p.json {
		p.emit(map[string]any{"type": "summary", "drifted": drifted, "replayed": replayed, "recorded": recorded, "failed": failed, "model_changed": modelChanged})
		return
	}
	switch {
	case drifted == 0 && !failed && !modelChanged:
		fmt.Fprintf(p.w, "no drift: %d of %d calls replayed with the recorded requests\n", replayed, recorded)
	case drifted > 0:
		fmt.Fprintf(p.w, "drift in %d of %d calls\n", drifted, recorded)
	}
}

func recordedWith(h replay.Header) string {
	s := orDash(h.Provider) + "/" + orDash(h.Model)
	if h.Agcore != "" {
		s += ", agcore " + h.Agcore
	}
	return s
}
