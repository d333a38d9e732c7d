package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/cmd/agcore/internal/config"
)

func (a *app) newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config [flags]",
		Short: "Print the effective configuration (secrets masked)",
		Long: `Config prints the settings run and chat would use, each with where it came
from: a flag, an environment variable, the config file, or the default.
Precedence is flag > environment > config file > default. API keys are read
from the environment only and shown only as set or not set.

The config file is $AGCORE_HOME/config.json (AGCORE_HOME defaults to
~/.agcore; --config or AGCORE_CONFIG name another). Every field is optional:

  {
    "provider": "anthropic",
    "providers": {
      "anthropic": {"model": "claude-sonnet-4-6"},
      "gpu": {"type": "vllm", "base_url": "http://gpu:8000/v1",
              "model": "qwen3", "api_key_env": "GPU_KEY", "context_window": 32768}
    },
    "tools": ["read_file", "list_dir", "grep"],
    "mcp": [{"command": "npx -y @modelcontextprotocol/server-everything"},
            {"name": "docs", "url": "http://localhost:3001/mcp", "approval": true}],
    "store": "file:/home/me/agcore-sessions",
    "root": "/home/me/src",
    "system": "You are terse.",
    "max_steps": 30, "context_window": 32768, "compact": "auto",
    "retries": 3, "log": "/tmp/agcore.log", "hide_thinking": false,
    "timeout": "10m", "idle_timeout": "2m", "raw": false,
    "aliases": {"fast": "gpt-4.1-nano"}
  }

A provider's "type" is its kind, one of
` + config.KindNames() + `;
without one the name is the kind. "aliases" add short model names for -m to
the built-in ones. "api_key_env" names the variable its key is read from; a
key itself in the file is refused. --mcp and --mcp-url replace the file's
"mcp" list.`,
		Example: `  agcore config
  agcore config --provider deepseek
  agcore config --json | jq -r .provider`,
		Args: cobra.NoArgs,
		RunE: a.showConfig,
	}
	fs := cmd.Flags()
	addProviderFlags(fs)
	addStoreFlags(fs)
	addAgentFlags(fs)
	fs.String("log", "", "the log file [$AGCORE_LOG]")
	fs.Bool("raw", false, "no Markdown rendering [$AGCORE_RAW]")
	fs.Bool("json", false, "print the configuration as one JSON object")
	return cmd
}

func (a *app) showConfig(cmd *cobra.Command, _ []string) error {
	s, err := a.settings(cmd)
	var se *config.SetupError
	if err != nil && !errors.As(err, &se) {
		return err
	}
	entries := s.Entries()
	if s.JSON {
		out := s.JSONObject()
		if se != nil {
			out["problem"] = se.Reason
		}
		return writeJSON(a.env.Stdout, out)
	}
	if err := config.Print(a.env.Stdout, entries); err != nil {
		return err
	}
	if se != nil {
		fmt.Fprintf(a.env.Stdout, "\nproblem: %s\n", se.Reason)
	}
	return nil
}
