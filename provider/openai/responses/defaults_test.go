package responses

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

// TestNoKeyNothingSent: without a key, a call to OpenAI's endpoint fails
// before anything is sent, with an auth error naming OPENAI_API_KEY; with
// a key the same call is sent (the control: the client below routes
// api.openai.com to a local server); a custom base URL goes without a key.
func TestNoKeyNothingSent(t *testing.T) {
	clearEnv(t)
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	target, _ := url.Parse(srv.URL)
	official := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
		return http.DefaultTransport.RoundTrip(r)
	})}

	m := New(WithHTTPClient(official))
	_, gerr := m.Generate(bg, userRequest())
	_, _, serr := drain(t, m.Stream(bg, userRequest()))
	for call, err := range map[string]error{"Generate": gerr, "Stream": serr} {
		var e *llm.Error
		if !errors.As(err, &e) || !errors.Is(err, llm.ErrAuth) || !strings.Contains(e.Message, "OPENAI_API_KEY") {
			t.Errorf("%s: err = %v, want an auth error naming OPENAI_API_KEY", call, err)
		}
	}
	if got.Load() != 0 {
		t.Fatalf("%d requests without a key; want none", got.Load())
	}

	t.Setenv("OPENAI_API_KEY", testKey)
	New(WithHTTPClient(official)).Generate(bg, userRequest())
	if got.Load() != 1 {
		t.Fatalf("with a key: %d requests, want 1", got.Load())
	}
	t.Setenv("OPENAI_API_KEY", "")
	New(WithBaseURL(srv.URL+"/v1")).Generate(bg, userRequest())
	if got.Load() != 2 {
		t.Fatalf("a custom base URL without a key: %d requests, want 2", got.Load())
	}
}

// TestDefaultModel: New without WithModel sends DefaultModel.
func TestDefaultModel(t *testing.T) {
	clearEnv(t)
	body := encode(t, New(WithAPIKey("k")), userRequest(), false)
	if body["model"] != DefaultModel || New().Info().Name != DefaultModel {
		t.Fatalf("model %v, want %s", body["model"], DefaultModel)
	}
}
