package agtemporal_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// durableAgents is a config file of two agents: triage, guarded against
// passwords and handing billing questions over to billing.
const durableAgents = `{"agents": {
  "triage":  {"system": "Route each question.", "tools": [], "handoffs": ["billing"],
              "guardrails": [{"name": "no-passwords", "stage": "input", "pattern": "(?i)password"}]},
  "billing": {"system": "You handle invoices.", "description": "Invoices and refunds.", "tools": []}
}}`

// TestE2EDurableRunIsTheAgent drives the built agcore the way a user does:
// agcore worker (the demo model, no key) and agcore run --temporal with
// the config file's agent, its handoff, its guardrail, spending limits,
// --schema, --json and --record, then agcore replay of the durable record
// in-process. Each behaves as agcore run does locally.
func TestE2EDurableRunIsTheAgent(t *testing.T) {
	addr, _ := devServer(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agents.json")
	if err := os.WriteFile(cfg, []byte(durableAgents), 0o600); err != nil {
		t.Fatal(err)
	}
	worker := startAgcore(t, "worker", "--temporal", addr, "--provider", "demo", "--store", "sqlite:"+filepath.Join(dir, "agcore.db"), "--root", dir)
	run := func(args ...string) (int, string, string) {
		t.Helper()
		p := startAgcore(t, append([]string{"run", "--temporal", addr, "--config", cfg}, args...)...)
		code := p.wait(t, "agcore run --temporal "+strings.Join(args, " "))
		return code, p.out.String(), p.errw.String()
	}

	// A handoff: triage hands the billing question over; billing answers.
	code, out, errw := run("--agent", "triage", "--token-budget", "20000", "Billing: why was I charged twice?")
	if code != 0 || !strings.Contains(out, "You handle invoices.") || !strings.Contains(errw, "answered by billing") {
		t.Fatalf("handoff: exit %d\nstdout:\n%s\nstderr:\n%s\nworker:\n%s", code, out, errw, worker.errw)
	}

	// The input guardrail trips: exit 1, named, nothing stored.
	code, _, errw = run("--agent", "triage", "--session", "guarded", "Billing: what is my password?")
	if code != 1 || !strings.Contains(errw, `input guardrail "no-passwords" tripped`) {
		t.Fatalf("guardrail: exit %d\n%s", code, errw)
	}

	// A spending limit that the first call could cross: refused, exit 1.
	code, _, errw = run("--agent", "triage", "--token-budget", "300", "Billing: charged twice")
	if code != 1 || !strings.Contains(errw, "token limit of 300") {
		t.Fatalf("budget: exit %d\n%s", code, errw)
	}

	// A typed answer: the object alone on stdout.
	code, out, errw = run("--agent", "triage", "--schema", `{"type":"object","properties":{"topic":{"type":"string"}},"required":["topic"]}`, "Billing: charged twice")
	var obj map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &obj) != nil || obj["topic"] == nil {
		t.Fatalf("schema: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errw)
	}

	// --json: agcore run's events, the answering agent in done.
	code, out, _ = run("--agent", "triage", "--json", "Billing: charged twice")
	if code != 0 || !strings.Contains(out, `"type":"tool_call"`) || !strings.Contains(out, `"agent":"billing"`) || !strings.Contains(out, `"type":"done"`) {
		t.Fatalf("--json: exit %d\n%s", code, out)
	}

	// --record, then agcore replay in this process: no drift.
	rec := filepath.Join(t.TempDir(), "durable.jsonl") // outside the tools' directory
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("durable notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errw = run("--record", rec, "--tools", "read_file,list_dir", "Summarize the files here")
	if code != 0 {
		t.Fatalf("--record: exit %d\n%s", code, errw)
	}
	rp := startAgcore(t, "replay", "--root", dir, rec)
	if code := rp.wait(t, "agcore replay"); code != 0 || !strings.Contains(rp.errw.String()+rp.out.String(), "no drift") {
		t.Fatalf("replay: exit %d\nstdout:\n%s\nstderr:\n%s", code, rp.out, rp.errw)
	}

	// A flag of the worker's is refused, naming the worker's flag.
	code, _, errw = run("--store", "memory:", "hi")
	if code != 2 || !strings.Contains(errw, "agcore worker --store") {
		t.Fatalf("--store: exit %d\n%s", code, errw)
	}
}
