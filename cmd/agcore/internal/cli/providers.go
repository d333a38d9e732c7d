package cli

import (
	"slices"
	"strings"

	"github.com/agcore/agcore/provider/registry"
)

// The help texts about providers are made from the provider registry, so
// that they name every provider, variable and default there is.

// providerFlagHelp is --provider's usage line: every provider's name.
func providerFlagHelp() string {
	return "model provider: " + strings.Join(registry.Names(), ", ") +
		", or a provider named in the config file; when unset, the -m model's maker or the first key set [$AGCORE_PROVIDER]"
}

// baseURLFlagHelp is --base-url's usage line: every base-URL variable.
func baseURLFlagHelp() string {
	var vars []string
	for _, p := range registry.All() {
		if p.BaseEnv != "" && !slices.Contains(vars, "$"+p.BaseEnv) {
			vars = append(vars, "$"+p.BaseEnv)
		}
	}
	return "API base URL: OpenAI-style requests go to {base}/chat/completions (the Responses API's to {base}/responses), Anthropic's to {base}/v1/messages, Gemini's to {base}/v1beta/models/... [" + strings.Join(vars, ", ") + "]"
}

// providerHelp is the providers section of run's, chat's and serve's
// help: each provider, its key and base-URL variables, its defaults.
func providerHelp() string {
	var b strings.Builder
	b.WriteString("Providers (--provider, or AGCORE_PROVIDER; when unset, the maker of the -m model\nor the first key set):\n")
	for _, p := range registry.All() {
		var parts []string
		switch {
		case p.KeyRequired:
			parts = append(parts, p.KeyVars())
		case p.KeyEnv != "":
			parts = append(parts, p.KeyEnv+" if the server wants a key")
		default:
			parts = append(parts, "no key")
		}
		switch {
		case p.Wire == registry.WireDemo:
		case p.DefaultBase == "":
			parts = append(parts, "--base-url or "+p.BaseEnv)
		case p.BaseEnv != "":
			parts = append(parts, p.BaseEnv+" (default "+p.DefaultBase+")")
		default:
			parts = append(parts, p.DefaultBase)
		}
		if p.DefaultModel != "" {
			parts = append(parts, "model "+p.DefaultModel)
		} else {
			parts = append(parts, "-m NAME")
		}
		b.WriteString("  " + pad(p.Name, 17) + p.Description + "\n")
		b.WriteString("  " + pad("", 17) + strings.Join(parts, "; ") + "\n")
	}
	b.WriteString("Keys are read from the environment only, and never printed, logged or stored.\n")
	b.WriteString("agcore models lists the known models and the aliases -m accepts (sonnet, 4o, ...).")
	return b.String()
}

func pad(s string, n int) string {
	if len(s) >= n {
		return s + " "
	}
	return s + strings.Repeat(" ", n-len(s))
}
