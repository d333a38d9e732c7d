package gemini

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agcore/agcore/llm"
)

type redirectTransport func(*http.Request) (*http.Response, error)

func (f redirectTransport) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestNoKeyNothingSent: without a key, a call to the provider's own
// endpoint fails before anything is sent, with an auth error naming
// GEMINI_API_KEY; with a key the same call is sent (the control: the client
// below routes the official host to a local server); a custom base URL
// goes without a key.
func TestNoKeyNothingSent(t *testing.T) {
	for _, k := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GEMINI_BASE_URL"} {
		t.Setenv(k, "")
	}
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	target, _ := url.Parse(srv.URL)
	official := &http.Client{Transport: redirectTransport(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
		return http.DefaultTransport.RoundTrip(r)
	})}

	m := New(WithHTTPClient(official))
	_, gerr := m.Generate(bg, fixtureRequest)
	_, _, serr := drain(t, m.Stream(bg, fixtureRequest))
	for call, err := range map[string]error{"Generate": gerr, "Stream": serr} {
		var e *llm.Error
		if !errors.As(err, &e) || !errors.Is(err, llm.ErrAuth) || !strings.Contains(e.Message, "GEMINI_API_KEY") {
			t.Errorf("%s: err = %v, want an auth error naming GEMINI_API_KEY", call, err)
		}
	}
	if got.Load() != 0 {
		t.Fatalf("%d requests without a key; want none", got.Load())
	}

	t.Setenv("GOOGLE_API_KEY", testKey)
	New(WithHTTPClient(official)).Generate(bg, fixtureRequest)
	if got.Load() != 1 {
		t.Fatalf("with a key: %d requests, want 1", got.Load())
	}
	t.Setenv("GOOGLE_API_KEY", "")
	New(WithBaseURL(srv.URL)).Generate(bg, fixtureRequest)
	if got.Load() != 2 {
		t.Fatalf("a custom base URL without a key: %d requests, want 2", got.Load())
	}
}

// TestDefaultModel: New without WithModel uses DefaultModel.
func TestDefaultModel(t *testing.T) {
	if DefaultModel == "" || New(WithAPIKey("k")).Info().Name != DefaultModel {
		t.Fatalf("DefaultModel %q, Info %q", DefaultModel, New(WithAPIKey("k")).Info().Name)
	}
}
