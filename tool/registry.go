package tool

import (
	"fmt"
	"sync"

	"github.com/agcore/agcore/llm"
)

// Registry holds tools by name and lists them in the order they were
// registered: tool definitions are part of the prompt prefix, so their order
// must not change between calls. It is safe for concurrent use; the zero
// value is an empty registry.
type Registry struct {
	mu    sync.RWMutex
	tools []Tool
	index map[string]int
}

// Register adds tools in order. It fails, adding none of them, if a name is
// empty or already taken.
func (r *Registry) Register(tools ...Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t == nil {
			return fmt.Errorf("tool: registering a nil tool")
		}
		name := t.Name()
		if name == "" {
			return fmt.Errorf("tool: registering a tool with an empty name")
		}
		if _, dup := r.index[name]; dup || seen[name] {
			return fmt.Errorf("tool: %q is already registered", name)
		}
		seen[name] = true
	}
	if r.index == nil {
		r.index = make(map[string]int, len(tools))
	}
	for _, t := range tools {
		r.index[t.Name()] = len(r.tools)
		r.tools = append(r.tools, t)
	}
	return nil
}

// Remove removes the tool called name and reports whether it was there.
// The others keep their order.
func (r *Registry) Remove(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, ok := r.index[name]
	if !ok {
		return false
	}
	r.tools = append(r.tools[:i:i], r.tools[i+1:]...)
	delete(r.index, name)
	for j := i; j < len(r.tools); j++ {
		r.index[r.tools[j].Name()] = j
	}
	return true
}

// Get returns the tool called name. Its signature fits [Invoker.Invoke]'s
// lookup: inv.Invoke(ctx, reg.Get, calls).
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i, ok := r.index[name]
	if !ok {
		return nil, false
	}
	return r.tools[i], true
}

// List returns the tools in registration order.
func (r *Registry) List() []Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]Tool(nil), r.tools...)
}

// Len returns the number of tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// Definitions returns the tools' wire descriptions for a Request, in
// registration order (see [Definition]).
func (r *Registry) Definitions() []llm.ToolDefinition {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return Definitions(r.tools)
}
