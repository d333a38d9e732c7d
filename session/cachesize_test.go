package session_test

import (
	"testing"

	"github.com/agcore/agcore/session"
)

func TestOpenOptionsCacheSize(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []session.OpenOption
		want int64
	}{
		{"unset: the default", nil, session.DefaultCacheBytes},
		{"zero: the default", []session.OpenOption{session.WithCacheBytes(0)}, session.DefaultCacheBytes},
		{"negative: none", []session.OpenOption{session.WithCacheBytes(-1)}, 0},
		{"a size", []session.OpenOption{session.WithCacheBytes(5 << 20)}, 5 << 20},
	} {
		var o session.OpenOptions
		for _, opt := range tc.opts {
			opt(&o)
		}
		if got := o.CacheSize(); got != tc.want {
			t.Errorf("%s: CacheSize() = %d, want %d", tc.name, got, tc.want)
		}
	}
}
