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
