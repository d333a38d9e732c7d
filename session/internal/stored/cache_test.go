package stored

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agcore/agcore/llm"
)

func msgs(tag string, n int) ([]llm.Message, []uint64) {
	var m []llm.Message
	var h []uint64
	for i := range n {
		m = append(m, llm.UserText(fmt.Sprintf("%s-%d", tag, i)))
		h = append(h, uint64(int(tag[0])*1000+i))
	}
	return m, h
}

func TestCacheExtendsInPlace(t *testing.T) {
	t.Parallel()
	c := NewCache(1 << 20)
	if m, _, _ := c.Get("s", 1); m != nil {
		t.Fatal("an empty cache returned messages")
	}
	a, ah := msgs("a", 3)
	got, gotH := c.Put("s", 1, nil, nil, 0, a, ah, 30)
	if !slices.Equal(gotH, ah) || len(got) != 3 {
		t.Fatalf("put returned %d messages, hashes %v", len(got), gotH)
	}
	base, baseH, bytes := c.Get("s", 1)
	if len(base) != 3 || cap(base) != 3 || bytes != 30 {
		t.Fatalf("get: %d messages (cap %d), %d bytes", len(base), cap(base), bytes)
	}
	// Another incarnation is not served.
	if m, _, _ := c.Get("s", 2); m != nil {
		t.Fatal("the cache served another incarnation")
	}
	b, bh := msgs("b", 2)
	all, allH := c.Put("s", 1, base, baseH, bytes, b, bh, 20)
	if len(all) != 5 || all[4].Text() != "b-1" || !slices.Equal(allH, append(slices.Clone(ah), bh...)) {
		t.Fatalf("extension lost messages: %d, %v", len(all), allH)
	}
	// A reader of the shorter list still sees it unchanged.
	if len(base) != 3 || base[2].Text() != "a-2" {
		t.Fatal("the extension changed a reader's list")
	}
	// A second Load that read the same rows (a race) adds nothing.
	again, _ := c.Put("s", 1, base, baseH, bytes, b, bh, 20)
	if e := c.entries["s"]; len(e.msgs) != 5 || len(again) != 5 || e.bytes != 50 || c.size != 50 {
		t.Fatalf("a repeated extension: %d messages, %d bytes (cache %d)", len(e.msgs), e.bytes, c.size)
	}
	// An older snapshot gets its prefix.
	short, _ := c.Put("s", 1, base[:2], baseH[:2], 0, nil, nil, 0)
	if len(short) != 2 {
		t.Fatalf("an older snapshot got %d messages, want 2", len(short))
	}
	// A new incarnation replaces the entry.
	x, xh := msgs("x", 1)
	c.Put("s", 2, nil, nil, 0, x, xh, 10)
	if m, _, n := c.Get("s", 2); len(m) != 1 || m[0].Text() != "x-0" || n != 10 || c.size != 10 {
		t.Fatalf("after a new incarnation: %v, %d bytes, cache %d", m, n, c.size)
	}
	c.Drop("s")
	if len(c.entries) != 0 || c.size != 0 {
		t.Fatalf("drop left %d entries, %d bytes", len(c.entries), c.size)
	}
}

func TestCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	t.Parallel()
	c := NewCache(100)
	for _, id := range []string{"a", "b", "c"} {
		m, h := msgs(id, 1)
		c.Put(id, 1, nil, nil, 0, m, h, 40)
	}
	// a was the oldest: 120 bytes > 100 dropped it.
	if _, ok := c.entries["a"]; ok || len(c.entries) != 2 || c.size != 80 {
		t.Fatalf("entries %v, size %d", len(c.entries), c.size)
	}
	c.Get("b", 1) // b is now more recent than c
	m, h := msgs("d", 1)
	c.Put("d", 1, nil, nil, 0, m, h, 40)
	if _, ok := c.entries["c"]; ok {
		t.Fatal("c should have gone before b")
	}
	// A session larger than the whole cache is not kept.
	m, h = msgs("big", 1)
	got, _ := c.Put("big", 1, nil, nil, 0, m, h, 1000)
	if len(got) != 1 || c.entries["big"] != nil || c.size > 100 {
		t.Fatalf("big: %d messages returned, kept %v, size %d", len(got), c.entries["big"] != nil, c.size)
	}
	// A cache of size 0 keeps nothing.
	z := NewCache(0)
	z.Put("a", 1, nil, nil, 0, m, h, 1)
	if len(z.entries) != 0 {
		t.Fatal("a cache of size 0 kept an entry")
	}
}

// TestCacheDropsMessagesBeforeTheView: a session read whole (Load), then
// as views from later and later points (LoadView after compactions), is
// held from its latest view on only, and the readers of earlier lists
// keep theirs unchanged.
func TestCacheDropsMessagesBeforeTheView(t *testing.T) {
	t.Parallel()
	c := NewCache(1 << 20)
	a, ah := msgs("a", 10)
	whole, _ := c.Put("s", 1, nil, nil, 0, a, ah, 100)
	// A view from message 6 on, with two messages appended since.
	base, baseH, n := c.GetFrom("s", 1, 6)
	if len(base) != 4 || base[0].Text() != "a-6" || n != 40 {
		t.Fatalf("GetFrom(6): %d messages from %q, %d bytes", len(base), base[0].Text(), n)
	}
	b, bh := msgs("b", 2)
	view, viewH := c.PutFrom("s", 1, 6, base, baseH, n, b, bh, 20)
	if len(view) != 6 || view[0].Text() != "a-6" || view[5].Text() != "b-1" || len(viewH) != 6 {
		t.Fatalf("PutFrom(6) returned %d messages", len(view))
	}
	e := c.entries["s"]
	if e.start != 6 || len(e.msgs) != 6 || cap(e.msgs) != 6 || e.bytes != 60 || c.size != 60 {
		t.Fatalf("the entry holds %d messages (cap %d) from %d, %d bytes (cache %d); want the 6 of the view, 60 bytes",
			len(e.msgs), cap(e.msgs), e.start, e.bytes, c.size)
	}
	if len(whole) != 10 || whole[9].Text() != "a-9" {
		t.Fatal("dropping the messages before the view changed a reader's list")
	}
	// The whole history is no longer served; a Load reads it again.
	if m, _, _ := c.Get("s", 1); m != nil {
		t.Fatalf("Get served %d messages the cache dropped", len(m))
	}
	// A later view is served from the entry, and moves it on.
	later, laterH, n := c.GetFrom("s", 1, 10)
	if len(later) != 2 || later[0].Text() != "b-0" {
		t.Fatalf("GetFrom(10): %d messages", len(later))
	}
	c.PutFrom("s", 1, 10, later, laterH, n, nil, nil, 0)
	if e := c.entries["s"]; e.start != 10 || len(e.msgs) != 2 || c.size != e.bytes || e.bytes != 20 {
		t.Fatalf("after the later view: %d messages from %d, %d bytes (cache %d)", len(e.msgs), e.start, e.bytes, c.size)
	}
}
