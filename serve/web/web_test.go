package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/budget"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// principalHeader stands in for package serve's auth layer in these tests.
const principalHeader = "X-Test-Principal"

type fixture struct {
	srv    *httptest.Server
	store  *memstore.Store
	broker *approval.Broker
	model  *llmtest.Model
	agent  *agent.Agent  // the agent "helper"
	done   chan struct{} // one value each time a request's handler returns
	quota  budget.Quota  // when set, every request's principal quota (as agcore serve sets it)
}

func newFixture(t *testing.T, model *llmtest.Model, tools ...tool.Tool) *fixture {
	t.Helper()
	return newFixtureOpts(t, web.Options{MaxBodyBytes: 4096}, model, tools...)
}

func newFixtureOpts(t *testing.T, opts web.Options, model *llmtest.Model, tools ...tool.Tool) *fixture {
	t.Helper()
	f := &fixture{store: memstore.New(), broker: &approval.Broker{}, model: model, done: make(chan struct{}, 100)}
	a, err := agent.New(model, agent.Config{Name: "helper", Tools: tools, Store: f.store, Approver: f.broker,
		Retry: middleware.RetryConfig{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	f.agent = a
	other, err := agent.New(llmtest.New(), agent.Config{Name: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(
		host.Agent{Name: "helper", Description: "helps", Agent: a, Store: f.store, Model: "scripted-1"},
		host.Agent{Name: "plain", Agent: other},
	)
	if err != nil {
		t.Fatal(err)
	}
	h, err := web.New(set, f.broker, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { f.done <- struct{}{} }()
		if p := r.Header.Get(principalHeader); p != "" {
			r = r.WithContext(host.WithPrincipal(r.Context(), p))
		}
		if f.quota != nil {
			r = r.WithContext(budget.WithQuota(r.Context(), f.quota))
		}
		h.ServeHTTP(w, r)
	}))
	testwait.CloseOnCleanup(t, f.srv)
	return f
}

// do sends a request the way the page does (CSRF header, JSON body).
func (f *fixture) do(t *testing.T, ctx context.Context, method, path, principal string, body any) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, f.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method != http.MethodGet {
		req.Header.Set(web.CSRFHeader, "1")
		req.Header.Set("Origin", f.srv.URL)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if principal != "" {
		req.Header.Set(principalHeader, principal)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// getJSON decodes the response into a generic value, checking its status.
func decode(t *testing.T, resp *http.Response, status int) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, b)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return v
}

// event is the test's view of one chat event.
type event struct {
	Type         string          `json:"type"`
	Session      string          `json:"session"`
	Run          string          `json:"run"`
	Text         string          `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolCallID   string          `json:"tool_call_id"`
	IsError      bool            `json:"is_error"`
	Usage        *llm.Usage      `json:"usage"`
	CostUSD      *float64        `json:"cost_usd"`
	FinishReason string          `json:"finish_reason"`
	SessionTurns int             `json:"session_turns"`
	Budget       map[string]any  `json:"budget"`
	Message      string          `json:"message"`
	Agent        string          `json:"agent"`
	From         string          `json:"from"`
	Sub          *event          `json:"sub"`
}

// events reads a chat stream, sending each event on the returned channel,
// which is closed at the stream's end.
func events(t *testing.T, resp *http.Response) <-chan event {
	t.Helper()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("chat answered %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	ch := make(chan event, 1000)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				var ev event
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev); err != nil || ev.Type != name {
					ev = event{Type: "bad", Message: line}
				}
				ch <- ev
			}
		}
	}()
	return ch
}

// collect reads the stream's events to its end (at most testwait.Timeout).
func collect(t *testing.T, ch <-chan event) []event {
	t.Helper()
	var out []event
	timeout := time.After(testwait.Timeout)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatalf("the stream did not end within %s; its events: %+v", testwait.Timeout, out)
		}
	}
}

// kinds returns the event types with runs of one type collapsed.
func kinds(evs []event) string {
	var out []string
	for _, ev := range evs {
		if len(out) == 0 || out[len(out)-1] != ev.Type {
			out = append(out, ev.Type)
		}
	}
	return strings.Join(out, " ")
}

func until(t *testing.T, ch <-chan event, typ string) event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before a %s event", typ)
			}
			if ev.Type == typ {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event within 10s", typ)
		}
	}
}
