package cli

import (
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

With a server named (--provider ollama, vllm or compatible, or --base-url),
it also asks the server which models it serves (GET {base}/models, the
OpenAI-compatible listing) and lists them.`,
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
	if s != nil && s.BaseURL != "" && s.Kind.Wire == "openai" && (s.Sources["base_url"] != "default" || isLocal(s.Kind.Name)) {
		if err := config.CheckBaseURL(s.BaseURL); err != nil {
			return exit(ExitUsage, "--base-url %q %v", config.RedactURL(s.BaseURL), err)
		}
		askedURL = config.RedactURL(s.BaseURL)
		served, askErr = serverModels(cmd.Context(), s)
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
		a.printModels(known, aliases, askedURL, served, askErr)
	}
	if askErr != nil {
		return exit(ExitFailed, "asking %s for its models: %v", askedURL, askErr)
	}
	return nil
}

func isLocal(kind string) bool { return kind == "ollama" || kind == "vllm" || kind == "compatible" }

func (a *app) printModels(known []modelJSON, aliases map[string]string, askedURL string, served []string, askErr error) {
	tw := tabwriter.NewWriter(a.env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPROVIDER\tWINDOW\tMAX OUTPUT\tPRICE IN / OUT (per 1M tokens)")
	for _, m := range known {
		price := "-"
		if m.Price != nil {
			price = fmt.Sprintf("$%g / $%g", m.Price.Input, m.Price.Output)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, m.Provider, render.Thousands(m.ContextWindow), render.Thousands(m.MaxOutputTokens), price)
	}
	tw.Flush()
	fmt.Fprintln(a.env.Stdout, "\nAliases (-m NAME):")
	tw = tabwriter.NewWriter(a.env.Stdout, 0, 0, 2, ' ', 0)
	for _, name := range config.SortedAliases(aliases) {
		fmt.Fprintf(tw, "  %s\t%s\n", name, aliases[name])
	}
	tw.Flush()
	if askedURL == "" || askErr != nil {
		return
	}
	fmt.Fprintf(a.env.Stdout, "\nServed by %s:\n", askedURL)
	if len(served) == 0 {
		fmt.Fprintln(a.env.Stdout, "  (none)")
	}
	for _, id := range served {
		fmt.Fprintln(a.env.Stdout, "  "+id)
	}
}

// serverModels asks an OpenAI-compatible server which models it serves.
func serverModels(ctx context.Context, s *config.Settings) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, serverModelsTimeout)
	defer cancel()
	u, err := url.Parse(s.BaseURL)
	if err != nil {
		return nil, err
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if s.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.APIKey)
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
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("the answer is not an OpenAI-compatible model list: %v", err)
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids, nil
}
