package httpx

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agcore/agcore/llm"
)

// FuzzParseRetryAfter feeds arbitrary Retry-After and Retry-After-Ms
// values: the wait is never negative, whatever a server sends (a negative
// or overflowed duration would make the retry middleware misbehave).
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range [][2]string{
		{"2", ""}, {"1.5", ""}, {"", "250"}, {"Wed, 21 Oct 2099 07:28:00 GMT", ""},
		{"-3", "-1"}, {"1e300", ""}, {"", "1e300"}, {"NaN", "NaN"}, {"+Inf", "Inf"}, {"9223372037", ""},
	} {
		f.Add(s[0], s[1])
	}
	now := time.Date(2026, 1, 5, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, ra, raMs string) {
		h := http.Header{}
		if ra != "" {
			h.Set("Retry-After", ra)
		}
		if raMs != "" {
			h.Set("Retry-After-Ms", raMs)
		}
		if d := ParseRetryAfter(h, now); d < 0 {
			t.Fatalf("ParseRetryAfter(%q, %q) = %v, negative", ra, raMs, d)
		}
	})
}

// FuzzBaseURL feeds arbitrary base URLs and paths to Endpoint: it never
// panics; an accepted base gives an absolute http or https URL with a host
// whose path ends in the appended path and whose query is the base's; a
// refused one is a KindInvalidRequest error that never shows the base's
// query string.
func FuzzBaseURL(f *testing.F) {
	for _, s := range [][2]string{
		{"https://api.openai.com/v1", "/chat/completions"},
		{"https://r.openai.azure.com/openai/v1?api-version=preview", "/chat/completions"},
		{"http://localhost:11434/v1/", "/chat/completions"},
		{"https://api.anthropic.com", "/v1/messages"},
		{"https://gw.example/a%2Fb/v1#frag", "/v1/messages"},
		{"https://u:p@[::1]:8080/v1?key=secret", "/x"},
		{"api.openai.com/v1", "/x"}, {"ftp://x/v1", "/x"}, {"http://[::1", "/x"},
		{"http:opaque?q", "/x"}, {"HTTP://:80/?x", "/x"}, {"", ""}, {"https://h/%zz", "/x"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, base, path string) {
		path = "/" + strings.Trim(path, "/?#%") // endpoint paths are plain, absolute ones
		got, err := Endpoint("p", base, path, "https://example.com/v1")
		if err != nil {
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.KindInvalidRequest || got != "" {
				t.Fatalf("Endpoint(%q) = %q, %#v", base, got, err)
			}
			if i := strings.IndexByte(base, '?'); i >= 0 && len(base) > i+1 {
				if q := base[i:]; len(q) > 8 && strings.Contains(e.Message, q) {
					t.Fatalf("the error shows the query %q: %s", q, e.Message)
				}
			}
			return
		}
		u, perr := url.Parse(got)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" || u.Opaque != "" {
			t.Fatalf("Endpoint(%q) = %q: not an absolute http(s) URL (%v)", base, got, perr)
		}
		if !strings.HasSuffix(u.Path, path) {
			t.Fatalf("Endpoint(%q, %q) = %q: the path %q does not end in it", base, path, got, u.Path)
		}
		if b, _ := url.Parse(base); b != nil && u.RawQuery != b.RawQuery {
			t.Fatalf("Endpoint(%q) = %q: the query changed", base, got)
		}
	})
}

// FuzzMergeExtra merges an arbitrary key and JSON value into an arbitrary
// body: no panic; on success the result is a JSON object holding the key
// with that value, or without it when the value is nil.
func FuzzMergeExtra(f *testing.F) {
	for _, s := range [][3]string{
		{`{"model":"m","stream":true}`, "top_k", "5"},
		{`{"model":"m"}`, "model", "null"},
		{`{"a":1}`, "user", `"<a&b>"`},
		{`[1]`, "a", "1"}, {`null`, "a", "1"}, {`{`, "a", "1"}, {`{"a":1}`, "", `{"x":[1,{}]}`},
	} {
		f.Add([]byte(s[0]), s[1], []byte(s[2]))
	}
	f.Fuzz(func(t *testing.T, body []byte, key string, value []byte) {
		var v any
		if json.Unmarshal(value, &v) != nil || !utf8.ValidString(key) {
			return // encoding/json turns invalid UTF-8 in a key into U+FFFD
		}
		got, err := MergeExtra(body, map[string]any{key: v})
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(got, &obj); err != nil || obj == nil {
			t.Fatalf("MergeExtra(%q, %q: %s) = %q: not a JSON object (%v)", body, key, value, got, err)
		}
		raw, ok := obj[key]
		if v == nil {
			if ok {
				t.Fatalf("MergeExtra(%q, %q: null) kept the key: %s", body, key, got)
			}
			return
		}
		var back any
		if !ok || json.Unmarshal(raw, &back) != nil || !reflect.DeepEqual(back, v) {
			t.Fatalf("MergeExtra(%q, %q: %s) = %s", body, key, value, got)
		}
	})
}
