package httpx

import (
	"encoding/json"
	"math"
	"testing"
)

func TestMarshalJSON(t *testing.T) {
	got, err := MarshalJSON(map[string]string{"q": "<a & b>"})
	if err != nil || string(got) != `{"q":"<a & b>"}` {
		t.Fatalf("got %s, %v", got, err)
	}
	if _, err := MarshalJSON(math.NaN()); err == nil {
		t.Fatal("NaN encoded")
	}
}

func TestMergeExtra(t *testing.T) {
	const body = `{"model":"m","stream":true,"temperature":0.5}`
	tests := []struct {
		name  string
		body  string
		extra map[string]any
		want  string // "" when an error is expected
	}{
		{"no Extra returns the body as it is", body, nil, body},
		{"a new key is added and keys come out sorted", body, map[string]any{"top_k": 5}, `{"model":"m","stream":true,"temperature":0.5,"top_k":5}`},
		{"a key replaces the adapter's field", body, map[string]any{"model": "other"}, `{"model":"other","stream":true,"temperature":0.5}`},
		{"nil deletes a field", body, map[string]any{"temperature": nil}, `{"model":"m","stream":true}`},
		{"nil for an absent key changes nothing", body, map[string]any{"absent": nil}, body},
		{"nested values and raw JSON", body, map[string]any{"thinking": map[string]any{"type": "enabled"}, "raw": json.RawMessage(`[1, 2]`)},
			`{"model":"m","raw":[1,2],"stream":true,"temperature":0.5,"thinking":{"type":"enabled"}}`},
		{"no HTML escaping", body, map[string]any{"user": "<a&b>"}, `{"model":"m","stream":true,"temperature":0.5,"user":"<a&b>"}`},
		{"a value that does not encode", body, map[string]any{"bad": math.Inf(1)}, ""},
		{"invalid raw JSON", body, map[string]any{"bad": json.RawMessage(`{`)}, ""},
		{"a body that is not an object", `[1]`, map[string]any{"a": 1}, ""},
		{"a null body", `null`, map[string]any{"a": 1}, ""},
		{"a body that is not JSON", `{`, map[string]any{"a": 1}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MergeExtra([]byte(tc.body), tc.extra)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("got %s, want an error", got)
				}
				return
			}
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}
