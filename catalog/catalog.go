package catalog

import (
	"slices"
	"strings"
	"sync"

	"github.com/agcore/agcore/llm"
)

// Catalog maps model ids to what is known about their limits. The zero
// value is an empty catalog ready to use; a Catalog is safe for concurrent
// use.
type Catalog struct {
	mu      sync.RWMutex
	entries map[string]llm.ModelInfo // by lower-case name
}

// New returns a catalog holding the built-in entries (see the package
// documentation). Changes to it do not affect [Default].
func New() *Catalog {
	c := &Catalog{}
	for _, info := range builtin {
		c.Register(info)
	}
	return c
}

var defaultCatalog = New()

// Default returns the process-wide catalog that [Lookup] and [Register]
// use.
func Default() *Catalog { return defaultCatalog }

// Lookup looks model up in the default catalog.
func Lookup(model string) (llm.ModelInfo, bool) { return defaultCatalog.Lookup(model) }

// Register adds or replaces an entry of the default catalog.
func Register(info llm.ModelInfo) { defaultCatalog.Register(info) }

// Register adds info under info.Name, replacing an entry of the same name
// (names are compared without regard to case). A registered name matches
// itself and every id that extends it after a separator ("-", ":", "@"), so
// registering "my-model" also describes "my-model-2026-01-01" and
// "my-model:latest" unless a longer name is registered for them. An info
// without a name or with a window of zero or less is ignored: an unknown
// window must stay unknown.
func (c *Catalog) Register(info llm.ModelInfo) {
	name := strings.ToLower(strings.TrimSpace(info.Name))
	if name == "" || info.ContextWindow <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]llm.ModelInfo{}
	}
	c.entries[name] = info
}

// Lookup returns what the catalog knows about model, and false when it
// knows nothing (the caller must then say the window itself; there is no
// silent guess). Matching ignores case and a routing prefix such as
// "openai/" (OpenRouter) or "anthropic." (Bedrock); the longest registered
// name that model equals, or extends after "-", ":" or "@", wins, so dated
// snapshots ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06") and Ollama
// tags ("qwen2.5:7b") find their family's entry. The returned info's Name
// is model as given.
func (c *Catalog) Lookup(model string) (llm.ModelInfo, bool) {
	m := normalize(model)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if info, ok := c.entries[m]; ok {
		info.Name = model
		return info, true
	}
	// Try ever shorter prefixes ending before a separator.
	for i := len(m) - 1; i > 0; i-- {
		switch m[i] {
		case '-', ':', '@':
			if info, ok := c.entries[m[:i]]; ok {
				info.Name = model
				return info, true
			}
		}
	}
	return llm.ModelInfo{}, false
}

// Models returns every entry, sorted by name.
func (c *Catalog) Models() []llm.ModelInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]llm.ModelInfo, 0, len(c.entries))
	for _, info := range c.entries {
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b llm.ModelInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Clone returns an independent copy, for example for one agent to override
// entries without affecting others.
func (c *Catalog) Clone() *Catalog {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := &Catalog{entries: make(map[string]llm.ModelInfo, len(c.entries))}
	for k, v := range c.entries {
		out.entries[k] = v
	}
	return out
}

// normalize lower-cases model and strips routing prefixes.
func normalize(model string) string {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:] // "openai/gpt-4o", "library/qwen2.5"
	}
	// Bedrock and Vertex spell Claude as "anthropic.claude-..." or
	// "us.anthropic.claude-...".
	if i := strings.Index(m, "claude-"); i > 0 && strings.Contains(m[:i], "anthropic") {
		m = m[i:]
	}
	return m
}
