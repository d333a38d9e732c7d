package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// TestMain fails the package when a goroutine outlives its tests. An A2A
// execution the SDK is still finishing (saving a large task) may outlive
// the last test by seconds on a loaded machine under the race detector:
// it is given up to thirty seconds to end before it counts as a leak.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		err := goleak.Find()
		for deadline := time.Now().Add(30 * time.Second); err != nil && time.Now().Before(deadline); err = goleak.Find() {
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// model is an llm.Model whose calls are answered by fn (nil: echo).
type model struct {
	fn func(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error]
}

func (m *model) Info() llm.ModelInfo { return llm.ModelInfo{Name: "fake"} }

func (m *model) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Collect(m.Stream(ctx, req))
}

func (m *model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	if m.fn != nil {
		return m.fn(ctx, req)
	}
	return llm.StreamOf(echo(req))
}

// echo answers "echo: " and the last user message's text, with a usage.
func echo(req *llm.Request) *llm.Response {
	last := ""
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			last = m.Text()
		}
	}
	return &llm.Response{Message: llm.AssistantText("echo: " + last), FinishReason: llm.FinishStop,
		Usage: llm.Usage{InputTokens: 10, OutputTokens: 3}}
}

// env is a server under test: its agents share a memory store and a broker.
type env struct {
	t      *testing.T
	srv    *httptest.Server
	h      *serve.Handler
	store  *memstore.Store
	broker *approval.Broker
}

type agentSpec struct {
	name  string
	model llm.Model
	tools []tool.Tool
	cfg   func(*agent.Config)
}

func newEnv(t *testing.T, opts serve.Options, specs ...agentSpec) *env {
	t.Helper()
	e := &env{t: t, store: memstore.New(), broker: &approval.Broker{}}
	if len(specs) == 0 {
		specs = []agentSpec{{name: "echo", model: &model{}}}
	}
	var agents []host.Agent
	for _, s := range specs {
		cfg := agent.Config{Name: s.name, Tools: s.tools, Store: e.store, Approver: e.broker,
			Retry: middleware.RetryConfig{MaxAttempts: 1}, Compaction: nil}
		if s.cfg != nil {
			s.cfg(&cfg)
		}
		a, err := agent.New(s.model, cfg)
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, host.Agent{Name: s.name, Agent: a, Store: e.store})
	}
	set, err := host.NewSet(agents...)
	if err != nil {
		t.Fatal(err)
	}
	opts.Agents, opts.Broker = set, e.broker
	e.h, err = serve.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(e.h)
	testwait.CloseOnCleanup(t, e.srv)
	return e
}

// do sends a request with an optional JSON body and headers ("Key: value").
func (e *env) do(method, path string, body any, headers ...string) *http.Response {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ": ")
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp
}

// decode reads resp's JSON body into a map and closes it.
func decode(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("status %d: body is not JSON: %v", resp.StatusCode, err)
	}
	return m
}

// events reads a server-sent event stream: each data payload, with its
// event name.
type event struct {
	name string
	data string
}

func readEvents(t *testing.T, resp *http.Response) []event {
	t.Helper()
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d, content type %q: %s", resp.StatusCode, ct, body)
	}
	var out []event
	var name string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out = append(out, event{name: name, data: strings.TrimPrefix(line, "data: ")})
			name = ""
		}
	}
	return out
}

func jsonOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON: %s", s)
	}
	return m
}

// errCode returns the error object's code and type of an error body.
func errCode(t *testing.T, resp *http.Response) (code, typ string) {
	t.Helper()
	m := decode(t, resp)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object: %v", m)
	}
	if _, ok := e["message"].(string); !ok {
		t.Fatalf("error without a message: %v", e)
	}
	for _, k := range []string{"param", "code", "type"} {
		if _, ok := e[k]; !ok {
			t.Fatalf("error without %q: %v", k, e)
		}
	}
	c, _ := e["code"].(string)
	ty, _ := e["type"].(string)
	return c, ty
}

func (e *env) session(id string) *session.Session {
	e.t.Helper()
	s, err := e.store.Load(context.Background(), id)
	if err != nil {
		e.t.Fatalf("loading %s: %v", id, err)
	}
	return s
}

func sessionListAll() session.ListOptions { return session.ListOptions{Limit: 1000} }
