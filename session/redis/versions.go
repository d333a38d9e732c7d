package redis

import (
	"github.com/agcore/agcore/session/internal/stored"
)

// version is what an append builds a turn on: a session's totals as
// appendFields holds them, at one incarnation and turn count.
type version struct {
	t      stored.Totals
	inc    string
	exists bool // the session is stored (else t is zero)
	// read: t was read together with the owner and duplicate-turn checks
	// (by the append script or a read), so a turn that fails Check on it
	// is refused; a remembered version may be out of date.
	read bool
}

// parseVersion decodes the totals fields in appendFields order. A field
// that is not a string is absent (a script's nil comes as nil in RESP2 and
// as false in RESP3).
func parseVersion(vals []any) (version, error) {
	for i, v := range vals {
		if _, ok := v.(string); !ok {
			vals[i] = nil
		}
	}
	t, inc, ok, err := parseTotals(vals)
	if err != nil {
		return version{}, err
	}
	return version{t: t, inc: inc, exists: ok, read: true}, nil
}

// versions remembers the version of the sessions a store last appended to
// or loaded, so that the next append to one of them is built without
// reading the session first: the append script checks the version and
// hands back the current one when it is out of date, so a remembered
// version is a guess that costs a round trip when wrong, never a turn.
type versions struct{ recent stored.Recent[version] }

// get returns the version remembered for id; a session the store does not
// know is guessed new.
func (v *versions) get(id string) version {
	ver, _ := v.recent.Get(id)
	ver.read = false
	return ver
}

// put remembers ver for id, without what an append does not build on (the
// state bag, the request hashes, the compaction view).
func (v *versions) put(id string, ver version) {
	ver.t.State, ver.t.Hashes, ver.t.Compaction = nil, nil, nil
	ver.read = false
	v.recent.Put(id, ver)
}

// drop forgets id's version.
func (v *versions) drop(id string) { v.recent.Drop(id) }
