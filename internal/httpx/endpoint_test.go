package httpx

import (
	"errors"
	"strings"
	"testing"

	"github.com/agcore/agcore/llm"
)

func TestEndpoint(t *testing.T) {
	const example = "https://api.example.com/v1"
	tests := []struct {
		name, base, path string
		want             string // "" when the base is refused
		shown            string // the value the error shows, when refused
	}{
		{"a base with a version path", "https://api.openai.com/v1", "/chat/completions", "https://api.openai.com/v1/chat/completions", ""},
		{"a trailing slash is dropped", "http://localhost:11434/v1/", "/chat/completions", "http://localhost:11434/v1/chat/completions", ""},
		{"a host alone", "https://api.anthropic.com", "/v1/messages", "https://api.anthropic.com/v1/messages", ""},
		{"a host with a slash", "http://127.0.0.1:1/", "/v1/messages", "http://127.0.0.1:1/v1/messages", ""},
		{"the query string stays after the path (Azure)", "https://r.openai.azure.com/openai/v1?api-version=preview", "/chat/completions",
			"https://r.openai.azure.com/openai/v1/chat/completions?api-version=preview", ""},
		{"an escaped path keeps its escapes", "https://gw.example/a%2Fb/v1", "/chat/completions", "https://gw.example/a%2Fb/v1/chat/completions", ""},
		{"the scheme's case does not matter", "HTTPS://gw.example/v1", "/x", "https://gw.example/v1/x", ""},
		{"a fragment is dropped", "https://gw.example/v1#top", "/x", "https://gw.example/v1/x", ""},
		{"an IPv6 host", "http://[::1]:8000/v1", "/x", "http://[::1]:8000/v1/x", ""},
		{"user information is kept", "https://u:p@gw.example/v1", "/x", "https://u:p@gw.example/v1/x", ""},
		{"no scheme", "api.openai.com/v1", "/x", "", `"api.openai.com/v1"`},
		{"another scheme", "ftp://x/v1", "/x", "", `"ftp://x/v1"`},
		{"no host", "http:///v1", "/x", "", `"http:///v1"`},
		{"a port without a host", "http://:8080/v1", "/x", "", `"http://:8080/v1"`},
		{"an opaque URL", "http:localhost", "/x", "", `"http:localhost"`},
		{"an unparsable URL", "http://[::1", "/x", "", `"http://[::1"`},
		{"empty", "", "/x", "", `""`},
		{"leading space", " https://gw.example", "/x", "", `" https://gw.example"`},
		{"the query string of a bad one is not shown", "gw.example/v1?key=sk-secret", "/x", "", `"gw.example/v1?…"`},
		{"the password of a bad one is not shown", "ftp://u:hunter2@gw.example/v1", "/x", "", `"ftp://u:xxxxx@gw.example/v1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Endpoint("acme", tc.base, tc.path, example)
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("Endpoint(%q) = %q, %v; want %q", tc.base, got, err, tc.want)
				}
				return
			}
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != llm.KindInvalidRequest || e.Provider != "acme" || got != "" {
				t.Fatalf("Endpoint(%q) = %q, %#v; want an invalid-request error", tc.base, got, err)
			}
			if !errors.Is(err, llm.ErrInvalidRequest) {
				t.Fatalf("%v does not match llm.ErrInvalidRequest", err)
			}
			for _, part := range []string{"acme", tc.shown, example} {
				if !strings.Contains(e.Message, part) {
					t.Errorf("message %q does not name %s", e.Message, part)
				}
			}
			for _, secret := range []string{"sk-secret", "hunter2"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows %q: %v", secret, err)
				}
			}
		})
	}
}
