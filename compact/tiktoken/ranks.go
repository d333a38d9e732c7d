package tiktoken

import "hash/maphash"

// rankTable maps a token's bytes to its rank: an open-addressing hash
// table (linear probing, at most half full) of ranks, over the tokens as
// substrings of one string. It replaces a map[string]uint32 because of
// what building one cost every process before its first count: for
// o200k_base's 200,000 tokens, about 40 ms with the garbage collector's
// share, against about 5 ms for this table (BenchmarkLoad), which looks
// up as fast (BenchmarkCount).
type rankTable struct {
	toks  []string // by rank; "" for a rank with no token
	slots []uint32 // rank+1; 0 is empty
	mask  uint64
	seed  maphash.Seed
}

func newRankTable(toks []string) *rankTable {
	size := 1
	for size < 2*len(toks) {
		size <<= 1
	}
	t := &rankTable{toks: toks, slots: make([]uint32, size), mask: uint64(size - 1), seed: maphash.MakeSeed()}
	for r, tok := range toks {
		if tok == "" {
			continue
		}
		i := maphash.String(t.seed, tok) & t.mask
		for t.slots[i] != 0 {
			if t.toks[t.slots[i]-1] == tok {
				break // no vocabulary has one; a duplicate would keep its lowest rank
			}
			i = (i + 1) & t.mask
		}
		if t.slots[i] == 0 {
			t.slots[i] = uint32(r) + 1
		}
	}
	return t
}

// rank returns the rank of the token s, if s is one.
func (t *rankTable) rank(s string) (uint32, bool) {
	for i := maphash.String(t.seed, s) & t.mask; ; i = (i + 1) & t.mask {
		r := t.slots[i]
		if r == 0 {
			return 0, false
		}
		if t.toks[r-1] == s {
			return r - 1, true
		}
	}
}
