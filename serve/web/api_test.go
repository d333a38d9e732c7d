package web_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session"
)

func storeTurn(t *testing.T, f *fixture, id, user, answer string) {
	t.Helper()
	err := f.store.Append(context.Background(), id, session.Turn{
		ID:       "turn-" + id,
		Messages: []llm.Message{llm.UserText(user), llm.AssistantText(answer)},
		Usage:    llm.Usage{InputTokens: 10, OutputTokens: 5},
		CostUSD:  0.25,
		Time:     time.Now(),
		Model:    "stored-model-7",
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRoutes(t *testing.T) {
	f := newFixture(t, llmtest.New())
	storeTurn(t, f, "s-1", "What is   the\nweather?", "Sunny.")
	tests := []struct {
		name, path string
		status     int
		want       []string // substrings of the body
	}{
		{"agents", "/api/agents", 200, []string{`"name":"helper"`, `"model":"scripted-1"`, `"sessions":true`, `"default":true`, `"name":"plain"`, `"sessions":false`}},
		{"sessions", "/api/sessions?agent=helper", 200, []string{`"id":"s-1"`, `"title":"What is the"`, `"turns":1`, `"tokens":15`, `"cost_usd":0.25`, `"model":"stored-model-7"`}},
		{"sessions of the default agent", "/api/sessions", 200, []string{`"id":"s-1"`}},
		{"sessions of an agent without a store", "/api/sessions?agent=plain", 200, []string{`"sessions":[]`}},
		{"sessions of an unknown agent", "/api/sessions?agent=nobody", 404, []string{`{"error":{"message":"no agent named \"nobody\""}}`}},
		{"one session", "/api/sessions/s-1?agent=helper", 200, []string{`"items":[{"type":"user","text":"What is   the\nweather?","turn":1},{"type":"text","text":"Sunny."}]`, `"turns":1`, `"model":"stored-model-7"`}},
		{"a missing session", "/api/sessions/s-2?agent=helper", 404, []string{`"no such session"`}},
		{"an invalid session id", "/api/sessions/a%20b", 400, []string{`"invalid session id"`}},
		{"no approvals", "/api/approvals", 200, []string{`{"approvals":[]}`}},
		{"an unknown route", "/api/nothing", 404, []string{`"error"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := f.do(t, context.Background(), "GET", tt.path, "", nil)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, b)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Fatalf("content type %q", ct)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("body lacks %s:\n%s", w, b)
				}
			}
		})
	}
}

func TestPage(t *testing.T) {
	f := newFixture(t, llmtest.New())
	tests := []struct{ path, ctype, want string }{
		{"/", "text/html", `<script type="module" src="js/app.js">`},
		{"/style.css", "text/css", "--accent"},
		{"/js/app.js", "text/javascript", "import"},
		{"/js/render.js", "text/javascript", "textContent"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp := f.do(t, context.Background(), "GET", tt.path, "", nil)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), tt.ctype) {
				t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe") {
				t.Fatalf("CSP %q", csp)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Fatal("no nosniff")
			}
			if !strings.Contains(string(b), tt.want) {
				t.Fatalf("body lacks %q", tt.want)
			}
		})
	}
	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/js/", 404},
		{"GET", "/nothing.js", 404},
		{"POST", "/", 405},
	} {
		req, _ := http.NewRequest(tt.method, f.srv.URL+tt.path, nil)
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, resp.StatusCode, tt.status)
		}
	}
	// The page never uses innerHTML or any other HTML sink, and loads
	// nothing from elsewhere.
	for _, p := range []string{"/", "/js/app.js", "/js/api.js", "/js/render.js", "/js/sessions.js", "/js/approvals.js", "/js/form.js", "/js/markdown.js", "/style.css"} {
		resp := f.do(t, context.Background(), "GET", p, "", nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "http://", "https://"} {
			if strings.Contains(string(b), bad) {
				t.Errorf("%s contains %q", p, bad)
			}
		}
	}
}

func TestDelete(t *testing.T) {
	f := newFixture(t, llmtest.New())
	storeTurn(t, f, "s-1", "hello", "hi")
	decode(t, f.do(t, context.Background(), "DELETE", "/api/sessions/s-1?agent=helper", "", nil), 200)
	if _, err := f.store.Load(context.Background(), "s-1"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("after delete, Load = %v", err)
	}
	decode(t, f.do(t, context.Background(), "DELETE", "/api/sessions/s-1?agent=helper", "", nil), 404)
	decode(t, f.do(t, context.Background(), "DELETE", "/api/sessions/s-1?agent=plain", "", nil), 404)
}

func TestCSRF(t *testing.T) {
	f := newFixture(t, llmtest.New())
	storeTurn(t, f, "s-1", "hello", "hi")
	tests := []struct {
		name    string
		method  string
		path    string
		headers map[string]string
		body    string
		status  int
	}{
		{"no CSRF header", "POST", "/api/chat", map[string]string{"Content-Type": "application/json"}, `{"message":"x"}`, 403},
		{"a wrong CSRF header", "POST", "/api/chat", map[string]string{web.CSRFHeader: "yes", "Content-Type": "application/json"}, `{"message":"x"}`, 403},
		{"a foreign origin", "POST", "/api/chat", map[string]string{web.CSRFHeader: "1", "Origin": "http://evil.example", "Content-Type": "application/json"}, `{"message":"x"}`, 403},
		{"a null origin", "POST", "/api/approvals/r/c", map[string]string{web.CSRFHeader: "1", "Origin": "null", "Content-Type": "application/json"}, `{"approved":true}`, 403},
		{"cross-site fetch metadata", "POST", "/api/chat", map[string]string{web.CSRFHeader: "1", "Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, `{"message":"x"}`, 403},
		{"a form content type", "POST", "/api/chat", map[string]string{web.CSRFHeader: "1", "Content-Type": "application/x-www-form-urlencoded"}, `message=x`, 415},
		{"text/plain", "POST", "/api/approvals/r/c", map[string]string{web.CSRFHeader: "1", "Content-Type": "text/plain"}, `{"approved":true}`, 415},
		{"no content type", "POST", "/api/chat", map[string]string{web.CSRFHeader: "1"}, `{"message":"x"}`, 415},
		{"a body too large", "POST", "/api/chat", map[string]string{web.CSRFHeader: "1", "Content-Type": "application/json"}, `{"message":"` + strings.Repeat("x", 5000) + `"}`, 413},
		{"invalid JSON", "POST", "/api/chat", map[string]string{web.CSRFHeader: "1", "Content-Type": "application/json"}, `{"message":`, 400},
		{"an empty message", "POST", "/api/chat", map[string]string{web.CSRFHeader: "1", "Content-Type": "application/json"}, `{"message":"  "}`, 400},
		{"an invalid session", "POST", "/api/chat", map[string]string{web.CSRFHeader: "1", "Content-Type": "application/json"}, `{"message":"x","session":"../x"}`, 400},
		{"an unknown agent", "POST", "/api/chat", map[string]string{web.CSRFHeader: "1", "Content-Type": "application/json"}, `{"message":"x","agent":"nobody"}`, 404},
		{"delete without the header", "DELETE", "/api/sessions/s-1", nil, "", 403},
		{"delete from a foreign origin", "DELETE", "/api/sessions/s-1", map[string]string{web.CSRFHeader: "1", "Origin": "http://evil.example"}, "", 403},
		{"approval without the header", "POST", "/api/approvals/r/c", map[string]string{"Content-Type": "application/json"}, `{"approved":true}`, 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, f.srv.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			v := decode(t, resp, tt.status)
			if e, ok := v["error"].(map[string]any); !ok || e["message"] == "" {
				t.Fatalf("error body %v", v)
			}
		})
	}
	if _, err := f.store.Load(context.Background(), "s-1"); err != nil {
		t.Fatalf("a refused delete deleted: %v", err)
	}
	if f.model.Calls() != 0 {
		t.Fatalf("a refused chat reached the model %d times", f.model.Calls())
	}
	// The same origin, spelled as the browser does, passes.
	resp := f.do(t, context.Background(), "DELETE", "/api/sessions/s-1", "", nil)
	decode(t, resp, 200)
}

// TestOrigins: Options.Origins admits a proxy's public origin; anything
// else foreign is refused.
func TestOrigins(t *testing.T) {
	f := newFixtureOpts(t, web.Options{Origins: []string{"https://Agents.Example.com/"}}, llmtest.New())
	for _, tt := range []struct {
		origin string
		status int
	}{
		{"https://agents.example.com", 404}, // admitted: then no such session
		{"https://agents.example.com.evil.example", 403},
		{"http://agents.example.com", 403},
		{f.srv.URL, 404},
		// Only starting with the server's own origin is another site.
		{f.srv.URL + ".evil.example", 403},
		{f.srv.URL + "0", 403},
		{strings.Replace(f.srv.URL, "http://", "https://", 1), 403},
	} {
		req, _ := http.NewRequest("DELETE", f.srv.URL+"/api/sessions/s-1", nil)
		req.Header.Set(web.CSRFHeader, "1")
		req.Header.Set("Origin", tt.origin)
		resp, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		decode(t, resp, tt.status)
	}
}

// TestTranscriptShapes: every kind of stored block reads back as an item
// the page can render, and nothing it must not show.
func TestTranscriptShapes(t *testing.T) {
	f := newFixture(t, llmtest.New())
	msgs := []llm.Message{
		llm.SystemText("secret instructions"),
		{Role: llm.RoleUser, Content: []llm.Block{llm.Text{Text: "look"}, llm.Image{URL: "https://example.com/a.png"}}},
		{Role: llm.RoleAssistant, Content: []llm.Block{
			llm.RedactedThinking{Data: "opaque"},
			llm.Thinking{Text: "hmm", Signature: "sig"},
			llmtest.Call("c1", "read", `{"p":1}`),
		}},
		llm.ToolResultText("c1", "no such file", true),
		{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult{ToolUseID: "c2", Content: []llm.Block{llm.Text{Text: "nested"}}}}},
		llm.AssistantText("<b>not html</b>"),
	}
	if err := f.store.Append(context.Background(), "s-1", session.Turn{ID: "t", Messages: msgs, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	resp := f.do(t, context.Background(), "GET", "/api/sessions/s-1", "", nil)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `"items":[{"type":"user","text":"look"},{"type":"user","text":"[image]"},{"type":"thinking","text":"hmm"},` +
		`{"type":"tool_call","id":"c1","name":"read","input":{"p":1}},{"type":"tool_result","text":"no such file","tool_call_id":"c1","is_error":true},` +
		`{"type":"tool_result","text":"nested","tool_call_id":"c2"},{"type":"text","text":"\u003cb\u003enot html\u003c/b\u003e"}]`
	if !strings.Contains(string(b), want) {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	for _, bad := range []string{"secret instructions", "opaque", "sig"} {
		if strings.Contains(string(b), bad) {
			t.Errorf("the transcript shows %q", bad)
		}
	}
}
