package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/eval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/tool"
)

func (a *app) newEvalCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval [flags] FILE...",
		Short: "Score an agent on eval sets: tool trajectories, answers, agents, limits; offline from records or live",
		Long: `Eval runs the cases of each eval set FILE against the agent the flags, the
environment and the config file describe (as for agcore run, --agent NAME
included), each case in a fresh in-memory session, several at once (-j), and
scores each turn: the tool trajectory (calls of sub-agents and after
handoffs included, each with its agent), the answer (exact, contains,
regexp, JSON Schema and fields, ROUGE-1), the answering agent, limits on
cost, tokens, steps and latency, tool errors, and a rubric judged by the
model. A case passes when every scorer that applies meets its threshold.

A FILE is agcore's set format (its JSON Schema: agcore eval --print-schema
set), an ADK eval set (*.evalset.json) or ADK's older *.test.json, scored
with the test_config.json beside it as ADK scores it (--criteria names
another); a directory stands for the *.eval.json, *.evalset.json and
*.test.json files under it. --from-record FILE makes a case of a record (agcore run --record):
the recorded tool calls and answer become the expectation, and the case
runs offline: each model call is answered from the record, with no network
and no key, and a request that differs from the recorded one (a changed
prompt, tool or parameter: the same drift agcore replay shows) fails the
case's no_drift scorer. Tools run for real, in --root, unless
--recorded-tools names those whose recorded results answer instead. Sets
that name a record per case run offline too.
Cases without a record need a provider (--live runs record cases live).
As for agcore replay, the settings the flags, the environment and the
config file leave at their defaults (--system, --tools, --compact,
--max-steps, --max-result-bytes) come from the first record, and an eval
whose cases all have records uses no provider unless one is named (a key
found in the environment does not count).

Progress goes to stderr, one line per case; stdout has a table of cases ×
scorers (mean, ✓ or ✗; with --repeat N the pass rate and the spread),
tokens, cost and the share of input tokens served from the prompt cache,
then each failure's reason; --json prints one report object instead (its
JSON Schema: agcore eval --print-schema report). --junit writes JUnit XML
for CI systems; --baseline compares with an earlier --json report and lists
the regressions and improvements (with --json, in the report's "baseline"
member, and on stderr).

Exit status: 0 when every case passes; 1 when one fails; 2 for a usage
mistake or a set, config or report that cannot be read (one line naming the
file and the field).`,
		Example: `  agcore run --provider demo --record ~/run.jsonl "Summarize this project" && agcore eval --from-record ~/run.jsonl
  agcore run --provider demo --record ~/run.jsonl "Summarize this project" && ! agcore eval --from-record ~/run.jsonl --system "Be terse."
  agcore run --provider demo --record ~/run.jsonl "Summarize this project" && agcore eval --from-record ~/run.jsonl --json --junit ~/eval.xml > ~/report.json && agcore eval --from-record ~/run.jsonl --repeat 3 --baseline ~/report.json
  agcore eval --print-schema set > ~/evalset.schema.json`,
		Args: cobra.ArbitraryArgs,
		RunE: a.eval,
	}
	fs := cmd.Flags()
	fs.String(config.AgentFlag, "", "evaluate the config file's agent NAME (its \"agents\" section): its provider, model, base_url, system, tools and max_steps replace the command's")
	addProviderFlags(fs)
	addStoreFlags(fs)
	addAgentFlags(fs)
	fs.String("log", "", "append a structured log of model and tool calls (no contents, never keys) to this file [$AGCORE_LOG]")
	addOtelFlag(fs)
	fs.Bool("json", false, "print one JSON report object on stdout instead of the table")
	fs.String("junit", "", "write the report as JUnit XML to `FILE`")
	fs.String("baseline", "", "compare with an earlier report (agcore eval --json) in `FILE`: list the regressions and improvements")
	fs.Int("repeat", 1, "run each case N times: the report gives its pass rate and each score's spread")
	fs.Float64("pass-rate", 1, "the share of a case's runs (--repeat) that must pass for the case to pass")
	fs.IntP("jobs", "j", 4, "cases run at once")
	fs.StringArray("from-record", nil, "make a case of this record (agcore run --record), run offline from it (repeatable)")
	fs.StringSlice("recorded-tools", nil, `in the cases with a record, answer the calls of these tools with their recorded results instead of running them (comma list; "all" for every tool the record has)`)
	fs.Bool("live", false, "run the cases made from records against the provider instead of answering from the records")
	fs.String("criteria", "", "ADK's test_config.json for the ADK sets (default: the one beside each set, else ADK's defaults)")
	fs.String("judge-provider", "", "the provider (any of --provider's) whose model judges rubrics; default the agent's")
	fs.String("judge-model", "", "the model that judges rubrics; default the judge provider's default, or the agent's model")
	fs.String("judge-records", "", "record each rubric judgment in `DIR` and replay those already there: a rerun asks no model")
	fs.String("print-schema", "", "print the JSON Schema of the set format (set) or of the --json report (report), and exit")
	return cmd
}

func (a *app) eval(cmd *cobra.Command, args []string) error {
	ctx := cmd.Context()
	f := cmd.Flags()
	if kind, _ := f.GetString("print-schema"); kind != "" {
		switch kind {
		case "set":
			_, err := a.env.Stdout.Write(eval.SchemaJSON)
			return err
		case "report":
			_, err := a.env.Stdout.Write(eval.ReportSchemaJSON)
			return err
		}
		return exit(ExitUsage, "--print-schema %q: set or report", kind)
	}
	records, _ := f.GetStringArray("from-record")
	if len(args) == 0 && len(records) == 0 {
		return exit(ExitUsage, "name an eval set FILE or a --from-record FILE (see agcore eval --help)")
	}
	repeat, _ := f.GetInt("repeat")
	jobs, _ := f.GetInt("jobs")
	passRate, _ := f.GetFloat64("pass-rate")
	if repeat < 1 || jobs < 1 || passRate <= 0 || passRate > 1 {
		return exit(ExitUsage, "--repeat and -j are at least 1, --pass-rate in (0, 1]")
	}
	var criteria *eval.ADKConfig
	if p, _ := f.GetString("criteria"); p != "" {
		b, err := os.ReadFile(p)
		if err != nil {
			return exit(ExitUsage, "--criteria %s: %v", p, unwrapPath(err))
		}
		if criteria, err = eval.ParseADKConfig(b, p); err != nil {
			return exit(ExitUsage, "%v", err)
		}
	}
	var baseline *eval.Report
	if p, _ := f.GetString("baseline"); p != "" {
		var err error
		if baseline, err = eval.ReadReport(p); err != nil {
			return exit(ExitUsage, "%v", err)
		}
	}

	// The sets, read before anything is built: a set that cannot be read
	// costs nothing.
	var sets []*eval.Set
	var files []string
	for _, p := range args {
		found, err := setFiles(p)
		if err != nil {
			return exit(ExitUsage, "%v", err)
		}
		files = append(files, found...)
	}
	for _, p := range files {
		s, err := eval.Load(p, criteria)
		if err != nil {
			return exit(ExitUsage, "%v", err)
		}
		sets = append(sets, s)
	}
	for _, p := range records {
		s, err := eval.LoadRecord(p)
		if err != nil {
			return exit(ExitUsage, "%v", err)
		}
		sets = append(sets, s)
	}
	if live, _ := f.GetBool("live"); live {
		for _, s := range sets {
			for i := range s.Cases {
				s.Cases[i].Record = nil
			}
		}
	}
	var firstRecord *eval.Case
	needLive := ""
	for _, s := range sets {
		for i := range s.Cases {
			c := &s.Cases[i]
			if c.Record != nil && firstRecord == nil {
				firstRecord = c
			}
			if c.Record == nil && needLive == "" {
				needLive = s.ID + "/" + c.ID
			}
		}
	}

	// The agent, built as agcore run and agcore replay build theirs, over
	// a model that answers record cases from their records.
	s, err := a.settings(cmd)
	var se *config.SetupError
	switch {
	case errors.As(err, &se) && se.Settings != nil:
		if needLive != "" {
			return a.noProvider(se.Settings, err)
		}
		s = se.Settings // offline: no key needed
	case err != nil:
		return err
	}
	if firstRecord != nil {
		if err := fromRecord(s, firstRecord.Record.Header); err != nil {
			return exit(ExitUsage, "%v", err)
		}
	}
	if err := s.Check(); err != nil {
		return exit(ExitUsage, "%v", err)
	}
	s.Store = "memory:" // cases run in sessions of their own; nothing is kept
	s.JSON = false
	// A provider is used when one is named (flag, environment, config
	// file), or when a case has no record; one found only from an API key
	// in the environment does not turn an offline eval live (its model
	// would show as drift), as for agcore replay.
	haveProvider := explicitProvider(s) || (needLive != "" && s.Provider != "" && se == nil)
	if needLive != "" && !haveProvider {
		return a.noProvider(s, fmt.Errorf("case %s has no record to answer from: it needs a provider", needLive))
	}
	var live llm.Model
	var info llm.ModelInfo
	if haveProvider {
		if live, err = newAdapter(s); err != nil {
			return exit(ExitUsage, "%v", err)
		}
		info = modelInfo(s, live)
	} else if firstRecord != nil {
		info = firstRecord.Record.Header.Info()
	}
	opts := buildOptions{adapter: eval.Offline(live, info), info: info, replaying: live == nil}
	if named, _ := f.GetStringSlice("recorded-tools"); len(named) > 0 {
		opts.toolMW = []tool.Middleware{eval.RecordedTools(named...)}
	}
	rt, err := a.build(ctx, s, opts)
	if err != nil {
		return err
	}
	defer rt.Close()
	var target eval.Target = rt.agent
	if s.Agent != "" {
		// The config file's agent, joined to the agents its handoffs
		// name, as agcore serve offers it.
		file, _, err := config.LoadFile(s.ConfigFile)
		if err != nil {
			return exit(ExitUsage, "%v", err)
		}
		rt.wrapModel = func(m llm.Model) llm.Model { return eval.Offline(m, m.Info()) }
		named, err := a.buildFileAgents(ctx, cmd, file.Agents, rt, nil)
		defer named.Close()
		if err != nil {
			return err
		}
		if n := named[s.Agent]; n != nil {
			target = n.agent
		}
	}

	var judge *eval.Judge
	jdir, _ := f.GetString("judge-records")
	if hasRubric(sets) {
		judge = &eval.Judge{Model: live, Records: jdir}
		jp, _ := f.GetString("judge-provider")
		jm, _ := f.GetString("judge-model")
		switch {
		case jp != "":
			// The judge's provider resolved as --provider would be, with
			// its own key variable and default model.
			in := a.input(cmd)
			in.Flags["provider"] = jp
			delete(in.Flags, "base-url")
			delete(in.Flags, config.AgentFlag)
			delete(in.Flags, "model")
			if jm != "" {
				in.Flags["model"] = jm
			}
			js, err := config.Resolve(in)
			if err == nil {
				err = js.Check()
			}
			if err != nil {
				return exit(ExitUsage, "--judge-provider %s: %v", jp, err)
			}
			if judge.Model, err = newAdapter(js); err != nil {
				return exit(ExitUsage, "--judge-provider %s: %v", jp, err)
			}
		case jm != "" && live != nil:
			js := *s
			js.Model = jm
			if judge.Model, err = newAdapter(&js); err != nil {
				return exit(ExitUsage, "--judge-model: %v", err)
			}
		}
	}

	// Progress, one line per case.
	stderr := a.env.Stderr
	var mu sync.Mutex
	total := 0
	for _, set := range sets {
		total += len(set.Cases)
	}
	done := 0
	progress := func(c eval.CaseReport) {
		mu.Lock()
		defer mu.Unlock()
		done++
		mark := "pass"
		if !c.Pass {
			mark = "FAIL"
		}
		extra := ""
		if repeat > 1 {
			extra = fmt.Sprintf(" (%.0f%% of %d runs)", c.PassRate*100, repeat)
		}
		if c.Drifted {
			extra += " drifted from its record"
		}
		if c.Error != "" {
			extra += ": " + c.Error
		}
		fmt.Fprintf(stderr, "[%d/%d] %s %s/%s%s\n", done, total, mark, c.Set, c.ID, extra)
	}
	var reports []*eval.Report
	for _, set := range sets {
		rep, err := eval.Run(ctx, target, set, &eval.Options{
			Scorers:     eval.Default(judge),
			Concurrency: jobs,
			Repeat:      repeat,
			MinPassRate: passRate,
			TurnTimeout: s.Timeout,
			OnCase:      progress,
		})
		if err != nil {
			if ctx.Err() != nil {
				return exit(ExitInterrupted, "interrupted")
			}
			return exit(ExitUsage, "%v", err)
		}
		reports = append(reports, rep)
	}
	rep := eval.Merge(reports...)

	out := a.env.Stdout
	asJSON, _ := f.GetBool("json")
	var cmp eval.Comparison
	if baseline != nil {
		cmp = eval.Compare(baseline, rep)
		rep.Baseline = &cmp
	}
	if asJSON {
		if err := rep.WriteJSON(out); err != nil {
			return exit(ExitFailed, "%v", err)
		}
	} else if err := rep.WriteTable(out); err != nil {
		return exit(ExitFailed, "%v", err)
	}
	if p, _ := f.GetString("junit"); p != "" {
		if err := writeFile(p, rep.WriteJUnit); err != nil {
			return exit(ExitFailed, "--junit: %v", err)
		}
	}
	if baseline != nil {
		w := out
		if asJSON {
			w = stderr // stdout holds one JSON object
		}
		cmp.Write(w)
	}
	if !rep.OK() {
		return exit(ExitFailed, "")
	}
	return nil
}

// setFiles is path, or, for a directory, the eval sets under it (as ADK
// finds its test files): *.eval.json, *.evalset.json and *.test.json, in
// lexical order.
func setFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return []string{path}, nil // Load says what is wrong
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		n := d.Name()
		if !d.IsDir() && (strings.HasSuffix(n, ".eval.json") || strings.HasSuffix(n, ".evalset.json") || strings.HasSuffix(n, ".test.json")) {
			out = append(out, p)
		}
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no eval set in it (*.eval.json, *.evalset.json, *.test.json)", path)
	}
	return out, err
}

func hasRubric(sets []*eval.Set) bool {
	for _, s := range sets {
		for _, c := range s.Cases {
			for _, t := range c.Turns {
				if len(t.Expect.Rubric) > 0 {
					return true
				}
			}
		}
	}
	return false
}

// writeFile writes a file through write, atomically.
func writeFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return unwrapPath(err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s", strings.TrimSpace(pe.Err.Error()))
	}
	return err
}
