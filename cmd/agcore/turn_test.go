package main_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Piped input joins a prompt given as arguments, as llm and mods do: the
// prompt, a blank line, then stdin.
func TestPipedInputJoinsThePrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"a prompt and piped input", "the diff\n+added line\n", []string{"summarise this:"}, "summarise this:\n\nthe diff\n+added line"},
		{"piped input alone", "just stdin\n", nil, "just stdin"},
		{"- reads stdin", "dash stdin\n", []string{"-"}, "dash stdin"},
		{"a prompt and empty stdin", "", []string{"only the prompt"}, "only the prompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, openaiReply(turn{text: "ok"}))
			c := newCLI(t).openai(srv, "sk-test")
			if r := c.run(tt.stdin, append([]string{"run", "--json", "--tools", ""}, tt.args...)...); r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := userText(t, srv, 0); got != tt.want {
				t.Errorf("the user message sent = %q, want %q", got, tt.want)
			}
		})
	}
}

// userText returns the last user message of request i.
func userText(t *testing.T, srv *fake, i int) string {
	t.Helper()
	msgs, _ := srv.got()[i].body["messages"].([]any)
	text := ""
	for _, m := range msgs {
		if mm := m.(map[string]any); mm["role"] == "user" {
			text, _ = mm["content"].(string)
		}
	}
	return text
}

// A session id is printed only when the session holds the turn; otherwise
// the user is told that nothing was stored.
func TestSessionIDIsPrintedOnlyWhenStored(t *testing.T) {
	t.Parallel()
	srv := newFake(t,
		status(500, `{"error":{"message":"boom","type":"server_error"}}`),
		openaiReply(turn{text: "Kept."}),
		openaiReply(turn{text: "Not kept."}),
		status(500, `{"error":{"message":"boom again","type":"server_error"}}`),
	)
	c := newCLI(t).openai(srv, "sk-test")

	r := c.run("", "run", "Fails")
	if r.code != 1 || strings.Contains(r.stderr, "session ") {
		t.Errorf("a failed turn: exit %d, stderr names a session:\n%s", r.code, r.stderr)
	}
	if list := c.ok("sessions", "list", "--json"); !strings.Contains(list.stdout, `"sessions":[]`) {
		t.Errorf("a failed turn left a session: %s", list.stdout)
	}

	r = c.ok("run", "--session", "kept", "Works")
	if lastLine(r.stderr) != "session kept" {
		t.Errorf("a stored turn ends with %q, want the session", lastLine(r.stderr))
	}
	r = c.ok("run", "--store", "memory:", "Works too")
	if strings.Contains(r.stderr, "session ") || lastLine(r.stderr) != "not stored (--store memory:)" {
		t.Errorf("--store memory: ends with %q", lastLine(r.stderr))
	}
	r = c.run("", "run", "--session", "kept", "Fails again")
	if r.code != 1 || lastLine(r.stderr) != "session kept is as it was" {
		t.Errorf("a failed turn of a stored session: exit %d, ends with %q", r.code, lastLine(r.stderr))
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// Ctrl-C is not an error: one quiet line, exit status 130, nothing
// stored, and no "Ctrl-C again to quit" in run.
func TestCtrlCInRunIsOneQuietLine(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	t.Parallel()
	srv := newFake(t, openaiReply(turn{text: "This answer never ends", hang: true}))
	c := newCLI(t).openai(srv, "sk-test")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.command(ctx, "run", "--session", "s", "two")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(stdout)
	if _, err := br.ReadByte(); err != nil { // the answer has started
		t.Fatal(err)
	}
	cmd.Process.Signal(os.Interrupt)
	io.Copy(io.Discard, br)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Errorf("exit: %v, want status 130", err)
	}
	if got := strings.TrimSpace(stderr.String()); got != "cancelled; nothing was stored" {
		t.Errorf("stderr = %q, want the one line", got)
	}
	if r := c.run("", "sessions", "show", "s"); r.code != 1 {
		t.Errorf("the cancelled turn was stored: %s", r.stdout)
	}
}

// silentServer accepts requests and never answers them.
func silentServer(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// A dead server is reported within the idle timeout, not once per retry:
// the silence is counted across the attempts of a call.
func TestHungServerIsReportedWithinTheIdleTimeout(t *testing.T) {
	t.Parallel()
	t.Run("silent from the start", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, silentServer)
		c := newCLI(t).openai(srv, "sk-test")
		start := time.Now()
		r := c.run("", "run", "--retries", "3", "--idle-timeout", "1s", "hello")
		if r.code != 1 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		want := "no response from " + srv.URL + "/v1 in 1 s"
		if !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "retrying") {
			t.Errorf("stderr = %q, want %q and no retry", r.stderr, want)
		}
		if n := len(srv.got()); n != 1 {
			t.Errorf("%d requests, want 1: the silence used the whole budget", n)
		}
		if el := time.Since(start); el > 20*time.Second {
			t.Errorf("took %s", el)
		}
	})
	t.Run("silent across retries", func(t *testing.T) {
		t.Parallel()
		// The first attempt is silent for 0.6 s and then dropped; the
		// retry has only the 0.4 s left of the 1 s budget.
		drop := func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(600 * time.Millisecond)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}
		srv := newFake(t, drop, silentServer)
		c := newCLI(t).openai(srv, "sk-test")
		r := c.run("", "run", "--json", "--retries", "3", "--idle-timeout", "1s", "hello")
		e := last(t, events(t, r.stdout))
		if r.code != 1 || e["code"] != "network" || !strings.Contains(e["message"].(string), "no response from") {
			t.Errorf("exit %d, last event %v", r.code, e)
		}
		if n := len(srv.got()); n != 2 {
			t.Errorf("%d requests, want 2 (the second ran out of the shared budget)", n)
		}
	})
}

// --timeout bounds the whole turn, even when the server keeps sending.
func TestTimeoutStopsAWholeTurn(t *testing.T) {
	t.Parallel()
	trickle := func(w http.ResponseWriter, r *http.Request) {
		s := newSSE(w)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				s.data(map[string]any{"id": "c", "object": "chat.completion.chunk", "model": "m",
					"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": "."}, "finish_reason": nil}}})
			}
		}
	}
	srv := newFake(t, trickle)
	c := newCLI(t).openai(srv, "sk-test")
	r := c.run("", "run", "--json", "--timeout", "1s", "--idle-timeout", "30s", "hello")
	e := last(t, events(t, r.stdout))
	if r.code != 1 || e["code"] != "timeout" || !strings.Contains(e["message"].(string), "took longer than --timeout 1s") {
		t.Errorf("exit %d, last event %v", r.code, e)
	}
}
