package config

import (
	"fmt"
	"strings"
)

// Kind is one of the provider kinds the CLI can talk to: how its key and
// base URL are found and which model it uses by default.
type Kind struct {
	Name string
	// KeyEnv is the environment variable holding the API key; empty for a
	// kind that needs none (ollama).
	KeyEnv string
	// AltKeyEnv is a second variable holding the key, read (and
	// detected) when KeyEnv is not set: GOOGLE_API_KEY for gemini.
	AltKeyEnv string
	// BaseEnv is the environment variable that overrides the base URL.
	BaseEnv string
	// DefaultBase is the base URL used when nothing else gives one; empty
	// means one must be given (compatible).
	DefaultBase string
	// DefaultModel is the model used when none is configured; empty means
	// one must be given (compatible).
	DefaultModel string
	// KeyRequired says whether the official endpoint needs a key. A custom
	// base URL (a proxy, a test server) may do without one.
	KeyRequired bool
	// Wire is the API the kind speaks: "openai" (Chat Completions at
	// {base}/chat/completions), "openai-responses" (the Responses API at
	// {base}/responses), "anthropic" (Messages at {base}/v1/messages),
	// "gemini" (generateContent at {base}/v1beta/models/...) or "demo"
	// (offline).
	Wire string
	// Detect says whether a set KeyEnv picks this kind when no provider is
	// named.
	Detect bool
}

// Kinds lists the provider kinds, in the order auto-detection tries them.
var Kinds = []Kind{
	{Name: "openai", KeyEnv: "OPENAI_API_KEY", BaseEnv: "OPENAI_BASE_URL", DefaultBase: "https://api.openai.com/v1", DefaultModel: "gpt-4.1-mini", KeyRequired: true, Wire: "openai", Detect: true},
	// OpenAI through the Responses API (provider/openai/responses): the
	// same key, base URL and models as openai; never detected.
	{Name: "openai-responses", KeyEnv: "OPENAI_API_KEY", BaseEnv: "OPENAI_BASE_URL", DefaultBase: "https://api.openai.com/v1", DefaultModel: "gpt-5-mini", KeyRequired: true, Wire: "openai-responses"},
	{Name: "anthropic", KeyEnv: "ANTHROPIC_API_KEY", BaseEnv: "ANTHROPIC_BASE_URL", DefaultBase: "https://api.anthropic.com", DefaultModel: "claude-sonnet-4-5", KeyRequired: true, Wire: "anthropic", Detect: true},
	{Name: "gemini", KeyEnv: "GEMINI_API_KEY", AltKeyEnv: "GOOGLE_API_KEY", BaseEnv: "GOOGLE_GEMINI_BASE_URL", DefaultBase: "https://generativelanguage.googleapis.com", DefaultModel: "gemini-2.5-flash", KeyRequired: true, Wire: "gemini", Detect: true},
	{Name: "deepseek", KeyEnv: "DEEPSEEK_API_KEY", BaseEnv: "DEEPSEEK_BASE_URL", DefaultBase: "https://api.deepseek.com", DefaultModel: "deepseek-chat", KeyRequired: true, Wire: "openai", Detect: true},
	{Name: "ollama", DefaultBase: "http://localhost:11434/v1", DefaultModel: "llama3.2", Wire: "openai"},
	// The presets of OpenAI-compatible services (provider/openai's VLLM(),
	// OpenRouter(), Groq(), XAI(), Qwen(), Moonshot()): each needs --model.
	{Name: "vllm", KeyEnv: "VLLM_API_KEY", DefaultBase: "http://localhost:8000/v1", Wire: "openai"},
	{Name: "openrouter", KeyEnv: "OPENROUTER_API_KEY", DefaultBase: "https://openrouter.ai/api/v1", KeyRequired: true, Wire: "openai", Detect: true},
	{Name: "groq", KeyEnv: "GROQ_API_KEY", DefaultBase: "https://api.groq.com/openai/v1", KeyRequired: true, Wire: "openai", Detect: true},
	{Name: "xai", KeyEnv: "XAI_API_KEY", DefaultBase: "https://api.x.ai/v1", KeyRequired: true, Wire: "openai", Detect: true},
	{Name: "qwen", KeyEnv: "DASHSCOPE_API_KEY", DefaultBase: "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", KeyRequired: true, Wire: "openai", Detect: true},
	{Name: "moonshot", KeyEnv: "MOONSHOT_API_KEY", DefaultBase: "https://api.moonshot.ai/v1", KeyRequired: true, Wire: "openai", Detect: true},
	{Name: "compatible", KeyEnv: "OPENAI_API_KEY", BaseEnv: "OPENAI_BASE_URL", Wire: "openai"},
	// demo is the offline scripted demo model, for trying run and chat
	// without a key; it is never detected.
	{Name: "demo", DefaultBase: "offline", DefaultModel: "scripted-demo", Wire: "demo"},
}

// KindNamed returns the kind called name.
func KindNamed(name string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// KindNames lists the kinds' names, comma-separated.
func KindNames() string { return kindNames() }

func kindNames() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// SetupHelp is what run and chat print when no provider is configured
// (problem is empty) or the configured one cannot be used (problem says
// why): exactly how to configure each one, and the offline demo.
func SetupHelp(home, problem string) string {
	if problem == "" {
		problem = "no model provider is configured"
	}
	var b strings.Builder
	b.WriteString("agcore: " + problem + ".\n\n")
	b.WriteString("Configure one with environment variables (or --provider/--model/--base-url, or " + ConfigPath(home) + "):\n\n")
	rows := [][2]string{
		{"OpenAI", "export OPENAI_API_KEY=sk-...               (model: --model gpt-4.1-mini, the default)"},
		{"Anthropic", "export ANTHROPIC_API_KEY=sk-ant-...        (and AGCORE_PROVIDER=anthropic if other keys are set)"},
		{"Gemini", "export GEMINI_API_KEY=AIza...              (or GOOGLE_API_KEY; AGCORE_PROVIDER=gemini if other keys are set)"},
		{"DeepSeek", "export DEEPSEEK_API_KEY=sk-...             (and AGCORE_PROVIDER=deepseek if other keys are set)"},
		{"Ollama", "export AGCORE_PROVIDER=ollama AGCORE_MODEL=llama3.2   (local server at http://localhost:11434/v1, no key)"},
		{"vLLM / other", "export AGCORE_PROVIDER=compatible OPENAI_BASE_URL=http://localhost:8000/v1 AGCORE_MODEL=NAME"},
	}
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-13s %s\n", r[0], r[1])
	}
	b.WriteString("\nBase URLs: OPENAI_BASE_URL, DEEPSEEK_BASE_URL, ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL (or --base-url).\n")
	b.WriteString("To see the whole machinery offline first, with no key: agcore demo (or --provider demo)\n")
	return b.String()
}
