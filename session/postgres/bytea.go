package postgres

import (
	"encoding/binary"
	"errors"
)

// errByteaArray is a bytea[] value in binary format that does not parse.
var errByteaArray = errors.New("postgres: malformed bytea[] value")

// byteaOID is the element type of bytea[].
const byteaOID = 17

// appendByteaArray appends the elements of a one-dimensional bytea[]
// value in PostgreSQL's binary format (what a turn row's msgs column
// comes as) to dst, each copied into a slice of its own: one allocation a
// message, where pgx's decoding into [][]byte makes several. An empty
// array has no dimension; an element may not be NULL.
//
// The format: int32 ndim, int32 has-null flag, uint32 element type, then
// per dimension int32 length and int32 lower bound, then per element an
// int32 length and its bytes.
func appendByteaArray(dst [][]byte, src []byte) ([][]byte, error) {
	if len(src) < 12 {
		return dst, errByteaArray
	}
	ndim := int32(binary.BigEndian.Uint32(src))
	if binary.BigEndian.Uint32(src[8:]) != byteaOID {
		return dst, errByteaArray
	}
	src = src[12:]
	switch ndim {
	case 0:
		if len(src) != 0 {
			return dst, errByteaArray
		}
		return dst, nil
	case 1:
	default:
		return dst, errByteaArray
	}
	if len(src) < 8 {
		return dst, errByteaArray
	}
	n := int32(binary.BigEndian.Uint32(src))
	src = src[8:]
	if n < 0 || int(n) > len(src)/4 {
		return dst, errByteaArray
	}
	for range n {
		if len(src) < 4 {
			return dst, errByteaArray
		}
		size := int32(binary.BigEndian.Uint32(src))
		src = src[4:]
		if size < 0 || int(size) > len(src) {
			return dst, errByteaArray // NULL, or cut short
		}
		dst = append(dst, append(make([]byte, 0, size), src[:size]...))
		src = src[size:]
	}
	if len(src) != 0 {
		return dst, errByteaArray
	}
	return dst, nil
}
