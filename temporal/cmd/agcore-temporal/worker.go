package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/otelagent"
	_ "github.com/agcore/agcore/provider/builtin" // every adapter agcore ships registers itself
	"github.com/agcore/agcore/provider/registry"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
	"github.com/agcore/agcore/tool/fstool"

	agtemporal "github.com/agcore/agcore/temporal"
)

func newWorkerCmd() *cobra.Command {
	var (
		c                                    common
		provider, model, baseURL, store      string
		root, tools, testRecord, pauseMarker string
		maxResult                            int
		pause                                time.Duration
		mcpCmds, mcpURLs                     []string
	)
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run a Temporal worker that runs agcore turns",
		Long: `worker polls the task queue and runs the turns submitted to it: each model call,
tool call and session append is a Temporal activity. The adapter is built here
from --provider and --model (the key from the provider's variable, e.g.
OPENAI_API_KEY, as the agcore command reads it); the tools are the built-in
file tools confined to --root and the tools of the MCP servers given with
--mcp and --mcp-url (as agcore run's, named mcp__SERVER__TOOL). Run as many
workers as you like, with the same tools: a turn whose worker dies goes on
on another.`,
		Example: `  agcore-temporal worker --provider openai --store sqlite:./agcore.db --redis redis://127.0.0.1:6379/0
  agcore-temporal worker --provider anthropic --root ./project --max-result-bytes -1 --blobs ./blobs
  agcore-temporal worker --provider demo --store memory: --mcp 'npx -y @modelcontextprotocol/server-everything'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var elicitClient clientRef // dialed after the MCP servers start
			ctx := cmd.Context()
			if provider == "" {
				if p, _, ok := registry.Detect(os.Getenv); ok {
					provider = p.Name
				}
			}
			if provider == "" {
				return usageError{errors.New("no provider: give --provider (" + strings.Join(registry.Names(), ", ") + ") or set a key such as OPENAI_API_KEY")}
			}
			// The registry builds the adapter as the agcore command does:
			// the key from the provider's variable, the base URL from
			// --base-url or its variable, the model from --model or the
			// provider's default.
			p, ok := registry.Lookup(provider)
			if !ok {
				return usageError{fmt.Errorf("unknown provider %q (one of %s)", provider, strings.Join(registry.Names(), ", "))}
			}
			name := model
			if name == "" {
				name = p.DefaultModel
			}
			m, err := p.New(registry.Config{Model: name, BaseURL: baseURL})
			if err != nil {
				return usageError{err}
			}
			st, closeStore, err := openStore(ctx, store)
			if err != nil {
				return err
			}
			defer closeStore()
			var ts []tool.Tool
			if tools != "none" {
				var names []string
				if tools != "" {
					names = strings.Split(tools, ",")
				}
				// read_file's cap follows --max-result-bytes, so that a
				// larger (or no) limit reads whole files.
				fo := fstool.Options{MaxReadBytes: maxResult}
				if len(names) == 0 {
					ts, err = fstool.New(root, fo)
				} else {
					ts, err = fstool.ByName(root, names, fo)
				}
				if err != nil {
					return usageError{err}
				}
			}
			var group *mcp.Group
			if len(mcpCmds)+len(mcpURLs) > 0 {
				var err error
				group, err = connectMCP(ctx, mcpCmds, mcpURLs, func(ctx context.Context, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
					return agtemporal.Elicit(ctx, elicitClient.Load(), server, req)
				})
				if err != nil {
					return err
				}
				defer group.Close()
				ts = append(ts, group.Tools()...)
			}
			if testRecord != "" {
				ts = append(ts, recordTool(testRecord))
			}
			opts := agtemporal.Options{Models: map[string]llm.Model{name: m}, DefaultModel: name, Tools: ts, Store: st, MaxResultBytes: maxResult}
			if group != nil {
				// The MCP servers' tools change (tools/list_changed): the
				// worker looks its tools up as they are now, and a turn
				// is offered a tool a server added from its next model
				// call on, as agcore run's turn is.
				opts.ToolsNow, opts.Providers = mcpToolsNow(ts, group)
			}
			// A turn's agent may name another provider or model: the
			// worker makes it with the registry and its own keys (the
			// base URL of --base-url only for its own provider).
			opts.NewModel = func(prov, model string) (llm.Model, error) {
				if prov == "" {
					prov = provider
				}
				p, ok := registry.Lookup(prov)
				if !ok {
					return nil, fmt.Errorf("unknown provider %q (one of %s)", prov, strings.Join(registry.Names(), ", "))
				}
				if model == "" {
					model = p.DefaultModel
				}
				cfg := registry.Config{Model: model}
				if prov == provider {
					cfg.BaseURL = baseURL
				}
				return p.New(cfg)
			}
			rdb, err := c.redis()
			if err != nil {
				return err
			}
			if rdb != nil {
				defer rdb.Close()
				opts.Live = &agtemporal.RedisLive{Client: rdb}
			}
			if pause > 0 {
				opts.AfterPersist = func(ctx context.Context, _, _ string) {
					_ = os.WriteFile(pauseMarker, []byte("persisted\n"), 0o600)
					select {
					case <-ctx.Done():
					case <-time.After(pause):
					}
				}
			}
			cl, err := c.dial(ctx, slog.LevelInfo, "agcore-worker")
			if err != nil {
				return err
			}
			defer cl.Close()
			elicitClient.Store(&cl)
			defer c.tracing.close()
			if c.tracing != nil {
				tel, err := otelagent.New(otelagent.Config{TracerProvider: c.tracing.tp})
				if err != nil {
					return err
				}
				opts.Telemetry = tel
			}
			w := agtemporal.NewWorker(cl, c.queue, opts, worker.Options{})
			if err := w.Start(); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "agcore-temporal: worker on %s, task queue %s, model %s (%s), %d tools\n", c.address, c.queue, name, provider, len(ts))
			<-ctx.Done()
			w.Stop()
			return nil
		},
	}
	c.add(cmd)
	fs := cmd.Flags()
	fs.StringVarP(&provider, "provider", "p", "", "provider: "+strings.Join(registry.Names(), ", ")+" (default: the first whose key is set)")
	fs.StringVarP(&model, "model", "m", "", "model id (default: the provider's)")
	fs.StringVar(&baseURL, "base-url", "", "the provider's base URL (default: its variable, e.g. OPENAI_BASE_URL, or the official one)")
	fs.StringVar(&store, "store", "", "session store: "+strings.Join(session.Syntaxes(), ", ")+" (default $AGCORE_HOME/agcore.db)")
	fs.StringVar(&root, "root", ".", "directory the file tools are confined to")
	fs.StringVar(&tools, "tools", "", "file tools offered, comma-separated (default all: read_file,list_dir,grep,write_file; none: no tools)")
	fs.IntVar(&maxResult, "max-result-bytes", 0, "cut longer tool results, read_file's included (0: 64 KiB; negative: no limit)")
	fs.StringArrayVar(&mcpCmds, "mcp", nil, "an MCP server started over stdio, as a command line; its tools are offered too, as mcp__SERVER__TOOL (repeatable)")
	fs.StringArrayVar(&mcpURLs, "mcp-url", nil, "an MCP server reached over streamable HTTP; its tools are offered as mcp__SERVER__TOOL (repeatable)")
	fs.StringVar(&testRecord, "test-record", "", "tests: add a record tool appending its text to this file")
	fs.DurationVar(&pause, "test-persist-pause", 0, "tests: pause this long after each session append")
	fs.StringVar(&pauseMarker, "test-persist-marker", os.DevNull, "tests: file written when the pause starts")
	for _, h := range []string{"test-record", "test-persist-pause", "test-persist-marker"} {
		_ = fs.MarkHidden(h)
	}
	return cmd
}

// clientRef holds the worker's Temporal client for its MCP servers'
// requests for input (agtemporal.Elicit), which may come before it is
// dialed: then there is none, and the request is declined.
type clientRef struct{ p atomic.Pointer[client.Client] }

func (r *clientRef) Store(c *client.Client) { r.p.Store(c) }

func (r *clientRef) Load() client.Client {
	if c := r.p.Load(); c != nil {
		return *c
	}
	return nil
}

// mcpStartTimeout bounds the start of the MCP servers, as agcore's.
const mcpStartTimeout = 2 * time.Minute

// connectMCP starts and connects the MCP servers of --mcp (command lines,
// run in the working directory) and --mcp-url, as agcore run does.
func connectMCP(ctx context.Context, cmds, urls []string, elicit mcp.Elicitor) (*mcp.Group, error) {
	var servers []mcp.Server
	for _, line := range cmds {
		s, err := mcp.ParseCommand(line)
		if err != nil {
			return nil, usageError{fmt.Errorf("--mcp %q: %v", line, err)}
		}
		s.Elicit = elicit
		servers = append(servers, s)
	}
	for _, u := range urls {
		servers = append(servers, mcp.Server{URL: u, Elicit: elicit})
	}
	cctx, cancel := context.WithTimeout(ctx, mcpStartTimeout)
	defer cancel()
	g, err := mcp.ConnectAll(cctx, servers)
	if err != nil {
		return nil, fmt.Errorf("MCP: %w", err)
	}
	return g, nil
}

type recordIn struct {
	Text string `json:"text" jsonschema:"the text to record"`
}

// recordTool appends each call's text to path: end-to-end tests count
// executions with it.
func recordTool(path string) tool.Tool {
	return tool.MustFunc("record", "Record a line of text.", func(_ context.Context, in recordIn) (string, error) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return "", err
		}
		defer f.Close()
		if _, err := f.WriteString(in.Text + "\n"); err != nil {
			return "", err
		}
		return "recorded " + in.Text, nil
	})
}

// mcpToolsNow returns the worker's tools as they are now (ts with the MCP
// servers' tools as last listed in place of those ts holds), and the
// context provider that offers each durable turn's runs (those with a
// session) the tools the servers added since the worker started, asked
// again before each model call after the first (agent.Injection.ToolsNow):
// a tool a server adds during a turn is offered to its next model call.
// The tools the servers had at the start are the worker's own, offered
// as a turn's agents name them.
func mcpToolsNow(ts []tool.Tool, group *mcp.Group) (func() []tool.Tool, []agent.ContextProvider) {
	listed := map[string]bool{}
	for _, t := range group.Tools() {
		listed[t.Name()] = true
	}
	var own []tool.Tool // the file tools, the test record tool
	for _, t := range ts {
		if !listed[t.Name()] {
			own = append(own, t)
		}
	}
	now := func() []tool.Tool { return append(slices.Clip(own), group.Tools()...) }
	added := func() []tool.Tool {
		var out []tool.Tool
		for _, t := range group.Tools() {
			if !listed[t.Name()] {
				out = append(out, t)
			}
		}
		return out
	}
	return now, []agent.ContextProvider{&mcpAdded{added: added}}
}

// mcpAdded offers each run the tools the MCP servers added since the
// worker started, and again before each model call after the first.
type mcpAdded struct{ added func() []tool.Tool }

func (p *mcpAdded) Name() string { return "mcp-added-tools" }

func (p *mcpAdded) Invoking(context.Context, *agent.Invocation) (agent.Injection, error) {
	return agent.Injection{Tools: p.added(), ToolsNow: p.added}, nil
}

func (p *mcpAdded) Invoked(context.Context, *agent.Invocation, *agent.Outcome) error { return nil }
