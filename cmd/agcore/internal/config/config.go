// Package config resolves the agcore command's settings from its flags, the
// environment and an optional JSON file in $AGCORE_HOME, in that order of
// precedence, and remembers where each value came from so that
// `agcore config` can show it. API keys are read from the environment only
// and are never part of what is shown, logged or stored.
package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/serve/mcpserve"
	"github.com/agcore/agcore/session/sqlite"
)

// FileName is the config file's name inside $AGCORE_HOME.
const FileName = "config.json"

// Defaults of the settings no source gives.
const (
	DefaultTools    = "read_file,list_dir,grep"
	DefaultMaxSteps = 20
	DefaultCompact  = "auto"
	DefaultRetries  = 3
	// DefaultTimeout bounds one whole turn, the tool loop included: long
	// enough for a long agentic turn, short enough that a person is not
	// left waiting for ever.
	DefaultTimeout = 10 * time.Minute
	// DefaultIdleTimeout is how long a model call may go without sending
	// anything, counted across its retries, before the server is reported
	// as not responding. A local model loading from disk or reading a long
	// prompt can be silent for a minute.
	DefaultIdleTimeout = 2 * time.Minute
)

// CompactModes are the values --compact accepts.
var CompactModes = []string{"auto", "summarize", "off"}

// File is the config file's format. Every field is optional.
//
//	{
//	  "provider": "anthropic",
//	  "providers": {
//	    "anthropic": {"model": "claude-sonnet-4-6"},
//	    "gpu": {"type": "vllm", "base_url": "http://gpu:8000/v1", "model": "qwen3", "api_key_env": "GPU_KEY"}
//	  },
//	  "tools": ["read_file", "list_dir", "grep"],
//	  "mcp": [{"command": "npx -y @modelcontextprotocol/server-everything"}, {"url": "http://localhost:3001/mcp", "approval": true}],
//	  "store": "file:/home/me/agcore-sessions",
//	  "system": "You are terse.",
//	  "max_steps": 30, "context_window": 32768, "compact": "auto", "retries": 3, "log": "/tmp/agcore.log"
//	}
//
// Keys are never read from the file: "api_key_env" names the environment
// variable that holds one.
type File struct {
	Provider  string                    `json:"provider,omitempty"`
	Providers map[string]ProviderConfig `json:"providers,omitempty"`
	Tools     *[]string                 `json:"tools,omitempty"`
	MCP       []MCPServer               `json:"mcp,omitempty"`
	Store     string                    `json:"store,omitempty"`
	Root      string                    `json:"root,omitempty"`
	System    string                    `json:"system,omitempty"`
	MaxSteps  int                       `json:"max_steps,omitempty"`
	// MaxTokens caps each model call's output; Temperature is the
	// sampling temperature (unset: the model's default).
	MaxTokens   int      `json:"max_tokens,omitempty"`
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxCost and TokenBudget limit each turn (run): its cost in USD and
	// its input plus output tokens; SessionMaxCost and SessionTokenBudget
	// limit a session, its stored turns included. 0 is no limit.
	MaxCost            float64 `json:"max_cost,omitempty"`
	TokenBudget        int     `json:"token_budget,omitempty"`
	SessionMaxCost     float64 `json:"session_max_cost,omitempty"`
	SessionTokenBudget int     `json:"session_token_budget,omitempty"`
	ContextWindow      int     `json:"context_window,omitempty"`
	Compact            string  `json:"compact,omitempty"`
	Retries            *int    `json:"retries,omitempty"`
	Log                string  `json:"log,omitempty"`
	HideThinking       bool    `json:"hide_thinking,omitempty"`
	// Timeout and IdleTimeout are durations ("10m", "90s").
	Timeout     string `json:"timeout,omitempty"`
	IdleTimeout string `json:"idle_timeout,omitempty"`
	// Raw turns Markdown rendering off.
	Raw bool `json:"raw,omitempty"`
	// Aliases are the user's own short names for models, added to (and
	// replacing) the built-in ones: {"fast": "gpt-4.1-nano"}.
	Aliases map[string]string `json:"aliases,omitempty"`
	// Agents are the named agents agcore serve offers besides the default
	// one, each the default agent with these settings replaced.
	Agents map[string]AgentConfig `json:"agents,omitempty"`
	// Serve configures agcore serve.
	Serve *ServeConfig `json:"serve,omitempty"`
	// MCPServe is what agcore mcp serve offers besides the agents: prompt
	// templates and read-only resources.
	MCPServe *MCPServeConfig `json:"mcp_serve,omitempty"`
	// AllowSecrets are the secret patterns the file tools may use after
	// all (--allow-secret): [".env*"], ["config/dev.pem"].
	AllowSecrets []string `json:"allow_secrets,omitempty"`
}

// AgentConfig is one named agent of agcore serve: the settings in which it
// differs from the default agent. A provider given without a model gets
// the provider's own model, not the default agent's.
type AgentConfig struct {
	Description string    `json:"description,omitempty"`
	Provider    string    `json:"provider,omitempty"`
	Model       string    `json:"model,omitempty"`
	BaseURL     string    `json:"base_url,omitempty"`
	System      string    `json:"system,omitempty"`
	Tools       *[]string `json:"tools,omitempty"`
	MaxSteps    int       `json:"max_steps,omitempty"`
	// Handoffs name the agents of the file (or "agcore", the default
	// agent) this agent may hand a turn over to: each is offered to its
	// model as a transfer_to_NAME tool.
	Handoffs []string `json:"handoffs,omitempty"`
	// Guardrails check each turn's input or final answer with a regular
	// expression: a match trips the wire and the turn stores nothing
	// (agent.GuardrailSpec: name, stage "input" or "output", pattern,
	// reason). They hold in-process and in durable runs alike.
	Guardrails []agent.GuardrailSpec `json:"guardrails,omitempty"`
	// MCPTool says how agcore mcp serve offers the agent as a tool when
	// not as one taking a prompt: its input schema and the prompt made
	// from the arguments, a model that is the MCP client's (sampling),
	// the ask_user tool (elicitation). Other commands ignore it.
	MCPTool *mcpserve.AgentTool `json:"mcp_tool,omitempty"`
}

// MCPServeConfig is the config file's "mcp_serve": the prompts and
// resources agcore mcp serve offers. Files are read under --root with the
// file tools' secret rules.
type MCPServeConfig struct {
	Prompts           []mcpserve.Prompt           `json:"prompts,omitempty"`
	Resources         []mcpserve.Resource         `json:"resources,omitempty"`
	ResourceTemplates []mcpserve.ResourceTemplate `json:"resource_templates,omitempty"`
}

// CheckHandoffs reports a handoff of agents that names no agent of the
// file (nor main, the default agent's name), or the agent itself.
func CheckHandoffs(agents map[string]AgentConfig, main string) error {
	for _, name := range slices.Sorted(maps.Keys(agents)) {
		for _, h := range agents[name].Handoffs {
			_, ok := agents[h]
			switch {
			case h == name:
				return fmt.Errorf("agent %q of the config file hands off to itself", name)
			case !ok && h != main:
				return fmt.Errorf("agent %q of the config file hands off to %q, which is not an agent of the file", name, h)
			}
		}
	}
	return nil
}

// ServeConfig configures agcore serve. Tokens are secrets: they are never
// shown by agcore config; $AGCORE_SERVE_TOKENS replaces them.
type ServeConfig struct {
	Addr           string            `json:"addr,omitempty"`
	Tokens         map[string]string `json:"tokens,omitempty"`
	AllowedOrigins []string          `json:"allowed_origins,omitempty"`
	// Quota limits what each principal (each bearer token's name) spends,
	// kept in the session store's records so that it holds across
	// replicas and restarts.
	Quota *QuotaConfig `json:"quota,omitempty"`
}

// QuotaConfig is agcore serve's per-principal quota: tokens (input plus
// output) and cost in USD, per UTC day and in total. 0 is no limit.
type QuotaConfig struct {
	TokensPerDay  int     `json:"tokens_per_day,omitempty"`
	Tokens        int     `json:"tokens,omitempty"`
	CostPerDayUSD float64 `json:"cost_per_day_usd,omitempty"`
	CostUSD       float64 `json:"cost_usd,omitempty"`
}

// ProviderConfig configures one named provider of the config file.
type ProviderConfig struct {
	// Type is the provider kind, a name of the provider registry (openai,
	// anthropic, deepseek, ollama, vllm, compatible, ...); empty means the
	// provider's name is its kind.
	Type    string `json:"type,omitempty"`
	Model   string `json:"model,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable holding the key, instead of
	// the kind's usual one.
	APIKeyEnv     string `json:"api_key_env,omitempty"`
	ContextWindow int    `json:"context_window,omitempty"`
}

// MCPServer is one MCP server: a command line started over stdio, or a
// streamable HTTP URL.
type MCPServer struct {
	Name     string `json:"name,omitempty"`
	Command  string `json:"command,omitempty"`
	URL      string `json:"url,omitempty"`
	Approval bool   `json:"approval,omitempty"` // every call of its tools needs approval
	// Timeout is how long a request to the server may go unanswered
	// ("30s", "5m"); empty means the mcp package's default (2m).
	Timeout string `json:"timeout,omitempty"`
	// Headers are sent with every request to a URL server; ${VAR} in a
	// value is the environment variable VAR (see ExpandHeaders). Their
	// values are never shown.
	Headers map[string]string `json:"headers,omitempty"`
	// OAuth says how agcore identifies itself to the server's
	// authorization server; without it a login registers a client
	// dynamically (or the server's client ID metadata document URL is
	// used when given).
	OAuth *MCPOAuth `json:"oauth,omitempty"`
}

// MCPOAuth is an MCP server entry's OAuth client: a pre-registered client
// (its secret read from the environment, never from the file), a client ID
// metadata document, and the grant: "authorization_code" (a login with
// `agcore mcp login`, the default) or "client_credentials" (unattended:
// worker, serve).
type MCPOAuth struct {
	ClientID        string `json:"client_id,omitempty"`
	ClientSecretEnv string `json:"client_secret_env,omitempty"`
	// ClientKeyFile is a PEM private key (EC P-256 or RSA) the client
	// credentials grant signs its client assertion with instead of sending
	// a secret (private_key_jwt).
	ClientKeyFile     string `json:"client_key_file,omitempty"`
	ClientMetadataURL string `json:"client_metadata_url,omitempty"`
	Grant             string `json:"grant,omitempty"`
}

// TimeoutDuration is Timeout parsed; 0 when empty.
func (m MCPServer) TimeoutDuration() (time.Duration, error) {
	if m.Timeout == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(m.Timeout)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("timeout %q is not a positive duration such as 30s or 5m", m.Timeout)
	}
	return d, nil
}

// ExpandHeaders returns the headers with each ${VAR} replaced by the
// environment variable VAR, looked up with getenv. A variable that is not
// set is an error naming it (a header sent with an empty token would fail
// later, and less clearly).
func (m MCPServer) ExpandHeaders(getenv func(string) (string, bool)) (map[string]string, error) {
	if len(m.Headers) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m.Headers))
	for k, v := range m.Headers {
		var missing []string
		out[k] = headerVar.ReplaceAllStringFunc(v, func(ref string) string {
			name := ref[2 : len(ref)-1]
			val, ok := getenv(name)
			if !ok {
				missing = append(missing, name)
			}
			return val
		})
		if len(missing) > 0 {
			return nil, fmt.Errorf("header %s uses $%s, which is not set", k, missing[0])
		}
	}
	return out, nil
}

var headerVar = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

// Input is what Resolve reads.
type Input struct {
	// Flags holds the flags given on the command line, by name (without
	// dashes), as their text. Only flags the user set belong here.
	Flags map[string]string
	// Lists holds the repeatable flags the user set (mcp, mcp-url).
	Lists map[string][]string
	// Getenv looks up an environment variable.
	Getenv func(string) (string, bool)
	// Cwd is the working directory, the default --root.
	Cwd string
	// UserHome is the user's home directory, for the default AGCORE_HOME.
	UserHome string
}

// Settings are the resolved settings of one command.
type Settings struct {
	Home       string // $AGCORE_HOME
	ConfigFile string // the config file's path
	FileFound  bool   // whether it exists
	// Agent is the config file's agent whose settings replaced the
	// command's (--agent; serve's named agents); "" for the default agent.
	Agent string

	Provider string // the provider's name ("" when none is configured)
	Kind     Kind   // its kind
	Model    string
	BaseURL  string
	KeyEnv   string // the variable the key is read from ("" for none)
	APIKey   string `json:"-"` // secret: never print, log or store it

	Store         string
	Tools         []string
	Root          string
	AllowSecrets  []string // secret patterns the file tools may use after all
	MCP           []MCPServer
	Yes           bool
	MaxSteps      int
	MaxTokens     int      // each model call's output cap; 0: the model's default
	Temperature   *float64 // nil: the model's default
	ContextWindow int
	// MaxCost and TokenBudget limit each turn, SessionMaxCost and
	// SessionTokenBudget each session (0: no limit).
	MaxCost            float64
	TokenBudget        int
	SessionMaxCost     float64
	SessionTokenBudget int
	System             string
	Compact            string
	Retries            int
	Log                string
	JSON               bool
	HideThinking       bool
	Raw                bool          // no Markdown rendering
	Timeout            time.Duration // one whole turn; 0 means none
	IdleTimeout        time.Duration // silence of one model call, across its retries
	Aliases            map[string]string
	// Alias is the alias the model was given as ("" when none).
	Alias string

	// MaxResultBytes cuts longer tool results, read_file's included (0:
	// the tools' defaults, 64 KiB; negative: no limit).
	MaxResultBytes int

	// Sources says where each setting came from: "flag --x", "env X",
	// "file", "default", "detected from X".
	Sources map[string]string

	// Guardrails are the named agent's (its "guardrails" in the file).
	Guardrails []agent.GuardrailSpec
}

// ConfigPath returns the config file's path in home.
func ConfigPath(home string) string { return filepath.Join(home, FileName) }

// Home returns $AGCORE_HOME, defaulting to ~/.agcore.
func Home(getenv func(string) (string, bool), userHome string) string {
	if h, ok := getenv("AGCORE_HOME"); ok && h != "" {
		return h
	}
	return filepath.Join(userHome, ".agcore")
}

// LoadFile reads the config file at path; a missing file is not an error
// (found is false). Unknown fields and an "api_key" field are errors.
func LoadFile(path string) (f File, found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, fmt.Errorf("config file: %w", err)
	}
	if bytes.Contains(data, []byte(`"api_key"`)) {
		return File{}, true, fmt.Errorf("config file %s: keys are not read from the config file; put the key in an environment variable and name it with \"api_key_env\"", path)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return File{}, true, fmt.Errorf("config file %s: %w", path, err)
	}
	return f, true, nil
}

// resolver applies the sources in order of precedence for one setting.
type resolver struct {
	in  Input
	set *Settings
}

// str resolves a string setting: the flag, then each environment variable,
// then the file's value, then def.
func (r *resolver) str(key, flag string, envs []string, file, def string) string {
	if v, ok := r.in.Flags[flag]; ok && flag != "" {
		r.set.Sources[key] = "flag --" + flag
		return v
	}
	for _, e := range envs {
		if v, ok := r.in.Getenv(e); ok && v != "" {
			r.set.Sources[key] = "env " + e
			return v
		}
	}
	if file != "" {
		r.set.Sources[key] = "file"
		return file
	}
	r.set.Sources[key] = "default"
	return def
}

// num resolves a non-negative integer setting.
func (r *resolver) num(key, flag string, envs []string, file, def int) (int, error) {
	fileStr := ""
	if file != 0 {
		fileStr = strconv.Itoa(file)
	}
	s := r.str(key, flag, envs, fileStr, strconv.Itoa(def))
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative integer (from %s)", key, s, r.set.Sources[key])
	}
	return n, nil
}

// Resolve computes the settings: flag > environment > file > default.
// When the named provider cannot be used as configured (no key, no model),
// it returns the settings together with a *SetupError.
func Resolve(in Input) (*Settings, error) {
	if in.Getenv == nil {
		in.Getenv = os.LookupEnv
	}
	s := &Settings{Sources: map[string]string{}}
	s.Home = Home(in.Getenv, in.UserHome)
	s.ConfigFile = ConfigPath(s.Home)
	named := "" // where a file was named explicitly: its absence is a mistake
	if p, ok := in.Getenv("AGCORE_CONFIG"); ok && p != "" {
		s.ConfigFile, named = p, "AGCORE_CONFIG"
	}
	if p, ok := in.Flags["config"]; ok {
		s.ConfigFile, named = p, "--config"
	}
	f, found, err := LoadFile(s.ConfigFile)
	if err != nil {
		return nil, err
	}
	if !found && named != "" {
		return nil, fmt.Errorf("%s %s: no such file", named, s.ConfigFile)
	}
	s.FileFound = found
	if name, ok := in.Flags[AgentFlag]; ok && name != "" {
		// The file's agent: its settings replace the command's.
		if in.Flags, err = applyAgent(in, f, name, s.ConfigFile); err != nil {
			return nil, err
		}
		s.Agent = name
		s.Guardrails = f.Agents[name].Guardrails
		for _, g := range s.Guardrails {
			if err := g.Check(); err != nil {
				return nil, fmt.Errorf("agent %q of %s: %v", name, s.ConfigFile, err)
			}
		}
	}
	s.Aliases = Aliases(f.Aliases)
	r := &resolver{in: in, set: s}

	// A provider that cannot be used as configured is reported after the
	// other settings are resolved, so `agcore config` can still show them.
	setupErr := r.provider(f)
	var se *SetupError
	if setupErr != nil && !errors.As(setupErr, &se) {
		return nil, setupErr
	}

	s.Store = r.str("store", "store", []string{"AGCORE_STORE"}, f.Store, "")
	fileTools := ""
	if f.Tools != nil {
		fileTools = strings.Join(*f.Tools, ",")
		if fileTools == "" {
			fileTools = "," // an empty list in the file offers no tools
		}
	}
	s.Tools = splitList(r.str("tools", "tools", []string{"AGCORE_TOOLS"}, fileTools, DefaultTools))
	s.Root = r.str("root", "root", []string{"AGCORE_ROOT"}, f.Root, in.Cwd)
	if !filepath.IsAbs(s.Root) && in.Cwd != "" {
		s.Root = filepath.Join(in.Cwd, s.Root)
	}
	s.AllowSecrets = r.list("allow_secrets", "allow-secret", "AGCORE_ALLOW_SECRETS", f.AllowSecrets)
	s.System = r.str("system", "system", []string{"AGCORE_SYSTEM"}, f.System, "")
	s.Compact = r.str("compact", "compact", []string{"AGCORE_COMPACT"}, f.Compact, DefaultCompact)
	if !contains(CompactModes, s.Compact) {
		return nil, fmt.Errorf("--compact %q: want one of %s", s.Compact, strings.Join(CompactModes, ", "))
	}
	s.Log = r.str("log", "log", []string{"AGCORE_LOG"}, f.Log, "")
	if s.MaxSteps, err = r.num("max_steps", "max-steps", []string{"AGCORE_MAX_STEPS"}, f.MaxSteps, DefaultMaxSteps); err != nil {
		return nil, err
	}
	if s.MaxTokens, err = r.num("max_tokens", "max-tokens", []string{"AGCORE_MAX_TOKENS"}, f.MaxTokens, 0); err != nil {
		return nil, err
	}
	fileTemp := ""
	if f.Temperature != nil {
		fileTemp = strconv.FormatFloat(*f.Temperature, 'g', -1, 64)
	}
	if t := r.str("temperature", "temperature", []string{"AGCORE_TEMPERATURE"}, fileTemp, ""); t != "" {
		v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil || v < 0 || v > 2 {
			return nil, fmt.Errorf("temperature: %q is not a number from 0 to 2 (from %s)", t, s.Sources["temperature"])
		}
		s.Temperature = &v
	}
	if s.MaxSteps == 0 {
		return nil, errors.New("--max-steps must be at least 1")
	}
	if s.MaxCost, err = r.money("max_cost", "max-cost", "AGCORE_MAX_COST", f.MaxCost); err != nil {
		return nil, err
	}
	if s.TokenBudget, err = r.num("token_budget", "token-budget", []string{"AGCORE_TOKEN_BUDGET"}, f.TokenBudget, 0); err != nil {
		return nil, err
	}
	if s.SessionMaxCost, err = r.money("session_max_cost", "session-max-cost", "AGCORE_SESSION_MAX_COST", f.SessionMaxCost); err != nil {
		return nil, err
	}
	if s.SessionTokenBudget, err = r.num("session_token_budget", "session-token-budget", []string{"AGCORE_SESSION_TOKEN_BUDGET"}, f.SessionTokenBudget, 0); err != nil {
		return nil, err
	}
	if v := r.str("max_result_bytes", "max-result-bytes", []string{"AGCORE_MAX_RESULT_BYTES"}, "", "0"); v != "0" {
		if s.MaxResultBytes, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
			return nil, fmt.Errorf("max_result_bytes: %q is not an integer (from %s)", v, s.Sources["max_result_bytes"])
		}
	}
	window := f.ContextWindow
	if pc, ok := f.Providers[s.Provider]; ok && pc.ContextWindow > 0 {
		window = pc.ContextWindow
	}
	if s.ContextWindow, err = r.num("context_window", "context-window", []string{"AGCORE_CONTEXT_WINDOW"}, window, 0); err != nil {
		return nil, err
	}
	fileRetries := 0
	if f.Retries != nil {
		fileRetries = *f.Retries
	}
	if s.Retries, err = r.num("retries", "retries", []string{"AGCORE_RETRIES"}, fileRetries, DefaultRetries); err != nil {
		return nil, err
	}
	if f.Retries != nil && *f.Retries == 0 && s.Sources["retries"] == "default" {
		s.Retries, s.Sources["retries"] = 0, "file"
	}
	s.Yes = r.flag("yes", "yes", false)
	s.JSON = r.flag("json", "json", false)
	s.HideThinking = r.flag("hide_thinking", "hide-thinking", f.HideThinking)
	s.Raw = r.flag("raw", "raw", f.Raw)
	if v, ok := in.Getenv("AGCORE_RAW"); ok && v != "" && s.Sources["raw"] != "flag --raw" {
		s.Raw, _ = strconv.ParseBool(v)
		s.Sources["raw"] = "env AGCORE_RAW"
	}
	if s.Timeout, err = r.duration("timeout", "timeout", "AGCORE_TIMEOUT", f.Timeout, DefaultTimeout); err != nil {
		return nil, err
	}
	if s.IdleTimeout, err = r.duration("idle_timeout", "idle-timeout", "AGCORE_IDLE_TIMEOUT", f.IdleTimeout, DefaultIdleTimeout); err != nil {
		return nil, err
	}
	if s.IdleTimeout == 0 {
		return nil, errors.New("--idle-timeout must be more than 0 (it is how long a silent server is waited for)")
	}

	s.MCP, s.Sources["mcp"] = f.MCP, "file"
	if len(f.MCP) == 0 {
		s.Sources["mcp"] = "default"
	}
	cmds, urls := in.Lists["mcp"], in.Lists["mcp-url"]
	if len(cmds) > 0 || len(urls) > 0 {
		s.MCP = nil
		for _, c := range cmds {
			s.MCP = append(s.MCP, MCPServer{Command: c})
		}
		for _, u := range urls {
			s.MCP = append(s.MCP, MCPServer{URL: u})
		}
		s.Sources["mcp"] = "flag --mcp/--mcp-url"
	}
	for i, m := range s.MCP {
		if (m.Command == "") == (m.URL == "") {
			return nil, fmt.Errorf("MCP server %d: give exactly one of a command and a URL", i+1)
		}
		if _, err := m.TimeoutDuration(); err != nil {
			return nil, fmt.Errorf("MCP server %d: %v", i+1, err)
		}
		if len(m.Headers) > 0 && m.URL == "" {
			return nil, fmt.Errorf("MCP server %d: headers are for a URL server", i+1)
		}
		if o := m.OAuth; o != nil {
			switch {
			case m.URL == "":
				return nil, fmt.Errorf("MCP server %d: oauth is for a URL server", i+1)
			case o.Grant != "" && o.Grant != "authorization_code" && o.Grant != "client_credentials":
				return nil, fmt.Errorf("MCP server %d: oauth grant %q is not authorization_code or client_credentials", i+1, o.Grant)
			case o.Grant == "client_credentials" && (o.ClientID == "" || (o.ClientSecretEnv == "") == (o.ClientKeyFile == "")):
				return nil, fmt.Errorf("MCP server %d: the client_credentials grant needs client_id and one of client_secret_env and client_key_file", i+1)
			}
		}
	}
	return s, setupErr
}

// money resolves a non-negative amount of USD ("0.50", "$0.50"); 0 is
// none.
func (r *resolver) money(key, flag, env string, file float64) (float64, error) {
	fileStr := ""
	if file != 0 {
		fileStr = strconv.FormatFloat(file, 'f', -1, 64)
	}
	v := strings.TrimPrefix(strings.TrimSpace(r.str(key, flag, []string{env}, fileStr, "0")), "$")
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, fmt.Errorf("%s %q is not an amount of USD: give one such as 0.50 (0 for no limit)", r.set.origin(key, flag), v)
	}
	return n, nil
}

// list resolves a list setting: the repeated flag, else the environment
// variable (a comma list), else the file's list.
func (r *resolver) list(key, flag, env string, file []string) []string {
	if v, ok := r.in.Lists[flag]; ok {
		r.set.Sources[key] = "flag --" + flag
		return v
	}
	if v, ok := r.in.Getenv(env); ok && v != "" {
		r.set.Sources[key] = "env " + env
		return splitList(v)
	}
	if len(file) > 0 {
		r.set.Sources[key] = "file"
		return file
	}
	r.set.Sources[key] = "default"
	return nil
}

// duration resolves a duration setting: Go's syntax ("90s", "10m"), or a
// number of seconds.
func (r *resolver) duration(key, flag, env, file string, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(r.str(key, flag, []string{env}, file, def.String()))
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s %q is not a duration: give one such as 90s or 10m (0 for none)", r.set.origin(key, flag), v)
	}
	return d, nil
}

// flag resolves a boolean flag.
func (r *resolver) flag(key, flag string, file bool) bool {
	if v, ok := r.in.Flags[flag]; ok {
		r.set.Sources[key] = "flag --" + flag
		b, err := strconv.ParseBool(v)
		return err == nil && b
	}
	if file {
		r.set.Sources[key] = "file"
		return true
	}
	r.set.Sources[key] = "default"
	return false
}

// provider resolves the provider, its kind, model, base URL and key.
func (r *resolver) provider(f File) error {
	s := r.set
	s.Provider = r.str("provider", "provider", []string{"AGCORE_PROVIDER"}, f.Provider, "")
	if s.Provider == "" {
		// No provider named anywhere: take the first kind whose key is set.
		// A model that belongs to one provider names it (-m sonnet);
		// else the first kind whose key is set.
		if k, ok := r.kindOfModel(); ok {
			s.Provider = k.Name
			s.Sources["provider"] = "the model's provider"
		}
		for _, k := range Kinds() {
			if s.Provider != "" || !k.Detect {
				continue
			}
			for _, env := range []string{k.KeyEnv, k.AltKeyEnv} {
				if env == "" || s.Provider != "" {
					continue
				}
				if v, ok := r.in.Getenv(env); ok && v != "" {
					s.Provider = k.Name
					s.Sources["provider"] = "detected from " + env
				}
			}
		}
	}
	if s.Provider == "" {
		s.Sources["provider"] = "none"
		return nil
	}
	pc := f.Providers[s.Provider]
	kindName := pc.Type
	if kindName == "" {
		kindName = s.Provider
	}
	kind, ok := KindNamed(kindName)
	if !ok {
		if pc.Type == "" {
			return fmt.Errorf("unknown provider %q: want one of %s, or a provider named in %s", s.Provider, kindNames(), s.ConfigFile)
		}
		return fmt.Errorf("provider %q in %s: unknown type %q (want one of %s)", s.Provider, s.ConfigFile, pc.Type, kindNames())
	}
	s.Kind = kind
	s.Model = r.str("model", "model", []string{"AGCORE_MODEL"}, pc.Model, kind.DefaultModel)
	if m, ok := s.Aliases[s.Model]; ok {
		s.Alias, s.Model = s.Model, m
	}
	var baseEnvs []string
	if kind.BaseEnv != "" {
		baseEnvs = []string{kind.BaseEnv}
	}
	s.BaseURL = r.str("base_url", "base-url", baseEnvs, pc.BaseURL, kind.DefaultBase)
	s.KeyEnv = kind.KeyEnv
	if pc.APIKeyEnv != "" {
		s.KeyEnv = pc.APIKeyEnv
	}
	if s.KeyEnv != "" {
		s.APIKey, _ = r.in.Getenv(s.KeyEnv)
	}
	if s.APIKey == "" && pc.APIKeyEnv == "" && kind.AltKeyEnv != "" {
		if v, _ := r.in.Getenv(kind.AltKeyEnv); v != "" {
			s.APIKey, s.KeyEnv = v, kind.AltKeyEnv
		}
	}
	switch {
	case s.BaseURL == "":
		return &SetupError{Settings: s, Reason: fmt.Sprintf("provider %q needs a base URL: --base-url URL or %s (an OpenAI-compatible server, usually ending in /v1)", s.Provider, orName(kind.BaseEnv, "the config file's base_url"))}
	case s.Model == "":
		return &SetupError{Settings: s, Reason: fmt.Sprintf("provider %q needs a model: --model NAME or AGCORE_MODEL", s.Provider)}
	case kind.KeyRequired && s.APIKey == "" && kind.Official(s.BaseURL):
		env := s.KeyEnv
		if kind.AltKeyEnv != "" && pc.APIKeyEnv == "" {
			env += " (or " + kind.AltKeyEnv + ")"
		}
		return &SetupError{Settings: s, Reason: fmt.Sprintf("provider %q needs an API key in the environment variable %s", s.Provider, env)}
	}
	return nil
}

// SetupError reports a provider that is named but cannot be used as
// configured. Settings holds what was resolved so far.
type SetupError struct {
	Settings *Settings
	Reason   string
}

func (e *SetupError) Error() string { return e.Reason }

func orName(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// splitList splits a comma list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// DefaultDB is the embedded SQLite database's path in home, where sessions
// are kept by default: session/sqlite's DefaultPath, which "sqlite:" opens.
func DefaultDB(home string) string { return sqlite.DefaultPath(home) }
