package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agcore/agcore/internal/testkit/testwait"
)

// bigProvider is an OpenAI-compatible provider that answers "ok" to
// anything, reporting 5,000 input and 3 output tokens.
func bigProvider(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s := newSSE(w)
		s.data(map[string]any{"id": "c1", "object": "chat.completion.chunk", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"role": "assistant", "content": "ok"}, "finish_reason": "stop"}}})
		s.data(map[string]any{"id": "c1", "object": "chat.completion.chunk", "choices": []any{}, "usage": map[string]any{"prompt_tokens": 5000, "completion_tokens": 3, "total_tokens": 5003}})
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	return testwait.CloseOnCleanup(t, srv)
}

// agcore serve's per-principal quota (the config file's serve.quota) is
// kept in the store: a restarted server goes on from what was spent
// before it. Each turn uses 5,003 tokens; the worst case of a call is
// about 8,000 (--context-window 8000, a model the catalog does not know:
// its output cap is what the window leaves), so a daily quota of 30,000
// tokens lets five turns through and refuses the sixth with 429
// budget_exceeded: three before the restart, two after it.
func TestServeQuotaAcrossRestart(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	prov := bigProvider(t)
	c.env["AGCORE_PROVIDER"] = "openai"
	c.env["OPENAI_BASE_URL"] = prov.URL + "/v1"
	c.env["OPENAI_API_KEY"] = "sk-test"
	c.env["AGCORE_MODEL"] = "echo-model"
	if err := os.WriteFile(filepath.Join(c.home, "config.json"), []byte(`{"serve": {"quota": {"tokens_per_day": 30000}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	store := "sqlite:" + filepath.Join(c.home, "quota.db")
	turn := func(base string) (int, map[string]any) {
		resp, err := http.Post(base+"/v1/responses", "application/json", strings.NewReader(`{"model":"agcore","input":"hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body
	}
	var codes []int
	for _, turns := range []int{3, 3} {
		base, cmd, lines := c.startServe(t, "--store", store, "--context-window", "8000")
		for range turns {
			code, body := turn(base)
			codes = append(codes, code)
			switch code {
			case 200:
				usage := body["usage"].(map[string]any)
				if _, ok := usage["budget"].(map[string]any)["principal"].(map[string]any)["tokens"]; !ok {
					t.Errorf("usage %v: want what is left of the quota", usage)
				}
			case 429:
				e := body["error"].(map[string]any)
				if e["code"] != "budget_exceeded" || !strings.Contains(e["message"].(string), "daily token limit of 30000 tokens") {
					t.Errorf("429 %v", e)
				}
			}
		}
		if log, err := interrupt(t, cmd, lines); err != nil {
			t.Fatalf("exit: %v\n%s", err, log)
		}
	}
	if want := []int{200, 200, 200, 200, 200, 429}; fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Errorf("statuses %v, want %v: five turns fit the quota, across the restart", codes, want)
	}
}
