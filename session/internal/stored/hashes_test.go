package stored

import (
	"slices"
	"testing"
)

func TestHashesRoundTrip(t *testing.T) {
	for _, h := range [][]uint64{nil, {0}, {1, 1<<64 - 1, 0x0102030405060708}} {
		b := EncodeHashes(h)
		if len(b) != 8*len(h) {
			t.Fatalf("EncodeHashes(%v): %d bytes", h, len(b))
		}
		got, err := DecodeHashes(b)
		if err != nil || !slices.Equal(got, h) && len(h) > 0 {
			t.Fatalf("DecodeHashes(EncodeHashes(%v)) = %v, %v", h, got, err)
		}
	}
	if b := EncodeHashes([]uint64{0x0102030405060708}); b[0] != 8 || b[7] != 1 {
		t.Errorf("not little-endian: % x", b)
	}
	if _, err := DecodeHashes(make([]byte, 9)); err == nil {
		t.Error("DecodeHashes of 9 bytes: no error")
	}
}
