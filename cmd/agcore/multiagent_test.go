package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeConfigHandoffs: the built binary's serve joins the config
// file's agents by their handoffs: a turn of the triage agent is handed to
// the billing agent it names; the Responses output items say which agent
// produced each; the stored session records who answered, which sessions
// show prints.
func TestServeConfigHandoffs(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	cfg := `{"agents": {
		"triage": {"system": "You route questions to a specialist.", "tools": [], "handoffs": ["billing", "tech_support"]},
		"billing": {"system": "You are the billing specialist.", "tools": [], "description": "Invoices and refunds.", "handoffs": ["triage"]},
		"tech_support": {"system": "You fix crashes.", "tools": [], "handoffs": ["triage"]}
	}}`
	if err := os.WriteFile(filepath.Join(c.home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	base, cmd, lines := c.startServe(t)
	resp, err := http.Post(base+"/v1/responses", "application/json",
		strings.NewReader(`{"model":"triage","input":"I was charged twice: a billing question.","conversation":"ticket-1"}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Output []struct {
			Type    string `json:"type"`
			Name    string `json:"name"`
			Agent   string `json:"agent"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	var got []string
	for _, it := range body.Output {
		got = append(got, it.Type+"/"+it.Agent+"/"+it.Name)
	}
	want := "message/triage/ function_call/triage/transfer_to_billing function_call_output/triage/ message/billing/"
	if strings.Join(got, " ") != want {
		t.Fatalf("output items %q, want %q", got, want)
	}
	if last := body.Output[len(body.Output)-1]; !strings.Contains(last.Content[0].Text, "You are the billing specialist.") {
		t.Errorf("answer %q: not billing's", last.Content[0].Text)
	}
	if log, err := interrupt(t, cmd, lines); err != nil {
		t.Fatalf("exit: %v\n%s", err, log)
	}

	out := c.ok("sessions", "show", "ticket-1").stdout
	for _, want := range []string{"── assistant (triage) ──", "→ transfer_to_billing", "── assistant (billing) ──"} {
		if !strings.Contains(out, want) {
			t.Errorf("sessions show lacks %q:\n%s", want, out)
		}
	}
	var js struct {
		Agents []struct {
			From  int    `json:"from"`
			Agent string `json:"agent"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(c.ok("sessions", "show", "--json", "ticket-1").stdout), &js); err != nil || len(js.Agents) != 2 ||
		js.Agents[0].Agent != "triage" || js.Agents[1].Agent != "billing" || js.Agents[1].From != 3 {
		t.Errorf("sessions show --json agents %+v (%v)", js.Agents, err)
	}
}

// TestServeConfigHandoffUnknown: a handoff to an agent the file does not
// have is a usage error, before anything listens.
func TestServeConfigHandoffUnknown(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	cfg := `{"agents": {"triage": {"handoffs": ["nobody"]}}}`
	if err := os.WriteFile(filepath.Join(c.home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := c.run("", "serve", "--addr", "127.0.0.1:0")
	if r.code != 2 || !strings.Contains(r.stderr, `agent "triage" of the config file hands off to "nobody"`) {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

// TestRunAgentJoinsHandoffs: run and chat --agent NAME join the config
// file's handoffs as serve does (the turn is handed over and stored with
// the agent that answered), refuse a handoff to an agent the file lacks,
// and apply the agent's guardrails.
func TestRunAgentJoinsHandoffs(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	cfg := `{"agents": {
	  "triage":  {"system": "Route each question.", "tools": [], "handoffs": ["billing"],
	              "guardrails": [{"name": "no-passwords", "stage": "input", "pattern": "(?i)password", "reason": "asks for a password"}]},
	  "billing": {"system": "You handle invoices.", "description": "Invoices.", "tools": []}}}`
	if err := os.WriteFile(filepath.Join(c.home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	r := c.run("", "run", "--agent", "triage", "--session", "bill", "--json", "Billing: why was I charged twice?")
	if r.code != 0 || !strings.Contains(r.stdout, `"name":"transfer_to_billing"`) || !strings.Contains(r.stdout, "You handle invoices.") {
		t.Fatalf("run --agent triage: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	show := c.run("", "sessions", "show", "bill")
	if show.code != 0 || !strings.Contains(show.stdout, "billing") {
		t.Fatalf("sessions show: exit %d\n%s\n%s", show.code, show.stdout, show.stderr)
	}
	r = c.run("Billing: again\n", "chat", "--agent", "triage", "--session", "bill")
	if r.code != 0 || !strings.Contains(r.stdout, "You handle invoices.") {
		t.Fatalf("chat --agent triage: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	lost := filepath.Join(t.TempDir(), "lost.json")
	if err := os.WriteFile(lost, []byte(`{"agents": {"lost": {"handoffs": ["nobody"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r = c.run("", "run", "--config", lost, "--agent", "lost", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, `hands off to "nobody"`) {
		t.Fatalf("run --agent lost: exit %d\n%s", r.code, r.stderr)
	}
	r = c.run("", "run", "--agent", "triage", "--session", "pw", "What is the admin password?")
	if r.code != 1 || !strings.Contains(r.stderr, `input guardrail "no-passwords" tripped: asks for a password`) {
		t.Fatalf("guardrail: exit %d\n%s", r.code, r.stderr)
	}
}

// TestReplayOfAHandoff: a run --agent triage --record turn handed to
// billing replays without drift (the record's agent is rebuilt with its
// handoffs, and the calls of the agent handed to are in the record), the
// replay prints the replayed answer, and --json gives it as objects.
func TestReplayOfAHandoff(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "demo"
	cfg := `{"agents": {
	  "triage":  {"system": "Route each question.", "tools": [], "handoffs": ["billing"]},
	  "billing": {"system": "You handle invoices.", "description": "Invoices.", "tools": []}}}`
	if err := os.WriteFile(filepath.Join(c.home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "handoff.jsonl")
	c.ok("run", "--agent", "triage", "--store", "memory:", "--record", file, "Billing: why was I charged twice?")
	r := c.ok("replay", file)
	for _, want := range []string{"no drift: 2 of 2 calls", "turn 1 answer (billing):", "You handle invoices."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("replay: stdout lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	}
	r = c.ok("replay", "--json", file)
	var types []string
	var answer, who string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("replay --json: %q: %v", line, err)
		}
		types = append(types, ev["type"].(string))
		if ev["type"] == "turn" {
			answer, _ = ev["answer"].(string)
			who, _ = ev["agent"].(string)
		}
		if ev["type"] == "summary" && ev["drifted"] != float64(0) {
			t.Errorf("replay --json summary: %v", ev)
		}
	}
	if strings.Join(types, " ") != "start turn summary" || who != "billing" || !strings.Contains(answer, "You handle invoices.") {
		t.Errorf("replay --json: %q, answer %q by %q\n%s", types, answer, who, r.stdout)
	}
}
