package httpx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MarshalJSON encodes v as the adapters send JSON: without HTML escaping
// (a prompt's "<" and "&" go as they are, not as \u003c) and without a
// trailing newline.
func MarshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// MergeExtra sets Request.Extra's keys at the top level of body, a JSON
// object: an Extra key replaces the adapter's field of that name, and a nil
// value deletes it. The merged object's keys come out sorted, encoded by
// MarshalJSON. With no Extra, body is returned as it is.
//
// The error (a body that is not a JSON object, a value that does not
// encode) names the problem; the adapter wraps it in its own
// KindInvalidRequest error.
func MergeExtra(body []byte, extra map[string]any) ([]byte, error) {
	if len(extra) == 0 {
		return body, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, fmt.Errorf("merging Extra: %w", err)
	}
	if fields == nil {
		return nil, errors.New("merging Extra: the request body is not a JSON object")
	}
	for k, v := range extra {
		if v == nil {
			delete(fields, k)
			continue
		}
		raw, err := MarshalJSON(v)
		if err != nil {
			return nil, fmt.Errorf("encoding Extra[%q]: %w", k, err)
		}
		fields[k] = raw
	}
	return MarshalJSON(fields)
}
