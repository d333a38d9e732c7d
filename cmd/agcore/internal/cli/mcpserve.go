package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/serve/mcpserve"
	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/tool/fstool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func (a *app) newMCPServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve agcore's agents to MCP clients (stdio, or streamable HTTP with --http)",
		Long: `mcp serve offers the agent agcore run builds ("agcore") and each agent of the
config file's "agents" section as MCP tools: a tool's input is a prompt, its
result the agent's answer after a turn (its own tools, MCP servers and
handoffs included). Calls of one MCP session continue one conversation, kept
in the store (--store) per principal. While a turn runs, a client that asks
for progress gets a notification for each tool call. A tool call that needs
approval (write_file, an MCP server with "approval") is asked of the
client's user through elicitation; a client that cannot ask is refused, and
--yes approves every call. A client that sets a log level gets the turn's
steps as log messages too.

An agent's "mcp_tool" in the config file offers it with its own input
schema and a prompt template ({{name}}: an argument), with the MCP client's
model as its model ("sampling": true), or with an ask_user tool that asks
the client's user ("ask_user": true). The file's "mcp_serve" section offers
prompt templates (with argument completion) and read-only resources: files
under --root (the same secret rules), inline text, URI templates naming
files; a client subscribed to a file's resource is told when it changes.

--file-tools also offers the built-in file tools (--tools, confined to
--root, with the same secret rules) directly, write_file asking approval the
same way.

By default the server speaks over standard input and output, for a client
that starts it as a command: Claude Desktop's claude_desktop_config.json

  {"mcpServers": {"agcore": {"command": "agcore", "args": ["mcp", "serve"]}}}

or VS Code's .vscode/mcp.json

  {"servers": {"agcore": {"type": "stdio", "command": "agcore", "args": ["mcp", "serve"]}}}

--http ADDR serves streamable HTTP at http://ADDR/mcp instead, behind the
bearer tokens of agcore serve ($AGCORE_SERVE_TOKENS, the config file's
serve.tokens), each naming a principal; without a token it listens on a
loopback address only.

` + providerHelp(),
		Example: `  agcore mcp serve --provider demo < /dev/null
  agcore mcp serve --provider demo --file-tools --tools read_file,list_dir < /dev/null`,
		Args: cobra.NoArgs,
		RunE: a.mcpServe,
	}
	fs := cmd.Flags()
	addProviderFlags(fs)
	addStoreFlags(fs)
	addAgentFlags(fs)
	fs.String("log", "", "append a structured log of model and tool calls (no contents, never keys) to this file [$AGCORE_LOG]")
	addOtelFlag(fs)
	fs.String("http", "", "serve streamable HTTP on this address (host:port) at /mcp instead of stdio")
	fs.Bool("file-tools", false, "offer the built-in file tools (--tools, under --root) directly too")
	return cmd
}

func (a *app) mcpServe(cmd *cobra.Command, _ []string) error {
	ctx := cmd.Context()
	s, err := a.turnSettings(cmd)
	if err != nil {
		return err
	}
	file, _, err := config.LoadFile(s.ConfigFile)
	if err != nil {
		return exit(ExitUsage, "%v", err)
	}
	var approver tool.Approver = mcpserve.Approver{}
	if s.Yes {
		approver = nil // --yes: the command's own approver, which approves every call
	}
	opts, err := a.serveOptions(s)
	if err != nil {
		return err
	}
	opts.approver = approver
	main, err := a.build(ctx, s, opts)
	if err != nil {
		return err
	}
	defer main.Close()
	main.mcpServe = true // the file's agents' mcp_tool settings apply
	named, agents, set, err := a.offeredAgents(ctx, cmd, file.Agents, main, approver, "The general agent agcore run builds")
	defer named.Close()
	if err != nil {
		return err
	}
	sopts := mcpserve.Options{Version: version(), Logger: slog.New(slog.NewTextHandler(a.env.Stderr, nil)), AgentTools: map[string]mcpserve.AgentTool{}}
	for name, ac := range file.Agents {
		if ac.MCPTool != nil {
			sopts.AgentTools[name] = *ac.MCPTool
		}
	}
	if ms := file.MCPServe; ms != nil {
		sopts.Prompts, sopts.Resources, sopts.ResourceTemplates = ms.Prompts, ms.Resources, ms.ResourceTemplates
		fopts := fstool.Options{AllowSecrets: s.AllowSecrets, AllowHint: "--allow-secret", MaxReadBytes: maxResourceBytes}
		sopts.ReadFile = func(name string) ([]byte, error) { return fstool.ReadFile(s.Root, name, fopts) }
	}
	if err := sopts.Check(); err != nil {
		return exit(ExitUsage, "the config file's mcp_serve: %v", err)
	}
	if fileTools, _ := cmd.Flags().GetBool("file-tools"); fileTools {
		tools, err := fstool.ByName(s.Root, s.Tools, fstool.Options{AllowSecrets: s.AllowSecrets, AllowHint: "--allow-secret", MaxReadBytes: s.MaxResultBytes})
		if err != nil {
			return exit(ExitUsage, "--tools/--root: %v", err)
		}
		sopts.Tools = tools
	}

	addr, _ := cmd.Flags().GetString("http")
	if addr == "" {
		// Standard output is the protocol's: nothing else may be written
		// there.
		err := mcpserve.Serve(ctx, &sdk.IOTransport{Reader: nopCloser{a.env.Stdin}, Writer: nopWriteCloser{a.env.Stdout}}, sopts, agents...)
		if err != nil && ctx.Err() == nil {
			return exit(ExitFailed, "mcp serve: %v", err)
		}
		return nil
	}

	sc := config.ServeConfig{}
	if file.Serve != nil {
		sc = *file.Serve
	}
	tokens, err := serveTokens(a.env.Getenv, sc.Tokens)
	if err != nil {
		return exit(ExitUsage, "%v", err)
	}
	l, auth, err := listenGuarded("--http", addr, tokens)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpserve.Handler(mcpserve.NewServer(set, sopts), tokens))
	names := make([]string, len(agents))
	for i, ag := range agents {
		names[i] = ag.Name
	}
	fmt.Fprintf(a.env.Stderr, "agcore mcp serve: listening on http://%s/mcp (%s; agents: %s)\n", l.Addr(), auth, strings.Join(names, ", "))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	closeUnusedOnShutdown(srv)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return exit(ExitFailed, "serving: %v", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}

// maxResourceBytes is the largest file agcore mcp serve sends as a
// resource or a prompt's image.
const maxResourceBytes = 8 << 20

// nopCloser and nopWriteCloser give the command's standard streams to the
// SDK's transport, which closes what it is given; the command's are not
// its to close.
type nopCloser struct{ r io.Reader }

func (n nopCloser) Read(p []byte) (int, error) { return n.r.Read(p) }
func (nopCloser) Close() error                 { return nil }

type nopWriteCloser struct{ w io.Writer }

func (n nopWriteCloser) Write(p []byte) (int, error) { return n.w.Write(p) }
func (nopWriteCloser) Close() error                  { return nil }
