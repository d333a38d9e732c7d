package session

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// GetState decodes the value stored under key in the session's state bag
// into a T. It reports false (and no error) when the key is absent, and an
// error when the stored JSON does not decode into a T.
//
// Context providers keep per-session data here; the agent persists the keys
// a provider changed during a successful run with the run's turn.
func GetState[T any](s *Session, key string) (T, bool, error) {
	var v T
	raw, ok := s.State[key]
	if !ok {
		return v, false, nil
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, true, fmt.Errorf("session: state %q: %w", key, err)
	}
	return v, true, nil
}

// SetState stores v, encoded as JSON, under key in the session's state bag,
// creating the bag if needed.
func SetState(s *Session, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("session: state %q: %w", key, err)
	}
	if s.State == nil {
		s.State = make(map[string]json.RawMessage)
	}
	s.State[key] = raw
	return nil
}

// DeleteState removes key from the session's state bag.
func DeleteState(s *Session, key string) {
	delete(s.State, key)
}

// StateDelta returns the changes that turn the state bag before into after,
// in the form [Turn.State] takes: each key whose value was added or changed
// maps to its new value, each removed key maps to nil. It returns nil when
// nothing changed.
func StateDelta(before, after map[string]json.RawMessage) map[string]json.RawMessage {
	var d map[string]json.RawMessage
	for k, v := range after {
		if old, ok := before[k]; ok && bytes.Equal(old, v) {
			continue
		}
		if d == nil {
			d = make(map[string]json.RawMessage)
		}
		if v == nil {
			v = json.RawMessage("null") // nil would mean "delete"
		}
		d[k] = v
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			if d == nil {
				d = make(map[string]json.RawMessage)
			}
			d[k] = nil
		}
	}
	return d
}
