package main_test

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agcore/agcore/eval"
)

// TestEvalCommand runs the built agcore eval as the README and --help
// show it: a committed record offline (no provider, no key), the same
// record with a changed prompt (drift flagged, exit 1), a set against the
// demo provider with --json and --junit, then --baseline against that
// report with a case that now fails (the regression listed, exit 1), and
// the usage mistakes (exit 2, one line naming the file and the field).
func TestEvalCommand(t *testing.T) {
	skipShort(t, "the README's agcore eval lines run in TestDocumentedCommands in -short")
	t.Parallel()
	data, _ := filepath.Abs("../../examples/eval/testdata")
	record := filepath.Join(data, "notes.record.jsonl")
	notes := filepath.Join(data, "notes")
	set := filepath.Join(data, "notes.eval.json")
	c := newCLI(t)

	r := c.ok("eval", "--from-record", record, "--root", notes)
	if !strings.Contains(r.stdout, "1 of 1 cases passed") || !strings.Contains(r.stderr, "[1/1] pass notes/notes") {
		t.Fatalf("offline eval of the record:\n%s%s", r.stdout, r.stderr)
	}

	r = c.run("", "eval", "--from-record", record, "--root", notes, "--system", "Be terse.")
	if r.code != 1 || !strings.Contains(r.stdout, `system prompt changed: "You are a careful reader. Answer from the notes." → "Be terse."`) ||
		!strings.Contains(r.stdout, "FAIL drift") || !strings.Contains(r.stderr, "drifted from its record") {
		t.Fatalf("a changed prompt: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A key in the environment does not make an offline eval live (the
	// provider's prices would apply, its model show as drift).
	keyed := newCLI(t)
	keyed.env["OPENAI_API_KEY"] = "sk-test"
	r = keyed.ok("eval", "--from-record", record, "--root", notes, "--json")
	var offline eval.Report
	if err := json.Unmarshal([]byte(r.stdout), &offline); err != nil || offline.Cost != 0 || offline.Cases[0].Drifted {
		t.Errorf("with a key in the environment (%v): cost %v drifted %v", err, offline.Cost, offline.Cases[0].Drifted)
	}

	// Tools run for real: in another root their results drift; answered
	// from the record, they do not.
	empty := t.TempDir()
	if r := c.run("", "eval", "--from-record", record, "--root", empty); r.code != 1 || !strings.Contains(r.stdout, "tool result of call call_1 (list_dir) differs") {
		t.Errorf("another root: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c.ok("eval", "--from-record", record, "--root", empty, "--recorded-tools", "all")

	junit := filepath.Join(t.TempDir(), "eval.xml")
	r = c.ok("eval", "--provider", "demo", "--root", notes, "--json", "--junit", junit, "--repeat", "2", "-j", "2", set)
	var rep eval.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("--json is not one report object: %v\n%s", err, r.stdout)
	}
	validReport(t, r.stdout)
	if rep.Version != 1 || rep.Passed != 2 || rep.Failed != 0 || rep.Repeat != 2 || len(rep.Cases) != 2 || len(rep.Cases[0].Runs) != 2 {
		t.Fatalf("report: %+v", rep)
	}
	summary := rep.Cases[0]
	if summary.ID != "any-order" && summary.ID != "summary" {
		t.Fatalf("case %q", summary.ID)
	}
	for _, cr := range rep.Cases {
		if cr.Usage.Total() == 0 || cr.PassRate != 1 {
			t.Errorf("%s: usage %+v pass rate %v", cr.ID, cr.Usage, cr.PassRate)
		}
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name string `xml:"name,attr"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil || suites.Tests != 2 || suites.Failures != 0 || suites.Suites[0].Name != "notes" || len(suites.Suites[0].Cases) != 2 {
		t.Fatalf("junit (%v): %+v\n%s", err, suites, b)
	}
	baseline := filepath.Join(t.TempDir(), "baseline.json")
	os.WriteFile(baseline, []byte(r.stdout), 0o644)

	// The same set with the summary's answer expected to name a file the
	// notes do not have: a regression against the baseline.
	raw, _ := os.ReadFile(set)
	worse := filepath.Join(t.TempDir(), "notes.eval.json")
	os.WriteFile(worse, []byte(strings.Replace(string(raw), `"contains": ["release.md", "todo.txt"]`, `"contains": ["release.md", "CHANGELOG.md"]`, 1)), 0o644)
	junit2 := filepath.Join(t.TempDir(), "eval.xml")
	r = c.run("", "eval", "--provider", "demo", "--root", notes, "--baseline", baseline, "--junit", junit2, worse)
	if r.code != 1 || !strings.Contains(r.stdout, "regression: summary: passed → failed") || !strings.Contains(r.stdout, "regression: summary: answer 1.00 → 0.67") ||
		!strings.Contains(r.stdout, `answer does not contain "CHANGELOG.md"`) || !strings.Contains(r.stdout, "against the baseline: 2 regressions, 0 improvements") {
		t.Fatalf("against the baseline: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = c.run("", "eval", "--provider", "demo", "--root", notes, "--json", "--baseline", baseline, worse)
	var withBase eval.Report
	if err := json.Unmarshal([]byte(r.stdout), &withBase); err != nil || r.code != 1 || withBase.Baseline == nil || len(withBase.Baseline.Regressions) != 2 ||
		!strings.Contains(r.stderr, "regression: summary: passed → failed") {
		t.Fatalf("--json --baseline (%v): exit %d\n%s%s", err, r.code, r.stdout, r.stderr)
	}
	validReport(t, r.stdout)
	if b, _ := os.ReadFile(junit2); !strings.Contains(string(b), `failures="1"`) || !strings.Contains(string(b), "answer 0.67 &lt; 1.00") {
		t.Errorf("junit of a failing case:\n%s", b)
	}

	// Usage mistakes and unreadable files: exit 2, one line.
	bad := filepath.Join(t.TempDir(), "bad.eval.json")
	os.WriteFile(bad, []byte(`{"agcore_eval":1,"cases":[{"id":"a","turns":[{"input":"x","expect":{"trajectory":{"calls":[{"name":"f","args_rule":"loose"}]}}}]}]}`), 0o644)
	notReport := filepath.Join(t.TempDir(), "r.json")
	os.WriteFile(notReport, []byte(`{"cases":[]}`), 0o644)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"malformed set", []string{"eval", "--provider", "demo", bad}, bad + `: cases[0].turns[0].expect.trajectory.calls[0].args_rule: "loose" is not an argument rule`},
		{"missing set", []string{"eval", "--provider", "demo", filepath.Join(data, "nowhere.json")}, "nowhere.json: no such file or directory"},
		{"not a report", []string{"eval", "--provider", "demo", "--baseline", notReport, set}, notReport + ": agcore_eval: not an eval report"},
		{"nothing to run", []string{"eval"}, "name an eval set FILE"},
		{"not a record", []string{"eval", "--from-record", set}, set + ":"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.run("", tc.args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) || r.stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 2 and one line with %q", r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}

	// A directory: the sets under it, agcore's and ADK's.
	if r := c.ok("eval", "--provider", "demo", "--root", notes, data); !strings.Contains(r.stdout, "3 of 3 cases passed") || !strings.Contains(r.stdout, "what_do_the_notes_say") {
		t.Errorf("a directory of sets:\n%s%s", r.stdout, r.stderr)
	}

	// A config-file agent with its handoffs: the calls after the handoff
	// are the agent handed to's, and it answers.
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agents.json")
	os.WriteFile(cfg, []byte(`{"agents": {
	  "triage":  {"provider": "demo", "system": "Route each question.", "tools": [], "handoffs": ["billing"]},
	  "billing": {"provider": "demo", "system": "You read the notes.", "tools": ["list_dir", "read_file"], "description": "Reads notes."}}}`), 0o644)
	multi := filepath.Join(dir, "multi.eval.json")
	os.WriteFile(multi, []byte(`{"agcore_eval": 1, "id": "multi", "cases": [{"id": "handed-over", "turns": [{"input": "A question for billing: what do the notes say?", "expect": {
	  "trajectory": {"match": "IN_ORDER", "args": "ignore", "calls": [{"name": "transfer_to_billing", "agent": "triage"}, {"name": "list_dir", "agent": "billing"}, {"name": "read_file", "agent": "billing"}]},
	  "agent": "billing"}}]}]}`), 0o644)
	r = c.ok("eval", "--config", cfg, "--agent", "triage", "--root", notes, multi)
	if !strings.Contains(r.stdout, "1 of 1 cases passed") {
		t.Errorf("handoff case:\n%s%s", r.stdout, r.stderr)
	}
	// The same expectation of the agent handed to alone fails: no handoff.
	r = c.run("", "eval", "--config", cfg, "--agent", "billing", "--root", notes, multi)
	if r.code != 1 || !strings.Contains(r.stdout, `answered by "billing"`) && !strings.Contains(r.stdout, "tool_trajectory_avg_score 0.00 < 1.00") {
		t.Errorf("without the handoff: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A rubric judged by a provider's model (the demo's structured
	// answer), recorded; rerun with no provider at all, the judgment is
	// replayed; with neither a record nor a model, the case says so.
	judged := filepath.Join(dir, "judged.eval.json")
	os.WriteFile(judged, []byte(`{"agcore_eval": 1, "id": "judged", "cases": [{"id": "notes", "record": "`+record+`", "turns": [{"input": "What do the notes say?",
	  "expect": {"rubric": ["The answer names release.md.", "The answer is in French."]}}]}]}`), 0o644)
	judgments := filepath.Join(dir, "judgments")
	rubric := func(args ...string) (eval.ScoreSummary, result) {
		t.Helper()
		r := c.run("", append([]string{"eval", "--root", notes, "--json"}, args...)...)
		var rep eval.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("%v: exit %d\n%s%s", err, r.code, r.stdout, r.stderr)
		}
		for _, s := range rep.Cases[0].Scores {
			if s.Scorer == eval.ScoreRubric {
				return s, r
			}
		}
		t.Fatalf("no rubric score: %s", r.stdout)
		return eval.ScoreSummary{}, r
	}
	live, _ := rubric("--judge-provider", "demo", "--judge-records", judgments, judged)
	files, _ := filepath.Glob(filepath.Join(judgments, "judge-*.jsonl"))
	if len(files) != 1 || live.Mean <= 0 {
		t.Fatalf("judged live: %+v, records %v", live, files)
	}
	replayed, _ := rubric("--judge-records", judgments, judged)
	if replayed.Mean != live.Mean || replayed.Detail != live.Detail {
		t.Errorf("replayed judgment %+v, live %+v", replayed, live)
	}
	none, r := rubric(judged)
	if none.Mean != 0 || !strings.Contains(none.Detail, "no recorded judgment and no judge model") || r.code != 1 {
		t.Errorf("no judge: %+v exit %d", none, r.code)
	}

	// A set whose cases have no record needs a provider.
	r = c.run("", "eval", "--root", notes, set)
	if r.code != 2 || !strings.Contains(r.stderr, "case notes/summary has no record") {
		t.Errorf("no provider: exit %d\n%s", r.code, r.stderr)
	}
}

// validReport checks a --json report against the published schema.
func validReport(t *testing.T, doc string) {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(eval.ReportSchemaJSON, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	json.Unmarshal([]byte(doc), &v)
	if err := rs.Validate(v); err != nil {
		t.Errorf("the report does not validate against eval/schema/report.schema.json: %v", err)
	}
}
