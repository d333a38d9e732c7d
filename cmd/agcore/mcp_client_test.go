package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agcore/agcore/internal/testkit/testwait"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// hangingServer is an MCP server over streamable HTTP on 127.0.0.1 with
// three tools: hang (never answers until the test ends), ask (asks the user
// for input through elicitation/create and says what came back) and echo.
// Requests without the Authorization header want (when not empty) are
// refused.
func hangingServer(t *testing.T, want string) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "v1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&sdk.Tool{Name: "hang", InputSchema: obj}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		select {
		case <-ctx.Done():
		case <-release:
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "too late"}}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		if err != nil {
			return nil, err
		}
		name, _ := res.Content["name"].(string)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "action " + res.Action + " " + name}}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: obj}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo " + string(req.Params.Arguments)}}}, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if want != "" && r.Header.Get("Authorization") != want {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		close(release)
		ts.Close()
	})
	return ts
}

// A server that stops answering is cut after its configured timeout: the
// turn goes on with the call answered as an error, and one line names the
// server (an mcp event in --json).
func TestMCPSilentServerIsCutAndTheTurnGoesOn(t *testing.T) {
	t.Parallel()
	ts := hangingServer(t, "")
	srv := newFake(t,
		openaiReply(turn{calls: []call{{"h1", "mcp__slow__hang", `{}`}}}),
		openaiReply(turn{text: "The server did not answer."}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	writeFiles(t, c.home, map[string]string{"config.json": `{"mcp": [{"name": "slow", "url": "` + ts.URL + `", "timeout": "300ms"}]}`})
	r := c.ok("run", "--json", "Call the slow tool")
	evs := events(t, r.stdout)
	res := ofType(evs, "tool_result")
	if len(res) != 1 || res[0]["is_error"] != true || !strings.Contains(res[0]["output"].(string), `MCP server "slow" did not answer tools/call "hang" within 300ms`) {
		t.Errorf("tool results = %v", res)
	}
	var silent []event
	for _, e := range ofType(evs, "mcp") {
		if e["kind"] == "silent" && e["server"] == "slow" {
			silent = append(silent, e)
		}
	}
	if len(silent) != 1 {
		t.Errorf("mcp events = %v, want one silent naming the server", ofType(evs, "mcp"))
	}
	if d := last(t, evs); d.typ() != "done" || d["text"] != "The server did not answer." {
		t.Errorf("the turn did not go on: %v", d)
	}

	// At a terminal-less stderr, the line is there for people too.
	srv.add(openaiReply(turn{calls: []call{{"h2", "mcp__slow__hang", `{}`}}}), openaiReply(turn{text: "again"}))
	r = c.ok("run", "Call it again")
	if n := strings.Count(r.stderr, `MCP server "slow" did not answer`); n < 1 {
		t.Errorf("stderr does not name the silent server:\n%s", r.stderr)
	}
}

// A server's request for input with nobody to answer (run without a
// terminal) is declined cleanly: the call returns, and a line says so.
func TestMCPElicitationWithNobodyToAnswerIsDeclined(t *testing.T) {
	t.Parallel()
	ts := hangingServer(t, "")
	srv := newFake(t,
		openaiReply(turn{calls: []call{{"a1", "mcp__http__ask", `{}`}}}),
		openaiReply(turn{text: "declined"}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	r := c.ok("run", "--json", "--mcp-url", ts.URL, "Ask me")
	evs := events(t, r.stdout)
	res := ofType(evs, "tool_result")
	if len(res) != 1 || res[0]["is_error"] != false || res[0]["output"] != "action decline " {
		t.Errorf("tool results = %v", res)
	}
	found := false
	for _, e := range ofType(evs, "mcp") {
		found = found || e["kind"] == "elicitation" && strings.Contains(e["message"].(string), "Your name?")
	}
	if !found {
		t.Errorf("no elicitation event: %v", ofType(evs, "mcp"))
	}
}

// Static headers from the config file, ${VAR} from the environment, reach
// the server; `agcore config` names the header and never shows its value.
func TestMCPHeadersFromTheConfigFile(t *testing.T) {
	t.Parallel()
	const token = "ghp_s3cretTokenValue123"
	ts := hangingServer(t, "Bearer "+token)
	srv := newFake(t,
		openaiReply(turn{calls: []call{{"e1", "mcp__gh__echo", `{"x":1}`}}}),
		openaiReply(turn{text: "done"}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	c.env["GH_TOKEN"] = token
	cfg := `{"mcp": [{"name": "gh", "url": "` + ts.URL + `", "headers": {"Authorization": "Bearer ${GH_TOKEN}"}}]}`
	writeFiles(t, c.home, map[string]string{"config.json": cfg})
	r := c.ok("run", "--json", "Echo")
	if res := ofType(events(t, r.stdout), "tool_result"); len(res) != 1 || res[0]["output"] != `echo {"x":1}` {
		t.Errorf("tool results = %v", res)
	}
	for _, args := range [][]string{{"config"}, {"config", "--json"}} {
		out := c.ok(args...)
		if strings.Contains(out.stdout+out.stderr, token) || !strings.Contains(out.stdout, "Authorization") {
			t.Errorf("agcore %v shows the token or hides the header's name:\n%s", args, out.stdout)
		}
	}

	// A variable that is not set is named, before anything is sent.
	delete(c.env, "GH_TOKEN")
	r = c.run("", "run", "Echo")
	if r.code == 0 || !strings.Contains(r.stderr, "GH_TOKEN") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 2 {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(c.home, "config.json")); err != nil || string(b) != cfg {
		t.Errorf("the config file changed: %s, %v", b, err)
	}
}

// A server that adds a tool (tools/list_changed) mid-session: the next run
// of the same process offers it to the model (agcore serve, two turns).
func TestMCPToolListChangeReachesTheNextRun(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "live", Version: "v1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&sdk.Tool{Name: "unlock", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		srv.AddTool(&sdk.Tool{Name: "secret", Description: "Tells the secret", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "42"}}}, nil
		})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "unlocked"}}}, nil
	})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var lists atomic.Int64 // the client's tools/list requests
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			if strings.Contains(string(b), `"tools/list"`) {
				lists.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	model := newFake(t,
		openaiReply(turn{calls: []call{{"u1", "mcp__http__unlock", `{}`}}}),
		openaiReply(turn{text: "Unlocked."}),
		openaiReply(turn{text: "I see a new tool."}),
	)
	c := newCLI(t).openai(model, "sk-test")
	base, cmd, lines := c.startServe(t, "--mcp-url", ts.URL)
	for i, prompt := range []string{"Unlock it", "What now?"} {
		if i == 1 {
			// The list change reaches agcore as a notification, and it
			// lists the tools again: wait for that before the next turn.
			testwait.For(t, "agcore to list the tools again", func() bool { return lists.Load() >= 2 })
		}
		resp, err := http.Post(base+"/v1/responses", "application/json", strings.NewReader(`{"model":"agcore","input":"`+prompt+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	offered := func(i int) []string {
		var names []string
		tools, _ := model.got()[i].body["tools"].([]any)
		for _, tl := range tools {
			names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
		}
		return names
	}
	if got := offered(0); slices.Contains(got, "mcp__http__secret") {
		t.Errorf("the first run was offered the tool before it existed: %v", got)
	}
	if got := offered(2); !slices.Contains(got, "mcp__http__secret") || !slices.Contains(got, "mcp__http__unlock") {
		t.Errorf("the next run's tools = %v, want the new mcp__http__secret among them", got)
	}
	if log, err := interrupt(t, cmd, lines); err != nil {
		t.Fatalf("exit: %v\n%s", err, log)
	}
}

// A server that adds a tool while a call of a turn runs (tools/list_changed
// before the call's answer): the turn's next model call is offered it, and
// can call it in the same turn (agcore run, one turn).
func TestMCPToolListChangeReachesTheSameTurn(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "live", Version: "v1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&sdk.Tool{Name: "unlock", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		srv.AddTool(&sdk.Tool{Name: "secret", Description: "Tells the secret", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "42"}}}, nil
		})
		// The SDK sends list_changed after a short delay: answer once it
		// is out, as a server that announces its change before answering.
		time.Sleep(300 * time.Millisecond)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "unlocked"}}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	model := newFake(t,
		openaiReply(turn{calls: []call{{"u1", "mcp__http__unlock", `{}`}}}),
		openaiReply(turn{calls: []call{{"s1", "mcp__http__secret", `{}`}}}),
		openaiReply(turn{text: "The secret is 42."}),
	)
	c := newCLI(t).openai(model, "sk-test")
	r := c.ok("run", "--json", "--tools", "", "--mcp-url", ts.URL, "Unlock it and tell me the secret")
	offered := func(i int) []string {
		var names []string
		tools, _ := model.got()[i].body["tools"].([]any)
		for _, tl := range tools {
			names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
		}
		return names
	}
	if got := offered(0); slices.Contains(got, "mcp__http__secret") {
		t.Errorf("the first model call was offered the tool before it existed: %v", got)
	}
	if got := offered(1); !slices.Contains(got, "mcp__http__secret") || !slices.Contains(got, "mcp__http__unlock") {
		t.Errorf("the turn's second model call was offered %v, want the new mcp__http__secret among them", got)
	}
	res := ofType(events(t, r.stdout), "tool_result")
	if len(res) != 2 || res[1]["output"] != "42" {
		t.Errorf("tool results = %v, want the new tool's 42 second", res)
	}
}

// Under agcore serve, an MCP server's request for input during a turn's
// tool call is a pending decision of the turn, as a call needing approval
// is: GET /v1/approvals lists it (tool mcp_elicitation), POST decides it;
// approving accepts with the form's defaults, denying declines.
func TestMCPElicitationIsAPendingDecisionInServe(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your city?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","default":"Oslo"}},"required":["city"]}`)})
		if err != nil {
			return nil, err
		}
		city, _ := res.Content["city"].(string)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "action " + res.Action + " " + city}}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	model := newFake(t,
		openaiReply(turn{calls: []call{{"a1", "mcp__http__ask", `{}`}}}),
		openaiReply(turn{text: "Noted."}),
		openaiReply(turn{calls: []call{{"a2", "mcp__http__ask", `{}`}}}),
		openaiReply(turn{text: "Fine."}),
	)
	c := newCLI(t).openai(model, "sk-test")
	base, cmd, lines := c.startServe(t, "--tools", "", "--mcp-url", ts.URL)
	do := func(method, url string, body any) map[string]any {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, url, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return nil
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	for i, tc := range []struct {
		approve bool
		want    string
	}{{true, "action accept Oslo"}, {false, "action decline "}} {
		done := make(chan map[string]any, 1)
		go func() { done <- do("POST", base+"/v1/responses", map[string]any{"model": "agcore", "input": "Ask me"}) }()
		var pending []any
		for deadline := time.Now().Add(30 * time.Second); len(pending) == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the elicitation never showed among the pending decisions")
			}
			pending, _ = do("GET", base+"/v1/approvals", nil)["data"].([]any)
		}
		p := pending[0].(map[string]any)
		if p["tool"] != "mcp_elicitation" || !strings.Contains(p["arguments"].(string), `"message":"Your city?"`) || !strings.Contains(p["arguments"].(string), `"server":"http"`) {
			t.Errorf("pending decision %v", p)
		}
		if out := do("POST", base+"/v1/approvals/"+p["id"].(string), map[string]any{"approved": tc.approve}); out["approved"] != tc.approve {
			t.Fatalf("deciding: %v", out)
		}
		select {
		case resp := <-done:
			if resp["status"] != "completed" {
				t.Errorf("turn %d: %v", i+1, resp)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the turn did not finish after the decision")
		}
		if got := model.messages(2*i + 1); !strings.Contains(got, tc.want) {
			t.Errorf("turn %d: the tool result sent to the model: %s, want %q", i+1, got, tc.want)
		}
	}
	if log, err := interrupt(t, cmd, lines); err != nil {
		t.Fatalf("exit: %v\n%s", err, log)
	}
}

// At a terminal, a server's request for input (elicitation) is asked of
// the user: whether to answer, then each field; the server gets the
// answers and the turn goes on.
func TestMCPElicitationAtTheTerminal(t *testing.T) {
	t.Parallel()
	ts := hangingServer(t, "")
	srv := newFake(t,
		openaiReply(turn{calls: []call{{"a1", "mcp__http__ask", `{}`}}}),
		openaiReply(turn{text: "Thanks."}),
	)
	c := newCLI(t).openai(srv, "sk-test")
	tm := c.startTerminal("chat", "--raw", "--tools", "", "--mcp-url", ts.URL)
	tm.expect("> ")
	tm.send("Ask me\r")
	tm.expect(`MCP server "http" asks: Your name? Answer? [y/N]`)
	tm.send("y\r")
	tm.expect("name: ")
	tm.send("Ada\r")
	tm.expect("Thanks.")
	tm.expect("> ")
	tm.send("\x04")
	if code := tm.wait(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if got := srv.messages(1); !strings.Contains(got, "action accept Ada") {
		t.Errorf("the tool result sent to the model: %s", got)
	}
}

// Under agcore serve, a server's form with a required field that has no
// default is answered through the approvals endpoint: the listing shows
// the requested schema, an approval without the field is a 400 naming it
// (the request still waits), and the content given reaches the server.
func TestMCPElicitationFormAnsweredInServe(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"]}`)})
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("action %s %v", res.Action, res.Content["name"])}}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	model := newFake(t, openaiReply(turn{calls: []call{{"a1", "mcp__http__ask", `{}`}}}), openaiReply(turn{text: "Hello Ada."}))
	c := newCLI(t).openai(model, "sk-test")
	base, cmd, lines := c.startServe(t, "--tools", "", "--mcp-url", ts.URL)
	do := func(method, url, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			return 0, nil
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	done := make(chan map[string]any, 1)
	go func() {
		_, out := do("POST", base+"/v1/responses", `{"model":"agcore","input":"Greet me"}`)
		done <- out
	}()
	var pending []any
	for deadline := time.Now().Add(30 * time.Second); len(pending) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the elicitation never showed among the pending decisions")
		}
		_, out := do("GET", base+"/v1/approvals", "")
		pending, _ = out["data"].([]any)
	}
	p := pending[0].(map[string]any)
	schema, _ := p["schema"].(map[string]any)
	if p["tool"] != "mcp_elicitation" || schema["required"] == nil {
		t.Fatalf("pending decision %v, want the requested schema", p)
	}
	url := base + "/v1/approvals/" + p["id"].(string)
	status, out := do("POST", url, `{"approved":true}`)
	e, _ := out["error"].(map[string]any)
	if msg, _ := e["message"].(string); status != 400 || e["code"] != "invalid_content" || !strings.Contains(msg, `"name" is required and has no default`) {
		t.Fatalf("an approval without the required field: %d %v", status, out)
	}
	if status, out := do("POST", url, `{"approved":true,"content":{"name":"Ada"}}`); status != 200 || out["approved"] != true {
		t.Fatalf("deciding with content: %d %v", status, out)
	}
	select {
	case resp := <-done:
		if resp["status"] != "completed" {
			t.Errorf("turn: %v", resp)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the turn did not finish after the decision")
	}
	if got := model.messages(1); !strings.Contains(got, "action accept Ada") {
		t.Errorf("the tool result sent to the model: %s, want the server to have got the name", got)
	}
	if log, err := interrupt(t, cmd, lines); err != nil {
		t.Fatalf("exit: %v\n%s", err, log)
	}
}
