package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// desktopConfigs returns the MCP client configurations the README's "MCP"
// section shows for agcore mcp serve (Claude Desktop's, VS Code's): its
// JSON blocks that start agcore as a command.
func desktopConfigs(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile("(?s)```json\n(\\{\"(mcpServers|servers)\".*?)\n```").FindAllStringSubmatch(string(b), -1) {
		out[m[2]] = m[1]
	}
	if len(out) != 2 {
		t.Fatalf("the README shows %d desktop client configurations, want Claude Desktop's and VS Code's", len(out))
	}
	return out
}

// agcore mcp serve over stdio, started as Claude Desktop and VS Code start
// it: the agent is a tool that runs a turn, with progress while it runs,
// and calls of one MCP session continue one stored session.
func TestMCPServeOverStdioAsDesktopClientsStartIt(t *testing.T) {
	t.Parallel()
	configs := desktopConfigs(t)
	for _, tt := range []struct{ name, config, key string }{{"Claude Desktop", configs["mcpServers"], "mcpServers"}, {"VS Code", configs["servers"], "servers"}} {
		t.Run(tt.name, func(t *testing.T) {
			var cfg map[string]map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			}
			if err := json.Unmarshal([]byte(tt.config), &cfg); err != nil {
				t.Fatal(err)
			}
			entry := cfg[tt.key]["agcore"]
			if entry.Command != "agcore" {
				t.Fatalf("config: %+v", entry)
			}
			c := newCLI(t)
			c.env["AGCORE_PROVIDER"] = "demo"                     // the desktop's environment names the provider
			cmd := c.command(context.Background(), entry.Args...) // the binary is what "agcore" names on PATH
			var mu sync.Mutex
			var progress []string
			client := sdk.NewClient(&sdk.Implementation{Name: tt.name, Version: "1"}, &sdk.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
					mu.Lock()
					progress = append(progress, req.Params.Message)
					mu.Unlock()
				},
			})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "agcore" {
				t.Fatalf("tools: %+v, %v", tools, err)
			}
			for i := range 2 {
				params := &sdk.CallToolParams{Name: "agcore", Arguments: map[string]any{"prompt": "What is here?"}}
				params.SetProgressToken("turn")
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "scripted demo model") {
					t.Fatalf("call %d: %+v, %v", i, res, err)
				}
			}
			if err := cs.Close(); err != nil {
				t.Logf("close: %v", err)
			}
			mu.Lock()
			got := strings.Join(progress, "|")
			mu.Unlock()
			if !strings.Contains(got, "agcore: calling list_dir") {
				t.Errorf("progress: %q", got)
			}
			list := c.ok("sessions", "list", "--json")
			var out struct {
				Sessions []struct {
					ID    string `json:"id"`
					Turns int    `json:"turns"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal([]byte(list.stdout), &out); err != nil || len(out.Sessions) != 1 || !strings.HasPrefix(out.Sessions[0].ID, "mcp-") || out.Sessions[0].Turns != 2 {
				t.Errorf("sessions: %s (%v); want one mcp-… session of 2 turns", list.stdout, err)
			}
		})
	}
}

// Over streamable HTTP, behind agcore serve's bearer tokens: a wrong token
// is refused, and each principal's calls go to its own sessions.
func TestMCPServeOverHTTPWithPrincipals(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.env["AGCORE_SERVE_TOKENS"] = "alice=a-secret,bob=b-secret"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := c.command(ctx, "mcp", "serve", "--provider", "demo", "--http", "127.0.0.1:0")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if m := regexp.MustCompile(`listening on (http://\S+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
			break
		}
	}
	if url == "" {
		t.Fatal("the server did not say where it listens")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	connect := func(secret string) (*sdk.ClientSession, error) {
		hc := &http.Client{Transport: bearerTransport{secret}}
		return sdk.NewClient(&sdk.Implementation{Name: "t"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	}
	if _, err := connect("wrong"); err == nil {
		t.Error("a wrong token connected")
	}
	for _, secret := range []string{"a-secret", "b-secret"} {
		cs, err := connect(secret)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "agcore", Arguments: map[string]any{"prompt": "Hi"}})
		cs.Close()
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v, %v", secret, res, err)
		}
	}
	list := c.ok("sessions", "list", "--all-owners", "--json")
	for _, owner := range []string{`"owner":"alice"`, `"owner":"bob"`} {
		if strings.Count(list.stdout, owner) != 1 {
			t.Errorf("sessions: %s; want one of %s", list.stdout, owner)
		}
	}
}

type bearerTransport struct{ secret string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.secret)
	return http.DefaultTransport.RoundTrip(r)
}
