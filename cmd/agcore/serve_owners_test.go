package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// ownerCall sends one request to an agcore serve as the holder of token, with
// the web page's CSRF header, and returns the status and body.
func ownerCall(t *testing.T, base, token, method, path string, body any) (int, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-Agcore-CSRF", "1")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(out)
}

// TestServeOwners runs agcore serve with two tokens and drives its web
// page's API, the Responses endpoint and A2A as two principals: each
// lists, reads, continues and deletes only its own sessions; the other's
// ids are answered as ids that do not exist.
func TestServeOwners(t *testing.T) {
	t.Parallel()
	provider := echoProvider(t)
	c := newCLI(t)
	c.env["AGCORE_PROVIDER"] = "compatible"
	c.env["OPENAI_BASE_URL"] = provider.URL + "/v1"
	c.env["AGCORE_MODEL"] = "local-model"
	c.env["AGCORE_SERVE_TOKENS"] = "alice=alice-secret,bob=bob-secret"
	base, _, _ := c.startServe(t, "--store", "memory:")
	const alice, bob = "alice-secret", "bob-secret"

	// Alice: a Responses conversation and a web chat.
	st, body := ownerCall(t, base, alice, "POST", "/v1/responses", map[string]any{"model": "agcore", "input": "ALICESECRET one"})
	if st != 200 {
		t.Fatalf("alice's response: %d %s", st, body)
	}
	var r struct{ ID string }
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	st, body = ownerCall(t, base, alice, "POST", "/api/chat", map[string]any{"message": "ALICESECRET web"})
	if st != 200 || !strings.Contains(body, "event: finish") {
		t.Fatalf("alice's web chat: %d %s", st, body)
	}
	webSession := ""
	for line := range strings.SplitSeq(body, "\n") {
		var ev struct{ Type, Session string }
		if d, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(d), &ev) == nil && ev.Type == "session" {
			webSession = ev.Session
		}
	}
	if webSession == "" {
		t.Fatalf("no session event: %s", body)
	}

	// Alice lists both, each with its own model and title.
	st, body = ownerCall(t, base, alice, "GET", "/api/sessions", nil)
	var list struct {
		Sessions []struct{ ID, Title, Model string } `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || st != 200 || len(list.Sessions) != 2 {
		t.Fatalf("alice's sessions: %d %s", st, body)
	}
	for _, s := range list.Sessions {
		if s.Model == "" || !strings.HasPrefix(s.Title, "ALICESECRET") {
			t.Errorf("a session listed without its model or title: %+v", s)
		}
	}

	// Bob reaches none of them, and learns nothing of them.
	for _, tt := range []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"list", "GET", "/api/sessions", nil, 200},
		{"read", "GET", "/api/sessions/" + webSession, nil, 404},
		{"continue on the web", "POST", "/api/chat", map[string]any{"message": "BOBTEXT", "session": webSession}, 404},
		{"delete", "DELETE", "/api/sessions/" + webSession, nil, 404},
		{"continue a response", "POST", "/v1/responses", map[string]any{"model": "agcore", "input": "BOBTEXT", "previous_response_id": r.ID}, 404},
		{"read a response", "GET", "/v1/responses/" + r.ID, nil, 404},
		{"her context id over A2A", "POST", "/a2a/agcore", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": map[string]any{
			"message": map[string]any{"kind": "message", "messageId": "m-1", "role": "user", "contextId": webSession,
				"parts": []any{map[string]any{"kind": "text", "text": "BOBTEXT"}}}}}, 200},
	} {
		st, body := ownerCall(t, base, bob, tt.method, tt.path, tt.body)
		if st != tt.status || strings.Contains(body, "ALICESECRET") {
			t.Errorf("bob's %s: %d (want %d) %s", tt.name, st, tt.status, body)
		}
		if tt.name == "list" && strings.Contains(body, webSession) {
			t.Errorf("bob lists alice's session: %s", body)
		}
	}
	st, body = ownerCall(t, base, bob, "GET", "/api/sessions", nil)
	if err := json.Unmarshal([]byte(body), &list); err != nil || st != 200 || len(list.Sessions) != 1 || list.Sessions[0].ID == webSession {
		t.Fatalf("bob's sessions after his A2A task: %d %s", st, body)
	}

	// Alice's are intact, and hers to delete.
	if st, body = ownerCall(t, base, alice, "GET", "/api/sessions/"+webSession, nil); st != 200 || !strings.Contains(body, `"turns":1`) {
		t.Fatalf("alice reads her session: %d %s", st, body)
	}
	if st, body = ownerCall(t, base, alice, "DELETE", "/api/sessions/"+webSession, nil); st != 200 {
		t.Fatalf("alice deletes her session: %d %s", st, body)
	}
}
