package tiktoken

import (
	"container/heap"
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/dlclark/regexp2/v2"

	// The codec package registers the compiled form of the split patterns
	// below with regexp2 (its generated matchers); its vocabularies are
	// linked only by its constructors, which this package does not call.
	_ "github.com/tiktoken-go/tokenizer/codec"
)

// The vocabularies, in a compact form of our own: every token's bytes in
// rank order, each preceded by its length as a uvarint (0 for a rank with
// no token). tiktoken-go/tokenizer compiles them as Go map literals, which
// cost a binary about 9 MB for these two; these files are 2.3 MB. They
// are not compressed: gzipped (1.6 MB), inflating o200k_base took 20 ms
// of every process's first count, most of its load.
// TestVocabulariesMatchTheTokenizer checks them token by token against
// that package's, and -update writes them. The vocabularies are
// data, not code: OpenAI's o200k_base and cl100k_base encodings, published
// with tiktoken under the MIT licence, as tiktoken-go/tokenizer (MIT)
// carries them.
var (
	//go:embed o200k_base.tkv
	o200kData []byte
	//go:embed cl100k_base.tkv
	cl100kData []byte
)

// The split patterns of the encodings, as OpenAI's tiktoken defines them.
const (
	o200kPattern  = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	cl100kPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
)

// bpe counts the tokens of a byte-pair encoding: the text split by the
// pattern, each piece one token if it is in the vocabulary, else merged
// from its bytes, the lowest-ranked adjacent pair first (the leftmost
// among equals), as tiktoken does. Special tokens are not recognized in
// text, as in the tokenizer's Count.
type bpe struct {
	ranks *rankTable
	split *regexp2.Regexp
}

// loadBPE reads a vocabulary file.
func loadBPE(data []byte, pattern string) (*bpe, error) {
	toks, err := decodeVocab(data)
	if err != nil {
		return nil, err
	}
	re, err := regexp2.Compile(pattern, regexp2.None)
	if err != nil {
		return nil, err
	}
	return &bpe{ranks: newRankTable(toks), split: re}, nil
}

// decodeVocab returns the tokens of a vocabulary file in rank order, as
// substrings of one string.
func decodeVocab(raw []byte) ([]string, error) {
	n := 0
	for rest := raw; len(rest) > 0; n++ {
		l, k := binary.Uvarint(rest)
		if k <= 0 || uint64(len(rest)-k) < l {
			return nil, fmt.Errorf("tiktoken: vocabulary: corrupt at token %d", n)
		}
		rest = rest[k+int(l):]
	}
	all := string(raw)
	toks := make([]string, 0, n)
	for at := 0; at < len(all); {
		l, k := binary.Uvarint(raw[at:])
		toks = append(toks, all[at+k:at+k+int(l)])
		at += k + int(l)
	}
	return toks, nil
}

// encodeVocab writes tokens (in rank order) as a vocabulary file.
func encodeVocab(toks []string) []byte {
	var raw []byte
	for _, t := range toks {
		raw = binary.AppendUvarint(raw, uint64(len(t)))
		raw = append(raw, t...)
	}
	return raw
}

// Count returns the number of tokens of s.
func (b *bpe) Count(s string) (int, error) {
	n := 0
	m, err := b.split.FindStringMatch(s)
	for ; m != nil && err == nil; m, err = b.split.FindNextMatch(m) {
		piece := m.String()
		if _, ok := b.ranks.rank(piece); ok {
			n++
			continue
		}
		n += b.merge(piece)
	}
	if err != nil {
		return 0, fmt.Errorf("tiktoken: matching: %w", err)
	}
	return n, nil
}

const noRank = math.MaxUint32

// merge returns the number of tokens piece is merged into.
func (b *bpe) merge(piece string) int {
	if len(piece) < 64 {
		return b.mergeScan(piece)
	}
	return b.mergeHeap(piece)
}

// mergeScan merges with a linear scan per merge: O(n²), fast for the short
// pieces nearly all text is made of.
func (b *bpe) mergeScan(piece string) int {
	var buf [64]int
	bounds := buf[:0]
	for i := 0; i <= len(piece); i++ {
		bounds = append(bounds, i)
	}
	rank := func(i int) uint32 { // of parts i and i+1 merged
		if i+2 >= len(bounds) {
			return noRank
		}
		if r, ok := b.ranks.rank(piece[bounds[i]:bounds[i+2]]); ok {
			return r
		}
		return noRank
	}
	for len(bounds) > 2 {
		best, at := uint32(noRank), -1
		for i := 0; i+2 < len(bounds); i++ {
			if r := rank(i); r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		bounds = append(bounds[:at+1], bounds[at+2:]...)
	}
	return len(bounds) - 1
}

// mergeHeap gives mergeScan's result in O(n log n), for long pieces (runs
// of punctuation or spaces): the parts are a linked list and the candidate
// merges a heap ordered by rank, then position.
func (b *bpe) mergeHeap(piece string) int {
	n := len(piece)
	next := make([]int, n+1) // the next boundary, -1 after the last
	prev := make([]int, n+1)
	rank := make([]uint32, n+1) // of the part starting here merged with its next
	for i := range next {
		next[i], prev[i] = i+1, i-1
	}
	next[n] = -1
	rankAt := func(i int) uint32 {
		j := next[i]
		if j < 0 || next[j] < 0 {
			return noRank
		}
		if r, ok := b.ranks.rank(piece[i:next[j]]); ok {
			return r
		}
		return noRank
	}
	h := &mergeHeap{}
	for i := 0; i < n; i++ {
		if rank[i] = rankAt(i); rank[i] != noRank {
			h.items = append(h.items, mergeItem{rank[i], i})
		}
	}
	heap.Init(h)
	parts := n
	for h.Len() > 0 {
		it := heap.Pop(h).(mergeItem)
		if next[it.pos] == -2 || rank[it.pos] != it.rank {
			continue // stale: the part was merged away or changed
		}
		// Merge the part at it.pos with its next.
		j := next[it.pos]
		next[it.pos] = next[j]
		if next[j] >= 0 {
			prev[next[j]] = it.pos
		}
		next[j] = -2
		parts--
		if rank[it.pos] = rankAt(it.pos); rank[it.pos] != noRank {
			heap.Push(h, mergeItem{rank[it.pos], it.pos})
		}
		if p := prev[it.pos]; p >= 0 {
			if rank[p] = rankAt(p); rank[p] != noRank {
				heap.Push(h, mergeItem{rank[p], p})
			}
		}
	}
	return parts
}

type mergeItem struct {
	rank uint32
	pos  int
}

type mergeHeap struct{ items []mergeItem }

func (h *mergeHeap) Len() int { return len(h.items) }
func (h *mergeHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos
}
func (h *mergeHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *mergeHeap) Push(x any)    { h.items = append(h.items, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
