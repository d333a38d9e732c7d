package filestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/internal/stored"
)

// formatVersion is the "agcore_session" value of the header line this
// package writes. Version 2 (issue 22) added the header's "owner" and the
// turn lines' "model", "title" and "compaction"; a log of version 1 (the
// releases before) is read as it is, its title derived from its first
// prompt, and continued (its new lines carry the new fields, its header
// stays: its owner is "").
const formatVersion = 2

// ErrCorrupt is returned (wrapped) when a session log holds something that
// a crash cannot explain: a bad header, or a bad line followed by good ones.
var ErrCorrupt = errors.New("filestore: corrupt session log")

// header is the first line of a session log.
type header struct {
	Version   int       `json:"agcore_session"`
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Owner     string    `json:"owner,omitempty"` // the principal of the creating append
}

// turnLine is one turn as a log line.
type turnLine struct {
	Turn     string                     `json:"turn"`
	Time     time.Time                  `json:"time"`
	Messages []json.RawMessage          `json:"messages"`
	Usage    *llm.Usage                 `json:"usage,omitempty"`
	CostUSD  float64                    `json:"cost_usd,omitempty"`
	State    map[string]json.RawMessage `json:"state,omitempty"`
	StateDel []string                   `json:"state_del,omitempty"`
	Prefix   *prefixLine                `json:"prefix,omitempty"`
	Model    string                     `json:"model,omitempty"`
	Title    string                     `json:"title,omitempty"`      // stored.Title of the messages
	Compact  json.RawMessage            `json:"compaction,omitempty"` // the new compaction view: {"upto":N,"messages":[...]}
}

// prefixLine is a turn's request-hash statistic: the new hash list is the
// first Keep hashes of the previous list followed by Hashes.
type prefixLine struct {
	session.PrefixStats
	Keep   int      `json:"keep"`
	Hashes []uint64 `json:"hashes"`
}

func encodeHeader(id string, created time.Time, owner string) []byte {
	data, err := json.Marshal(header{Version: formatVersion, ID: id, CreatedAt: created, Owner: owner})
	if err != nil {
		panic(err) // cannot happen: a valid id and a time always encode
	}
	return append(data, '\n')
}

// encodeTurn returns tr as one log line, newline included. prev is the
// session's current hash list, against which tr's hashes are delta-encoded.
func encodeTurn(tr *stored.Turn, prev []uint64) ([]byte, error) {
	tl := turnLine{
		Turn:     tr.ID,
		Time:     tr.Time,
		Messages: tr.Messages,
		CostUSD:  tr.CostUSD,
		State:    tr.Set,
		StateDel: tr.Del,
		Model:    tr.Model,
		Title:    tr.Title,
		Compact:  tr.Compaction,
	}
	if tr.Usage != (llm.Usage{}) {
		tl.Usage = &tr.Usage
	}
	if p := tr.Prefix; p != nil {
		keep := 0
		for keep < len(prev) && keep < len(p.Hashes) && prev[keep] == p.Hashes[keep] {
			keep++
		}
		tl.Prefix = &prefixLine{PrefixStats: p.PrefixStats, Keep: keep, Hashes: p.Hashes[keep:]}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // Encode ends the line with '\n'
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tl); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// toStored returns the turn a line holds; prev is the hash list before it,
// owner the log's.
func (tl *turnLine) toStored(prev []uint64, owner string) (*stored.Turn, error) {
	tr := &stored.Turn{
		ID:       tl.Turn,
		Time:     tl.Time.UTC(),
		Messages: tl.Messages,
		CostUSD:  tl.CostUSD,
		Set:      tl.State,
		Del:      tl.StateDel,
		Owner:    owner,
		Model:    tl.Model,
		Title:    tl.Title,
	}
	if tl.Compact != nil {
		var c struct {
			Upto *int `json:"upto"`
		}
		if err := json.Unmarshal(tl.Compact, &c); err != nil || c.Upto == nil {
			return nil, fmt.Errorf("turn %q: bad compaction", tl.Turn)
		}
		tr.Compaction, tr.Upto = tl.Compact, *c.Upto
	}
	if tl.Usage != nil {
		tr.Usage = *tl.Usage
	}
	if p := tl.Prefix; p != nil {
		if p.Keep < 0 || p.Keep > len(prev) {
			return nil, fmt.Errorf("turn %q keeps %d prefix hashes of %d", tl.Turn, p.Keep, len(prev))
		}
		hashes := make([]uint64, 0, p.Keep+len(p.Hashes))
		hashes = append(append(hashes, prev[:p.Keep]...), p.Hashes...)
		tr.Prefix = &stored.Prefix{PrefixStats: p.PrefixStats, Hashes: hashes}
	}
	return tr, nil
}

// decodeTurnLine decodes one line (without its newline) and checks that it
// is a whole turn.
func decodeTurnLine(line []byte, tl *turnLine) bool {
	*tl = turnLine{}
	if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, tl) != nil {
		return false
	}
	return tl.Turn != "" && !tl.Time.IsZero() && tl.Messages != nil
}

// parsedLog is a session log read back.
type parsedLog struct {
	created  time.Time
	owner    string
	turns    []*stored.Turn // in order, duplicates (which Append never writes) skipped
	valid    int64          // bytes of the header and the whole turn lines
	torn     int64          // bytes after valid: a torn last line to drop
	messages int            // total messages of turns
}

// parseLog reads a session log. Everything after the last good line is a
// torn write when nothing after it decodes as a turn; otherwise the log is
// corrupt.
func parseLog(id string, data []byte) (*parsedLog, error) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return nil, fmt.Errorf("%w: %q: no header line", ErrCorrupt, id)
	}
	var h header
	if err := json.Unmarshal(data[:nl], &h); err != nil {
		return nil, fmt.Errorf("%w: %q: header: %v", ErrCorrupt, id, err)
	}
	if h.Version < 1 || h.Version > formatVersion {
		return nil, fmt.Errorf("%w: %q: format version %d, this build reads 1 to %d", ErrCorrupt, id, h.Version, formatVersion)
	}
	if h.ID != id || h.CreatedAt.IsZero() {
		return nil, fmt.Errorf("%w: %q: header names session %q created %v", ErrCorrupt, id, h.ID, h.CreatedAt)
	}
	p := &parsedLog{created: h.CreatedAt.UTC(), owner: h.Owner}

	// Split into lines; a last line without its newline is never whole.
	var lines [][]byte
	var ends []int // offset just past each line's newline
	for off := nl + 1; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			lines = append(lines, nil) // unterminated: cannot be a turn
			ends = append(ends, len(data))
			break
		}
		lines = append(lines, data[off:off+end])
		ends = append(ends, off+end+1)
		off += end + 1
	}
	// Decoding the lines is independent work; checking them is not.
	decoded := make([]turnLine, len(lines))
	ok := make([]bool, len(lines))
	_ = stored.Parallel(len(lines), 64, func(lo, hi int) error {
		for i := lo; i < hi; i++ {
			ok[i] = lines[i] != nil && decodeTurnLine(lines[i], &decoded[i])
		}
		return nil
	})

	seen := make(map[string]struct{}, len(lines))
	var hashes []uint64
	titled := false
	valid := nl + 1
	for i := range lines {
		if !ok[i] {
			if slices.Contains(ok[i+1:], true) {
				return nil, fmt.Errorf("%w: %q: bad line at byte %d is followed by good ones", ErrCorrupt, id, valid)
			}
			break // a torn last line
		}
		valid = ends[i]
		tl := &decoded[i]
		if _, dup := seen[tl.Turn]; dup {
			continue
		}
		seen[tl.Turn] = struct{}{}
		tr, err := tl.toStored(hashes, h.Owner)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %v", ErrCorrupt, id, err)
		}
		if !titled && tr.Title == "" {
			// A line of version 1 has no title: derive it, until the
			// session has one.
			if tr.Title, err = stored.TitleOfStored(tr.Messages); err != nil {
				return nil, fmt.Errorf("%w: %q: %v", ErrCorrupt, id, err)
			}
		}
		titled = titled || tr.Title != ""
		if tr.Prefix != nil {
			hashes = tr.Prefix.Hashes
		}
		p.turns = append(p.turns, tr)
		p.messages += len(tr.Messages)
	}
	p.valid = int64(valid)
	p.torn = int64(len(data) - valid)
	return p, nil
}
