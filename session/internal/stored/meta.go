package stored

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/session"
)

// TitleRunes is the longest title, in runes, Title makes.
const TitleRunes = session.TitleRunes

// Title is [session.Title], the one rule every store derives a session's
// title by.
func Title(msgs []llm.Message) string { return session.Title(msgs) }

func messageTitle(m *llm.Message) string { return session.MessageTitle(m) }

// TitleOfStored is Title of messages in their storage JSON, decoding
// them one at a time until one has a title: what a store migrating
// sessions written before titles were kept uses.
func TitleOfStored(raws []json.RawMessage) (string, error) {
	for i, raw := range raws {
		var m llm.Message
		if err := m.UnmarshalJSON(raw); err != nil {
			return "", fmt.Errorf("session: stored message %d: %w", i, err)
		}
		if t := messageTitle(&m); t != "" {
			return t, nil
		}
	}
	return "", nil
}

// compactionJSON is the storage form of a session.Compaction.
type compactionJSON struct {
	Upto     int               `json:"upto"`
	Messages []json.RawMessage `json:"messages"`
}

// EncodeCompaction returns c in its storage JSON: {"upto":N,"messages":[...]},
// each message in its own storage JSON.
func EncodeCompaction(c *session.Compaction) ([]byte, error) {
	if c.Upto < 0 {
		return nil, fmt.Errorf("compaction upto %d is negative", c.Upto)
	}
	cj := compactionJSON{Upto: c.Upto, Messages: make([]json.RawMessage, len(c.Messages))}
	for i, m := range c.Messages {
		data, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("compaction message %d: %w", i, err)
		}
		cj.Messages[i] = data
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cj); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// DecodeCompaction decodes what EncodeCompaction made; nil data is no
// compaction.
func DecodeCompaction(data []byte) (*session.Compaction, error) {
	if data == nil {
		return nil, nil
	}
	var cj compactionJSON
	if err := json.Unmarshal(data, &cj); err != nil {
		return nil, fmt.Errorf("session: stored compaction: %w", err)
	}
	msgs, err := DecodeMessages(cj.Messages)
	if err != nil {
		return nil, fmt.Errorf("session: stored compaction: %w", err)
	}
	if msgs == nil {
		msgs = []llm.Message{}
	}
	return &session.Compaction{Upto: cj.Upto, Messages: msgs}, nil
}

// ViewSession returns session id with these totals, holding msgs, the
// session's messages from index base on, and its compaction decoded.
func (t *Totals) ViewSession(id string, msgs []llm.Message, base int) (*session.Session, error) {
	s := t.Session(id, msgs)
	s.Base = base
	c, err := DecodeCompaction(t.Compaction)
	if err != nil {
		return nil, err
	}
	s.Compaction = c
	return s, nil
}

// From returns the index of the first message a load reads: 0 for Load
// (view false), the compaction's Upto for LoadView.
func (t *Totals) From(view bool) int {
	if !view || t.Compaction == nil {
		return 0
	}
	return min(t.Upto, t.Messages)
}
