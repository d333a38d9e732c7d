package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"
)

// MaxIDLen is the longest session id, in bytes, that ValidateID accepts.
const MaxIDLen = 128

// ValidateID reports whether id may name a session. Every Store checks ids
// with it, so an id that passes is safe to use as a file name in any
// directory: it is 1 to MaxIDLen bytes of ASCII letters, digits, '.', '_'
// and '-', and is neither "." nor "..". Anything else (path separators,
// NUL, spaces, non-ASCII, an empty id) fails with an error wrapping
// ErrInvalidID.
func ValidateID(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%w: empty", ErrInvalidID)
	case len(id) > MaxIDLen:
		return fmt.Errorf("%w: %d bytes, longer than %d", ErrInvalidID, len(id), MaxIDLen)
	case id == "." || id == "..":
		return fmt.Errorf("%w: %q", ErrInvalidID, id)
	}
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			return fmt.Errorf("%w: %q has %q at byte %d (allowed: A-Z a-z 0-9 . _ -)", ErrInvalidID, id, id[i], i)
		}
	}
	return nil
}

func idByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

// NewID returns a fresh random session id that passes ValidateID: 96
// random bits in hex, then the time it was made (UTC, to the millisecond),
// e.g. "9f86d081884c7d65d6d4f5e2-20260105-143012.123". The random part
// comes first, so a few leading characters already tell one id from the
// others ("any unique prefix" of an id names its session); the time is
// there for people. Ids are lower case, so they are safe on
// case-insensitive file systems.
//
// Ids made by earlier versions put the time first
// ("20260105-143012.123-9f86d081884c7d65d6d4f5e2"); they are as valid as
// any other id. Nothing orders sessions by id: stores list them by the
// time of their last update.
func NewID() string {
	var r [12]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (it crashes the program instead)
	return hex.EncodeToString(r[:]) + "-" + time.Now().UTC().Format("20060102-150405.000")
}
