package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/catalog"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/provider/registry"
)

// serverModelsTimeout bounds asking a server for its models.
const serverModelsTimeout = 10 * time.Second

func (a *app) newModelsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models [flags] [FILTER]",
		Short: "List the known models (window, price, provider), the aliases, and what a server serves",
		Long: `Models lists the models agcore knows: for each, the provider that makes it,
its context window, its longest answer and its price per million tokens
(input / output), as of ` + catalog.PricesAsOf + `. A model served by another provider (a
compatible server, OpenRouter) keeps its window but not its price. FILTER
keeps the models whose name contains it. Then the aliases -m accepts: the
built-in ones and the config file's "aliases".

With a server named (--base-url, or --provider ollama, vllm or compatible),
it also asks the server which models it serves (GET {base}/models, the
OpenAI-compatible listing; with --provider anthropic or gemini their own,
{base}/v1/models and {base}/v1beta/models) and lists them. --base-url alone asks the server as an
OpenAI-compatible one, with no key unless the provider is OpenAI-compatible.`,
		Example: `  agcore models
  agcore models claude
  agcore models --provider ollama
  agcore models --base-url http://localhost:8000/v1 --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.models,
	}
	fs := cmd.Flags()
	addProviderFlags(fs)
	fs.String("config", "", "the config file (default $AGCORE_HOME/config.json) [$AGCORE_CONFIG]")
	fs.Bool("json", false, "print JSON")
	return cmd
}

// modelJSON is one model of `models --json`.
type modelJSON struct {
	Name            string     `json:"name"`
	Provider        string     `json:"provider"`
	ContextWindow   int        `json:"context_window"`
	MaxOutputTokens int        `json:"max_output_tokens"`
	Price           *llm.Price `json:"price_per_million_tokens,omitempty"`
}

func (a *app) models(cmd *cobra.Command, args []string) error {
	s, err := a.settings(cmd)
	var se *config.SetupError
	if err != nil && !errors.As(err, &se) {
		return err
	}
	filter := ""
	if len(args) == 1 {
		filter = strings.ToLower(args[0])
	}
	var known []modelJSON
	for _, m := range catalog.Default().Models() {
		if strings.Contains(m.Name, filter) {
			known = append(known, modelJSON{m.Name, m.Provider, m.ContextWindow, m.MaxOutputTokens, m.Price})
		}
	}
	// A server is asked when the user points at one.
	var (
		served   []string
		askedURL string
		askErr   error
	)
	if ask, ok := modelServer(cmd, s); ok {
		if err := config.CheckBaseURL(ask.base); err != nil {
			return exit(ExitUsage, "--base-url %q %v", config.RedactURL(ask.base), err)
		}
		askedURL = config.RedactURL(ask.base)
		served, askErr = serverModels(cmd.Context(), ask)
	}
	aliases := config.BuiltinAliases
	if s != nil {
		aliases = s.Aliases
	}
	if asJSON, _ := cmd.Flags().GetBool("json"); asJSON {
		out := map[string]any{"models": known, "aliases": aliases}
		if askedURL != "" {
			server := map[string]any{"url": askedURL, "models": served}
			if askErr != nil {
				server["error"] = askErr.Error()
			}
			out["server"] = server
		}
		if err := writeJSON(a.env.Stdout, out); err != nil {
			return err
		}
	} else {
		out := bufio.NewWriterSize(a.env.Stdout, 64<<10) // one write, not one per cell
		printModels(out, known, aliases, askedURL, served, askErr)
		if err := out.Flush(); err != nil {
			return err
		}
	}
	if askErr != nil {
		return exit(ExitFailed, "asking %s for its models: %v", askedURL, askErr)
	}
	return nil
}

func isLocal(kind string) bool { return kind == "ollama" || kind == "vllm" || kind == "compatible" }

func printModels(w io.Writer, known []modelJSON, aliases map[string]string, askedURL string, served []string, askErr error) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPROVIDER\tWINDOW\tMAX OUTPUT\tPRICE IN / OUT (per 1M tokens)")
	for _, m := range known {
		price := "-"
		if m.Price != nil {
			price = fmt.Sprintf("$%g / $%g", m.Price.Input, m.Price.Output)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, m.Provider, render.Thousands(m.ContextWindow), render.Thousands(m.MaxOutputTokens), price)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nAliases (-m NAME):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range config.SortedAliases(aliases) {
		fmt.Fprintf(tw, "  %s\t%s\n", name, aliases[name])
	}
	tw.Flush()
	if askedURL == "" || askErr != nil {
		return
	}
	fmt.Fprintf(w, "\nServed by %s:\n", askedURL)
	if len(served) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	for _, id := range served {
		fmt.Fprintln(w, "  "+id)
	}
}

// modelsQuery is a server to ask for its models: its base URL, its API
// (registry.WireOpenAI, WireResponses, WireAnthropic or WireGemini) and
// the key to send, if any.
type modelsQuery struct {
	base, wire, key string
}

// modelServer returns the server `agcore models` asks, if any: the one
// --base-url names, whatever the provider (asked in the provider's own
// API when the provider was named, else as an OpenAI-compatible server),
// or a local server's provider (ollama, vllm, compatible) or an
// OpenAI-compatible provider's base URL set by the user.
func modelServer(cmd *cobra.Command, s *config.Settings) (modelsQuery, bool) {
	if f := cmd.Flags().Lookup("base-url"); f != nil && f.Changed && f.Value.String() != "" {
		q := modelsQuery{base: f.Value.String(), wire: registry.WireOpenAI}
		if s == nil || s.Provider == "" {
			return q, true
		}
		named := !strings.HasPrefix(s.Sources["provider"], "detected") && s.Sources["provider"] != "the model's provider"
		switch {
		case s.Kind.Wire == registry.WireOpenAI || s.Kind.Wire == registry.WireResponses:
			q.key = s.APIKey
		case named && (s.Kind.Wire == registry.WireAnthropic || s.Kind.Wire == registry.WireGemini):
			q.wire, q.key = s.Kind.Wire, s.APIKey
		}
		// A key found for another provider's API is not sent to a server
		// asked as OpenAI-compatible.
		return q, true
	}
	if s != nil && s.BaseURL != "" && s.Kind.Wire == registry.WireOpenAI && (s.Sources["base_url"] != "default" || isLocal(s.Kind.Name)) {
		return modelsQuery{base: s.BaseURL, wire: registry.WireOpenAI, key: s.APIKey}, true
	}
	return modelsQuery{}, false
}

// serverModels asks a server which models it serves: the OpenAI-compatible
// listing (Anthropic's has the same shape; Gemini's lists names under
// "models").
func serverModels(ctx context.Context, q modelsQuery) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, serverModelsTimeout)
	defer cancel()
	u, err := url.Parse(q.base)
	if err != nil {
		return nil, err
	}
	// Where each API lists its models, as its requests go: OpenAI-style
	// {base}/models (the base ends in /v1), Anthropic's {base}/v1/models,
	// Gemini's {base}/v1beta/models.
	suffix := "/models"
	switch q.wire {
	case registry.WireAnthropic:
		suffix = "/v1/models"
	case registry.WireGemini:
		suffix = "/v1beta/models"
	}
	u.Path = strings.TrimRight(u.Path, "/") + suffix
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	switch {
	case q.key == "":
	case q.wire == registry.WireAnthropic:
		req.Header.Set("x-api-key", q.key)
		req.Header.Set("anthropic-version", "2023-06-01")
	case q.wire == registry.WireGemini:
		req.Header.Set("x-goog-api-key", q.key)
	default:
		req.Header.Set("Authorization", "Bearer "+q.key)
	}
	resp, err := newHTTPClient().Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		Models []struct {
			Name string `json:"name"`
		} `json:"models"` // Gemini's
	}
	if err := json.Unmarshal(body, &list); err != nil || (list.Data == nil && list.Models == nil) {
		if err == nil {
			err = errors.New(`no "data" list`)
		}
		return nil, fmt.Errorf("the answer is not a model list: %v", err)
	}
	ids := make([]string, 0, len(list.Data)+len(list.Models))
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	for _, m := range list.Models {
		ids = append(ids, strings.TrimPrefix(m.Name, "models/"))
	}
	return ids, nil
}
