package catalog

import (
	"slices"
	"strings"
	"sync"

	"github.com/agcore/agcore/llm"
)

// Catalog says what is known about models: context window, maximum output
// and price, per provider. It is a value: [Default] returns a new one
// holding the built-in entries, [Catalog.Add] extends or overrides one
// catalog without affecting any other, and nothing is process-wide. The
// zero value is an empty catalog ready to use; a Catalog is safe for
// concurrent use.
type Catalog struct {
	base *table // the built-in entries, shared and never changed; may be nil

	mu  sync.RWMutex
	own table // entries given to Add
}

// table holds entries by normalized name; the entries of one name are in
// the order they were added, at most one per provider.
type table map[string][]llm.ModelInfo

// Default returns a new catalog holding the built-in entries (see the
// package documentation). It is cheap: the built-in table is built once and
// shared, read-only, by every catalog Default returns, and each catalog
// keeps only what is added to it.
func Default() *Catalog { return &Catalog{base: builtinTable()} }

var builtinTable = sync.OnceValue(func() *table {
	t := table{}
	for _, info := range builtin() {
		t.put(info)
	}
	return &t
})

// put adds info under its normalized name, replacing an entry of the same
// provider.
func (t table) put(info llm.ModelInfo) {
	name := Normalize(info.Name)
	list := t[name]
	for i := range list {
		if list[i].Provider == info.Provider {
			list[i] = info
			return
		}
	}
	t[name] = append(list, info)
}

// Add adds entries to c, each under its Provider and Name. An entry
// replaces one c already holds for the same provider and name (names are
// compared in [Normalize]d form); entries of other providers under the same
// name stay, and the built-in entries of a catalog from [Default] are never
// changed, only overridden. An entry without a name, or with neither a
// context window nor a price, is ignored: an unknown window must stay
// unknown.
//
// Provider is who serves the model at that Price: "openai", "anthropic",
// "deepseek", "google", or the name of a local or compatible server
// ("ollama", "vllm", "openrouter", "compatible", ...). An entry with an
// empty Provider applies to every provider, its price included: add one
// only for a price that holds wherever the model runs.
//
// Like a built-in entry, an added name also describes every id that
// extends it after "-", ":" or "@" ("my-model" describes
// "my-model-2026-01-01" and "my-model:latest") unless a longer name matches.
// Price is copied, so changing it afterwards does not change c.
func (c *Catalog) Add(entries ...llm.ModelInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, info := range entries {
		if Normalize(info.Name) == "" || (info.ContextWindow <= 0 && info.Price == nil) {
			continue
		}
		if c.own == nil {
			c.own = table{}
		}
		info.Price = info.Price.Clone()
		c.own.put(info)
	}
}

// Lookup returns what c knows about model, as its seller offers it: the
// limits, the Provider of the entry, and its Price. It returns false when c
// knows nothing (the caller must then say the window itself; there is no
// silent guess). An entry added with [Catalog.Add] comes before a built-in
// one. To price a model for the server that actually runs it, use
// [Catalog.LookupFor].
//
// Matching ignores case and routing prefixes (see [Normalize]); the
// longest name that model equals, or extends after "-", ":" or "@", wins, so
// dated snapshots ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06") and
// Ollama tags ("qwen2.5:7b") find their family's entry, while "gpt-5.9"
// does not find "gpt-5". The returned info's Name is model as given, and
// its Price is a copy.
func (c *Catalog) Lookup(model string) (llm.ModelInfo, bool) {
	return c.lookup(model, "", false)
}

// LookupFor returns what c knows about model when provider serves it: the
// info's Provider is provider. The limits come from the matching entry as
// in [Catalog.Lookup] (an entry for provider first, then one without a
// provider, then any other). The Price comes only from an entry for
// provider or one without a provider: a model that an entry prices for
// another provider (gpt-4o sold by "openai", qwen3 listed for "ollama")
// keeps its window and maximum output but gets a nil Price, because a
// local or compatible server (Ollama, vLLM, LM Studio, OpenRouter, a
// gateway) does not bill at the cloud provider's rates. Add an entry for
// provider to price it.
func (c *Catalog) LookupFor(provider, model string) (llm.ModelInfo, bool) {
	info, ok := c.lookup(model, provider, true)
	info.Provider = provider
	return info, ok
}

// lookup finds the longest name model matches; serving says whether
// provider is the serving provider whose prices alone apply.
func (c *Catalog) lookup(model, provider string, serving bool) (llm.ModelInfo, bool) {
	m := Normalize(model)
	if m == "" {
		return llm.ModelInfo{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	var base table
	if c.base != nil {
		base = *c.base
	}
	// The whole id first, then ever shorter prefixes ending before a
	// separator.
	for i := len(m); i > 0; i-- {
		if i < len(m) && m[i] != '-' && m[i] != ':' && m[i] != '@' {
			continue
		}
		name := m[:i]
		own, built := c.own[name], base[name]
		if len(own) == 0 && len(built) == 0 {
			continue
		}
		return resolve(model, provider, serving, own, built), true
	}
	return llm.ModelInfo{}, false
}

// resolve picks the limits and the price among the entries of one name.
func resolve(model, provider string, serving bool, lists ...[]llm.ModelInfo) llm.ModelInfo {
	// rank orders the entries of one list: the provider's own, then those
	// for every provider, then the others.
	rank := func(e *llm.ModelInfo) int {
		switch {
		case provider != "" && e.Provider == provider:
			return 0
		case e.Provider == "":
			return 1
		}
		return 2
	}
	var limits, price *llm.ModelInfo
	for _, list := range lists {
		for r := 0; r < 3; r++ {
			for i := range list {
				e := &list[i]
				if rank(e) != r {
					continue
				}
				if limits == nil && e.ContextWindow > 0 {
					limits = e
				}
				if price == nil && e.Price != nil && (!serving || r < 2) {
					price = e
				}
			}
		}
	}
	var info llm.ModelInfo
	switch {
	case limits != nil:
		info = *limits
	case price != nil:
		info.Provider = price.Provider
	}
	info.Name = model
	info.Price = nil
	if price != nil {
		info.Price = price.Price.Clone()
	}
	return info
}

// Models returns every entry of c, the built-in ones included unless an
// added entry replaces them, sorted by name and provider. Each Name is the
// normalized name the entry is matched by.
func (c *Catalog) Models() []llm.ModelInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	merged := table{}
	if c.base != nil {
		for _, list := range *c.base {
			for _, info := range list {
				merged.put(info)
			}
		}
	}
	for _, list := range c.own {
		for _, info := range list {
			merged.put(info)
		}
	}
	var out []llm.ModelInfo
	for name, list := range merged {
		for _, info := range list {
			info.Name = name
			info.Price = info.Price.Clone()
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b llm.ModelInfo) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Provider, b.Provider)
	})
	return out
}

// Clone returns an independent copy of c: entries added to either
// afterwards do not affect the other.
func (c *Catalog) Clone() *Catalog {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := &Catalog{base: c.base}
	if c.own != nil {
		out.own = make(table, len(c.own))
		for k, v := range c.own {
			out.own[k] = slices.Clone(v)
		}
	}
	return out
}
