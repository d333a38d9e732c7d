package stored

import "sync"

// MaxRecent is how many sessions a Recent remembers.
const MaxRecent = 4096

// Recent remembers a value for each of the sessions a store last used, at
// most MaxRecent of them: what a store saw of a session on its last
// append or load, which its next append builds on as a guess that the
// store's script or statement checks. The zero value is empty and ready.
// It is safe for concurrent use.
type Recent[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

// Get returns what is remembered for id.
func (r *Recent[V]) Get(id string) (V, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.m[id]
	return v, ok
}

// Put remembers v for id, forgetting another session when full.
func (r *Recent[V]) Put(id string, v V) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]V)
	}
	if _, ok := r.m[id]; !ok && len(r.m) >= MaxRecent {
		for k := range r.m { // any one
			delete(r.m, k)
			break
		}
	}
	r.m[id] = v
}

// Drop forgets id.
func (r *Recent[V]) Drop(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.m, id)
}
