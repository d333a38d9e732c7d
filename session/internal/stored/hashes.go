package stored

import (
	"encoding/binary"
	"fmt"
)

// EncodeHashes writes a turn's prefix hashes (Prefix.Hashes) as the stores
// keep them: 8 bytes a hash, little-endian, in order.
func EncodeHashes(h []uint64) []byte {
	b := make([]byte, 0, 8*len(h))
	for _, x := range h {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return b
}

// DecodeHashes reads what [EncodeHashes] wrote.
func DecodeHashes(b []byte) ([]uint64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("stored prefix hashes: %d bytes is not a whole number of uint64s", len(b))
	}
	h := make([]uint64, len(b)/8)
	for i := range h {
		h[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return h, nil
}
