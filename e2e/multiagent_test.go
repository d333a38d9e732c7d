package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// TestOpenAIGoHandoffItems: OpenAI's Go SDK parses the Responses output of
// a turn that hands off (the built agcore serve, the demo model, a config
// file whose triage agent hands off to billing), streamed and not: every
// item decodes, agcore's "agent" field is there for who wants it, and the
// answer's text is billing's.
func TestOpenAIGoHandoffItems(t *testing.T) {
	home := t.TempDir()
	cfg := `{"agents": {
		"triage": {"system": "You route questions.", "tools": [], "handoffs": ["billing"]},
		"billing": {"system": "You are the billing specialist.", "tools": []}
	}}`
	if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	cmd := exec.CommandContext(ctx, cli, "serve", "--addr", "127.0.0.1:0", "--store", "memory:")
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "AGCORE_HOME=" + home, "PATH=" + os.Getenv("PATH"), "AGCORE_PROVIDER=demo"}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		defer cancel()
		cmd.Process.Signal(os.Interrupt)
		for range lines {
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("agcore serve exited with %v", err)
		}
	})
	base := ""
	re := regexp.MustCompile(`listening on (http://\S+)`)
	for line := range lines {
		if m := re.FindStringSubmatch(line); m != nil {
			base = m[1]
			go func() {
				for range lines {
				}
			}()
			break
		}
	}
	if base == "" {
		t.Fatal("agcore serve never said where it listens")
	}
	client := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("unused"), option.WithMaxRetries(0))
	params := responses.ResponseNewParams{Model: "triage", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("A billing question: I was charged twice.")}}

	check := func(name string, r *responses.Response) {
		t.Helper()
		var got []string
		for _, it := range r.Output {
			var ext struct {
				Agent string `json:"agent"`
			}
			if err := json.Unmarshal([]byte(it.RawJSON()), &ext); err != nil {
				t.Fatal(err)
			}
			got = append(got, it.Type+" "+ext.Agent)
		}
		want := []string{"message triage", "function_call triage", "function_call_output triage", "message billing"}
		if len(got) != len(want) {
			t.Fatalf("%s: items %q, want %q\n%s", name, got, want, r.RawJSON())
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: item %d %q, want %q", name, i, got[i], want[i])
			}
		}
		last := r.Output[len(r.Output)-1].AsMessage()
		if len(last.Content) != 1 || !regexp.MustCompile(`billing specialist`).MatchString(last.Content[0].Text) {
			t.Errorf("%s: the answer %+v is not billing's", name, last.Content)
		}
		if call := r.Output[1].AsFunctionCall(); call.Name != "transfer_to_billing" || call.Status != "completed" {
			t.Errorf("%s: the transfer call %+v", name, call)
		}
	}
	r, err := client.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	check("plain", r)

	rs := client.Responses.NewStreaming(ctx, params)
	var completed *responses.Response
	for rs.Next() {
		if ev := rs.Current(); ev.Type == "response.completed" {
			r := ev.Response
			completed = &r
		}
	}
	if err := rs.Err(); err != nil || completed == nil {
		t.Fatalf("stream: %v, completed %v", err, completed != nil)
	}
	check("streamed", completed)
}
