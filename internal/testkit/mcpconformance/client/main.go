// Command client is the conformance driver of agcore's MCP client: the
// MCP conformance suite (@modelcontextprotocol/conformance) runs it as
//
//	client URL
//
// with the scenario in $MCP_CONFORMANCE_SCENARIO and its context (JSON) in
// $MCP_CONFORMANCE_CONTEXT, and checks what it does on the wire. It drives
// the mcp package as agcore does (mcp.Connect, the tools' Invoke) with the
// mcp/oauth package's handler, and adds only what a scenario asks of a
// user: the browser of an OAuth login (it follows the authorization URL
// without a person) and the answers to an elicitation (the schema's
// defaults).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/mcp/oauth"
	"github.com/agcore/agcore/tool"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var cctx map[string]any
	_ = json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &cctx)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var err error
	switch {
	case len(os.Args) == 3 && os.Args[1] == "browse":
		// The browser of agcore mcp login ($BROWSER): open the URL and
		// follow the redirect to agcore's listener.
		err = browse(ctx, os.Args[2])
	case len(os.Args) == 2 && os.Getenv("AGCORE_BIN") != "":
		// The scenario through the built CLI: agcore run --mcp-url with
		// a scripted model (the test's fake OpenAI server), after agcore
		// mcp login for the OAuth scenarios.
		err = runCLI(ctx, scenario, os.Args[1], cctx)
	case len(os.Args) == 2:
		err = run(ctx, scenario, os.Args[1], cctx)
	default:
		fmt.Fprintln(os.Stderr, "usage: client URL (with $MCP_CONFORMANCE_SCENARIO set), or client browse URL")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "scenario %s: %v\n", scenario, err)
		os.Exit(1)
	}
}

// calls is the tool each scenario calls, and its arguments.
var calls = map[string][2]string{
	"tools_call":                          {"add_numbers", `{"a":5,"b":3}`},
	"elicitation-sep1034-client-defaults": {"test_client_elicitation_defaults", `{}`},
	"sse-retry":                           {"test_reconnection", `{}`},
}

func run(ctx context.Context, scenario, serverURL string, cctx map[string]any) error {
	s := mcp.Server{Name: "conformance", URL: serverURL, Timeout: 30 * time.Second, Elicit: acceptDefaults}
	if strings.HasPrefix(scenario, "auth/") {
		h, err := authHandler(scenario, serverURL, cctx)
		if err != nil {
			return err
		}
		s.OAuth = h
	}
	c, err := mcp.Connect(ctx, s)
	if err != nil {
		return err
	}
	defer c.Close()
	name, args := "", ""
	if call, ok := calls[scenario]; ok {
		name, args = call[0], call[1]
	} else if strings.HasPrefix(scenario, "auth/") {
		name, args = "test-tool", `{}`
	}
	if name == "" {
		return nil // initialize: connecting and listing is the scenario
	}
	t := find(c.Tools(), name)
	if t == nil {
		return fmt.Errorf("the server offers no tool %q", name)
	}
	out, err := t.Invoke(ctx, json.RawMessage(args))
	var te *mcp.ToolError
	if err != nil && !errors.As(err, &te) {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s: %s\n", name, out)
	return nil
}

func find(tools []tool.Tool, remote string) tool.Tool {
	for _, t := range tools {
		if strings.HasSuffix(t.Name(), "__"+remote) {
			return t
		}
	}
	return nil
}

// acceptDefaults answers an elicitation as a user who accepts every
// default the schema offers.
func acceptDefaults(_ context.Context, _ string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	content := map[string]any{}
	b, _ := json.Marshal(req.RequestedSchema)
	var schema struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(b, &schema)
	for name, p := range schema.Properties {
		if p.Default != nil {
			content[name] = p.Default
		}
	}
	return &sdk.ElicitResult{Action: "accept", Content: content}, nil
}

// redirectURL is where the scenarios' authorization servers send the
// "browser" back; nothing listens there: the driver reads the redirect.
const redirectURL = "http://localhost:3000/callback"

func authHandler(scenario, serverURL string, cctx map[string]any) (*oauth.Handler, error) {
	id, _ := cctx["client_id"].(string)
	secret, _ := cctx["client_secret"].(string)
	cfg := oauth.Config{
		Server:            serverURL,
		RedirectURL:       redirectURL,
		Login:             followAuthorization,
		ClientMetadataURL: "https://conformance-test.local/client-metadata.json",
		ClientID:          id,
		ClientSecret:      secret,
	}
	if strings.HasPrefix(scenario, "auth/client-credentials") {
		cfg.ClientCredentials = true
		cfg.Login, cfg.ClientMetadataURL = nil, ""
		if key, ok := cctx["private_key_pem"].(string); ok {
			cfg.ClientKeyPEM = []byte(key)
			cfg.SigningAlgorithm, _ = cctx["signing_algorithm"].(string)
		}
	}
	return oauth.NewHandler(cfg)
}

// followAuthorization is the user's browser: it opens the authorization
// URL and reads the code from the redirect, without following it.
func followAuthorization(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" {
		return nil, fmt.Errorf("the authorization endpoint answered %s without a redirect", resp.Status)
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// browse opens url as a browser would, following redirects (to agcore's
// local listener).
func browse(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// runCLI plays the scenario with the agcore binary named by $AGCORE_BIN:
// agcore mcp login first for an OAuth scenario (this program as its
// browser), or a config file naming the client for client credentials;
// then agcore run --mcp-url URL, whose model ($OPENAI_BASE_URL, the test's
// fake) calls the scenario's tool.
func runCLI(ctx context.Context, scenario, serverURL string, cctx map[string]any) error {
	bin := os.Getenv("AGCORE_BIN")
	home, err := os.MkdirTemp("", "agcore-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "AGCORE_HOME="+home, "BROWSER="+self+" browse")
	agcore := func(args ...string) error {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env, cmd.Stdout, cmd.Stderr = env, os.Stderr, os.Stderr
		return cmd.Run()
	}
	args := []string{"run", "--provider", "openai", "--model", "gpt-4o-mini", "--tools", "", "--mcp-url", serverURL, "Use the server's tool."}
	switch {
	case strings.HasPrefix(scenario, "auth/client-credentials"):
		id, _ := cctx["client_id"].(string)
		secret, _ := cctx["client_secret"].(string)
		cfg := fmt.Sprintf(`{"mcp": [{"url": %q, "oauth": {"grant": "client_credentials", "client_id": %q, "client_secret_env": "CONFORMANCE_SECRET"}}]}`, serverURL, id)
		if key, ok := cctx["private_key_pem"].(string); ok {
			keyFile := filepath.Join(home, "client-key.pem")
			if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
				return err
			}
			cfg = fmt.Sprintf(`{"mcp": [{"url": %q, "oauth": {"grant": "client_credentials", "client_id": %q, "client_key_file": %q}}]}`, serverURL, id, keyFile)
		}
		if err := os.WriteFile(filepath.Join(home, "config.json"), []byte(cfg), 0o600); err != nil {
			return err
		}
		env = append(env, "CONFORMANCE_SECRET="+secret)
		args = []string{"run", "--provider", "openai", "--model", "gpt-4o-mini", "--tools", "", "Use the server's tool."}
	case strings.HasPrefix(scenario, "auth/"):
		login := []string{"mcp", "login", serverURL, "--client-metadata-url", "https://conformance-test.local/client-metadata.json"}
		if id, ok := cctx["client_id"].(string); ok {
			login = append(login, "--client-id", id)
			if secret, ok := cctx["client_secret"].(string); ok {
				env = append(env, "CONFORMANCE_SECRET="+secret)
				login = append(login, "--client-secret-env", "CONFORMANCE_SECRET")
			}
		}
		if err := agcore(login...); err != nil {
			return fmt.Errorf("agcore mcp login: %w", err)
		}
	}
	return agcore(args...)
}
