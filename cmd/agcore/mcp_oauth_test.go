package main_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/oauthtest"
)

// The whole life of a login, through the built binary: a server behind
// OAuth refuses run without one (one line naming agcore mcp login); agcore
// mcp login (the browser played by the test) keeps the tokens, mode 0600;
// run reaches the server; an access token the server drops is refreshed; a
// revoked login is one line naming agcore mcp login again; logout forgets.
func TestMCPOAuthLoginRunRefreshRevoke(t *testing.T) {
	t.Parallel()
	as := oauthtest.New(t)
	srv := newFake(t)
	c := newCLI(t).openai(srv, "sk-test")

	r := c.run("", "run", "--mcp-url", as.MCPURL, "Who am I?")
	if r.code == 0 || !strings.Contains(r.stderr, "needs a login") || !strings.Contains(r.stderr, "run `agcore mcp login "+as.MCPURL+"`") {
		t.Fatalf("before a login: exit %d, stderr:\n%s", r.code, r.stderr)
	}

	login(t, c, as)
	files, _ := filepath.Glob(filepath.Join(c.home, "mcp-oauth", "*.json"))
	if len(files) != 1 {
		t.Fatalf("token files: %v", files)
	}
	if info, err := os.Stat(files[0]); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("the token file's mode: %v, %v", info.Mode().Perm(), err)
	}
	token := as.LastAccessToken()

	whoami := func() result {
		srv.add(openaiReply(turn{calls: []call{{"w1", "mcp__http__whoami", `{}`}}}), openaiReply(turn{text: "You are the user."}))
		return c.run("", "run", "--json", "--mcp-url", as.MCPURL, "Who am I?")
	}
	r = whoami()
	if res := ofType(events(t, r.stdout), "tool_result"); r.code != 0 || len(res) != 1 || res[0]["output"] != "you are user1" {
		t.Fatalf("run after login: exit %d, results %v\n%s", r.code, res, r.stderr)
	}

	list := c.ok("mcp", "list", "--mcp-url", as.MCPURL)
	if !strings.Contains(list.stdout, "oauth login") || !strings.Contains(list.stdout, "mcp__http__whoami") {
		t.Errorf("mcp list:\n%s", list.stdout)
	}

	as.ExpireAccess()
	r = whoami()
	if r.code != 0 || as.Count("refresh") != 1 {
		t.Fatalf("after the access token was dropped: exit %d, refreshes %d\n%s", r.code, as.Count("refresh"), r.stderr)
	}

	as.Revoke()
	r = c.run("", "run", "--mcp-url", as.MCPURL, "Who am I?")
	line := strings.TrimSpace(r.stderr)
	if r.code == 0 || strings.Contains(line, "\n") || !strings.Contains(line, "revoked") || !strings.Contains(line, "run `agcore mcp login "+as.MCPURL+"`") {
		t.Errorf("after revocation: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, out := range []string{r.stdout, r.stderr, list.stdout, list.stderr, c.ok("config").stdout} {
		if strings.Contains(out, token) {
			t.Error("a token was shown")
		}
	}

	out := c.ok("mcp", "logout", as.MCPURL)
	if !strings.Contains(out.stdout, "Logged out") {
		t.Errorf("logout: %s", out.stdout)
	}
	if files, _ := filepath.Glob(filepath.Join(c.home, "mcp-oauth", "*.json")); len(files) != 0 {
		t.Errorf("token files after logout: %v", files)
	}
}

// login runs agcore mcp login against the test's authorization server,
// opening the URL it prints as the user's browser would; extra are more
// flags (--principal NAME).
func login(t *testing.T, c *cli, as *oauthtest.Server, extra ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.command(ctx, append([]string{"mcp", "login", "--no-browser", as.MCPURL}, extra...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var said []string
	for sc.Scan() {
		line := sc.Text()
		said = append(said, line)
		if u := strings.TrimSpace(line); strings.HasPrefix(u, as.URL+"/authorize?") {
			if err := as.Approve(ctx, u); err != nil {
				t.Errorf("the browser: %v", err)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("agcore mcp login: %v\nstderr:\n%s", err, strings.Join(said, "\n"))
	}
	if !strings.Contains(stdout.String(), "Logged in to "+as.MCPURL) || !strings.Contains(stdout.String(), ": 1 tools") {
		t.Errorf("login said: %s", stdout.String())
	}
}

// Two principals of agcore serve never share a token: each turn's MCP call
// goes with its principal's own login (agcore mcp login --principal), and a
// principal without one gets an error result naming the command that
// gives one.
func TestMCPOAuthPrincipalsOfServeNeverShareAToken(t *testing.T) {
	t.Parallel()
	as := oauthtest.New(t)
	model := newFake(t)
	c := newCLI(t).openai(model, "sk-test")
	login(t, c, as)                         // the operator's: user1
	login(t, c, as, "--principal", "alice") // user2
	login(t, c, as, "--principal", "bob")   // user3
	c.env["AGCORE_SERVE_TOKENS"] = "alice=a-secret,bob=b-secret,carol=c-secret"
	base, cmd, lines := c.startServe(t, "--mcp-url", as.MCPURL)
	for i, who := range []string{"a-secret", "b-secret", "c-secret", "a-secret"} {
		model.add(openaiReply(turn{calls: []call{{fmt.Sprintf("w%d", i), "mcp__http__whoami", `{}`}}}), openaiReply(turn{text: "Noted."}))
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/responses", strings.NewReader(`{"model":"agcore","input":"Who am I?"}`))
		req.Header.Set("Authorization", "Bearer "+who)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", who, resp.StatusCode, body)
		}
	}
	for i, want := range []string{"you are user2", "you are user3", "run `agcore mcp login " + as.MCPURL + " --principal carol`", "you are user2"} {
		if got := model.messages(2*i + 1); !strings.Contains(got, want) {
			t.Errorf("turn %d: the tool result sent to the model does not contain %q:\n%s", i, want, got)
		}
	}
	if log, err := interrupt(t, cmd, lines); err != nil {
		t.Fatalf("exit: %v\n%s", err, log)
	}
}
