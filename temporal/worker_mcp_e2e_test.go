package agtemporal_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type noteIn struct {
	Topic string `json:"topic" jsonschema:"what the note is about"`
}

// TestE2EWorkerTakesMCPTools: `agcore worker --mcp-url URL` offers the
// MCP server's tools, named as agcore run names them, and runs their
// calls in the turn.
func TestE2EWorkerTakesMCPTools(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "notes", Version: "v1"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "get_note", Description: "Returns the note on a topic"}, func(_ context.Context, _ *sdk.CallToolRequest, in noteIn) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "note on " + in.Topic + ": buy milk"}}}, nil, nil
	})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(mcpSrv.Close)
	const name = "mcp__http__get_note" // a server at an IP address is named "http" (package mcp)
	w, _ := newWorld(t,
		sseReply("", fakeCall{"n1", name, `{"topic":"shopping"}`}),
		sseReply("You need milk."))
	worker := agcoreWorker(t, w, "--tools", "none", "--mcp-url", mcpSrv.URL)
	run := startAgcore(t, "run", "--temporal", w.addr, "--session", uniqueSession("mcp"), "what do I need?")
	if code := run.wait(t, "agcore run --temporal"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, run.out, run.errw)
	}
	w.fake.mu.Lock()
	first, second := w.fake.bodies[0], w.fake.bodies[1]
	w.fake.mu.Unlock()
	if !strings.Contains(first, `"name":"`+name+`"`) {
		t.Fatalf("the worker did not offer %s: %s", name, first)
	}
	if !strings.Contains(second, "note on shopping: buy milk") {
		t.Fatalf("the MCP tool's result did not reach the model: %s", second)
	}
	if !strings.Contains(run.out.String(), "You need milk.") {
		t.Fatalf("stdout %q", run.out)
	}
	worker.stop(t, syscall.SIGTERM) // its MCP sessions end with it
}

// TestE2EMCPElicitationIsAPendingDecision: an MCP server's request for
// input during a durable turn's tool call is a pending decision of the
// turn, as a call needing approval is: `agcore run --temporal` prints the
// approve command, which runs as printed; approving accepts with the
// form's defaults, and the turn goes on.
func TestE2EMCPElicitationIsAPendingDecision(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "v1"}, nil)
	server.AddTool(&sdk.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your city?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","default":"Oslo"}},"required":["city"]}`)})
		if err != nil {
			return nil, err
		}
		city, _ := res.Content["city"].(string)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "action " + res.Action + " " + city}}}, nil
	})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(mcpSrv.Close)
	w, _ := newWorld(t,
		sseReply("", fakeCall{"a1", "mcp__http__ask", `{}`}),
		sseReply("Noted."))
	worker := agcoreWorker(t, w, "--tools", "none", "--mcp-url", mcpSrv.URL)
	run := startAgcore(t, "run", "--temporal", w.addr, "--session", uniqueSession("elicit"), "ask me")
	line := regexp.MustCompile(`mcp_elicitation (.*) waits for approval: (.*) \(or --deny\)`)
	var m []string
	for deadline := time.Now().Add(time.Minute); m == nil; time.Sleep(100 * time.Millisecond) {
		if m = line.FindStringSubmatch(run.errw.String()); m != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending elicitation was announced\nstderr:\n%s", run.errw)
		}
	}
	if !strings.Contains(m[1], `"message":"Your city?"`) || !strings.Contains(m[1], `"server":"http"`) {
		t.Errorf("announced %q", m[1])
	}
	sh := exec.Command("sh", "-c", m[2])
	sh.Env = agcoreEnv(t)
	if out, err := sh.CombinedOutput(); err != nil || !strings.Contains(string(out), "approved elicitation-") {
		t.Fatalf("%s: %v\n%s", m[2], err, out)
	}
	if code := run.wait(t, "agcore run --temporal"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, run.out, run.errw)
	}
	w.fake.mu.Lock()
	second := w.fake.bodies[1]
	w.fake.mu.Unlock()
	if !strings.Contains(second, "action accept Oslo") {
		t.Fatalf("the tool result sent to the model: %s", second)
	}
	worker.stop(t, syscall.SIGTERM)
}

// TestE2EMCPElicitationFormAnsweredWithContent: a durable turn's MCP
// server asks for a required field without a default; `agcore approve`
// without --content is refused in one line naming the field (the request
// still waits), and with --content the server gets the answer.
func TestE2EMCPElicitationFormAnsweredWithContent(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "asker", Version: "v1"}, nil)
	server.AddTool(&sdk.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"]}`)})
		if err != nil {
			return nil, err
		}
		name, _ := res.Content["name"].(string)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "action " + res.Action + " " + name}}}, nil
	})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(mcpSrv.Close)
	w, _ := newWorld(t,
		sseReply("", fakeCall{"a1", "mcp__http__ask", `{}`}),
		sseReply("Hello Ada."))
	worker := agcoreWorker(t, w, "--tools", "none", "--mcp-url", mcpSrv.URL)
	run := startAgcore(t, "run", "--temporal", w.addr, "--session", uniqueSession("form"), "greet me")
	line := regexp.MustCompile(`mcp_elicitation (.*) waits for approval: (.*) (elicitation-\S+) \(or --deny\)`)
	var m []string
	for deadline := time.Now().Add(time.Minute); m == nil; time.Sleep(100 * time.Millisecond) {
		if m = line.FindStringSubmatch(run.errw.String()); m != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pending elicitation was announced\nstderr:\n%s", run.errw)
		}
	}
	if !strings.Contains(m[1], `"requested_schema"`) || !strings.Contains(run.errw.String(), "--content '{...}' "+m[3]) {
		t.Errorf("announced %q; stderr:\n%s", m[1], run.errw)
	}
	sh := func(cmdline string) (string, error) {
		c := exec.Command("sh", "-c", cmdline)
		c.Env = agcoreEnv(t)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	out, err := sh(m[2] + " " + m[3])
	if err == nil || !strings.Contains(out, `"name" is required and has no default`) || strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Fatalf("an approval without the required field: %v\n%s", err, out)
	}
	t.Logf("refused: %s", out)
	if out, err := sh(m[2] + ` --content '{"name":"Ada"}' ` + m[3]); err != nil || !strings.Contains(out, "approved "+m[3]) {
		t.Fatalf("approving with --content: %v\n%s", err, out)
	}
	if code := run.wait(t, "agcore run --temporal"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, run.out, run.errw)
	}
	w.fake.mu.Lock()
	second := w.fake.bodies[1]
	w.fake.mu.Unlock()
	if !strings.Contains(second, "action accept Ada") {
		t.Fatalf("the tool result sent to the model: %s", second)
	}
	worker.stop(t, syscall.SIGTERM)
}

// TestE2EWorkerMCPToolListChangeReachesTheSameTurn: an MCP server adds a
// tool while a call of a durable turn runs (tools/list_changed before the
// call's answer): `agcore worker --mcp-url` offers it to the turn's next
// model call, and runs its call in the same turn, as agcore run does
// in-process.
func TestE2EWorkerMCPToolListChangeReachesTheSameTurn(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "live", Version: "v1"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	server.AddTool(&sdk.Tool{Name: "unlock", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		server.AddTool(&sdk.Tool{Name: "secret", Description: "Tells the secret", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the secret is 42"}}}, nil
		})
		// The SDK sends list_changed after a short delay: answer once it
		// is out, as a server that announces its change before answering.
		time.Sleep(300 * time.Millisecond)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "unlocked"}}}, nil
	})
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(mcpSrv.Close)
	w, _ := newWorld(t,
		sseReply("", fakeCall{"u1", "mcp__http__unlock", `{}`}),
		sseReply("", fakeCall{"s1", "mcp__http__secret", `{}`}),
		sseReply("It is 42."))
	worker := agcoreWorker(t, w, "--tools", "none", "--mcp-url", mcpSrv.URL)
	run := startAgcore(t, "run", "--temporal", w.addr, "--session", uniqueSession("listchange"), "unlock it and tell me the secret")
	if code := run.wait(t, "agcore run --temporal"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, run.out, run.errw)
	}
	w.fake.mu.Lock()
	bodies := append([]string(nil), w.fake.bodies...)
	w.fake.mu.Unlock()
	if len(bodies) != 3 {
		t.Fatalf("%d model calls, want 3", len(bodies))
	}
	if strings.Contains(bodies[0], `"name":"mcp__http__secret"`) {
		t.Errorf("the first model call was offered the tool before it existed: %s", bodies[0])
	}
	if !strings.Contains(bodies[1], `"name":"mcp__http__secret"`) || !strings.Contains(bodies[1], `"name":"mcp__http__unlock"`) {
		t.Errorf("the turn's second model call was not offered the new tool: %s", bodies[1])
	}
	if !strings.Contains(bodies[2], "the secret is 42") {
		t.Errorf("the new tool's result did not reach the model: %s", bodies[2])
	}
	worker.stop(t, syscall.SIGTERM)
}
