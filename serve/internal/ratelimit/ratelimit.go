// Package ratelimit lets a process do something about a key at most once
// per interval: serve's, serve/web's and serve/a2aserve's questions to a
// durable runner about whether a remote turn still runs (each asks about
// one turn at most once per 5 seconds, whatever the number of readers
// following it).
package ratelimit

import (
	"sync"
	"time"
)

// maxKeys is how many keys a Due remembers before it forgets those no
// longer within their interval (they would be due anyway).
const maxKeys = 4096

// Due answers whether a key may be acted on now: at most once per Every
// per key. The zero value is ready to use (with Every zero, every key is
// always due); a Due is safe for concurrent use and must not be copied
// after first use. It remembers the keys of the last interval, and
// forgets the older ones once it remembers maxKeys (4,096): its memory
// grows only with the keys due within one interval.
type Due struct {
	// Every is the least time between two due answers for one key.
	Every time.Duration

	mu   sync.Mutex
	last map[string]time.Time // by key: when it was last due
}

// Due reports whether key is due at now (it was not due within Every
// before now), and if so records that it is.
func (d *Due) Due(key string, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t, ok := d.last[key]; ok && now.Sub(t) < d.Every {
		return false
	}
	if d.last == nil {
		d.last = map[string]time.Time{}
	}
	if len(d.last) >= maxKeys {
		for k, t := range d.last {
			if now.Sub(t) >= d.Every {
				delete(d.last, k)
			}
		}
	}
	d.last[key] = now
	return true
}
