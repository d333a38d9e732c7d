package a2aserve_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"go.uber.org/goleak"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// principalHeader names the principal of a test request; the test server's
// middleware plays the part of serve's authentication layer.
const principalHeader = "X-Test-Principal"

// fixture is a server with one agent ("helper") over a scripted model.
type fixture struct {
	t      *testing.T
	model  *llmtest.Model
	store  *memstore.Store
	broker *approval.Broker
	srv    *httptest.Server
	ran    atomic.Int32 // calls of the delete_file tool that ran
}

func newFixture(t *testing.T, steps ...llmtest.Step) *fixture {
	t.Helper()
	return newFixtureOn(t, memstore.New(), &approval.Broker{}, steps...)
}

// newFixtureOn is newFixture over a given store and broker (a replica of
// a server sharing them).
func newFixtureOn(t *testing.T, store *memstore.Store, broker *approval.Broker, steps ...llmtest.Step) *fixture {
	t.Helper()
	return newFixtureWith(t, store, broker, a2aserve.Options{}, steps...)
}

// newFixtureWith is newFixtureOn with the handler's options (its Logger
// discards).
func newFixtureWith(t *testing.T, store *memstore.Store, broker *approval.Broker, opts a2aserve.Options, steps ...llmtest.Step) *fixture {
	t.Helper()
	f := &fixture{t: t, model: llmtest.New(steps...).Verify(t), store: store, broker: broker}
	del := tool.MustFunc("delete_file", "Delete a file.", func(_ context.Context, in struct {
		Path string `json:"path"`
	}) (string, error) {
		f.ran.Add(1)
		return "deleted " + in.Path, nil
	}, tool.WithApproval())
	a, err := agent.New(f.model, agent.Config{Name: "helper", Store: f.store, Approver: f.broker, Tools: []tool.Tool{del}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "helper", Description: "Helps.", Agent: a, Store: f.store, Model: "scripted"})
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	h, err := a2aserve.New(set, f.broker, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Like serve's layers, wrap the writer: Flush is reached only
		// through Unwrap.
		h.ServeHTTP(wrapped{w}, r.WithContext(host.WithPrincipal(r.Context(), r.Header.Get(principalHeader))))
	}))
	testwait.CloseOnCleanup(t, f.srv)
	return f
}

// bounded is a context for a test's requests: it ends after
// testwait.Timeout, so a request the server never answers fails the test
// instead of hanging it.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	t.Cleanup(cancel)
	return ctx
}

// wrapped hides its writer's methods but Unwrap, as a middleware's writer.
type wrapped struct{ w http.ResponseWriter }

func (w wrapped) Header() http.Header         { return w.w.Header() }
func (w wrapped) Write(b []byte) (int, error) { return w.w.Write(b) }
func (w wrapped) WriteHeader(code int)        { w.w.WriteHeader(code) }
func (w wrapped) Unwrap() http.ResponseWriter { return w.w }

// principalTransport sends every request as principal.
type principalTransport struct {
	principal string
	base      *http.Transport
}

func (p principalTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(principalHeader, p.principal)
	return p.base.RoundTrip(r)
}

// client returns an SDK client of the helper agent acting as principal,
// made from the agent card.
func (f *fixture) client(principal string) *a2aclient.Client {
	f.t.Helper()
	base := &http.Transport{}
	f.t.Cleanup(base.CloseIdleConnections)
	hc := &http.Client{Transport: principalTransport{principal, base}}
	card, err := agentcard.NewResolver(hc).Resolve(bounded(f.t), f.srv.URL+"/a2a/helper")
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(bounded(f.t), card, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { c.Destroy() })
	return c
}

func userText(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})
}

// send sends msg and returns the task it ends in.
func send(t *testing.T, c *a2aclient.Client, msg *a2a.Message) *a2a.Task {
	t.Helper()
	res, err := c.SendMessage(bounded(t), &a2a.MessageSendParams{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("result is %T, want a task", res)
	}
	return task
}

// answer returns the text of the task's answer artifact.
func answer(task *a2a.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			if tp, ok := p.(a2a.TextPart); ok {
				b.WriteString(tp.Text)
			}
		}
	}
	return b.String()
}

// sessionLen returns the length of the session of principal's context
// contextID: the context id in the principal's namespace.
func (f *fixture) sessionLen(principal, contextID string) int {
	id := a2aserve.SessionID(host.SessionName(host.WithPrincipal(context.Background(), principal), contextID))
	s, err := f.store.Load(context.Background(), id)
	if errors.Is(err, session.ErrNotFound) {
		return 0
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return len(s.Messages)
}

func TestAgentCard(t *testing.T) {
	a, err := agent.New(llmtest.New(), agent.Config{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "first", Description: "The first.", Agent: a}, host.Agent{Name: "second", Agent: a})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		opts    a2aserve.Options
		path    string
		want    string // the card's name
		wantURL string // "" for the test server's URL + "/a2a/" + want
		bearer  bool
		status  int
	}{
		{name: "default", path: "/.well-known/agent-card.json", want: "first", status: 200},
		{name: "by name", path: "/a2a/second/.well-known/agent-card.json", want: "second", status: 200},
		{name: "unknown", path: "/a2a/third/.well-known/agent-card.json", status: 404},
		{name: "base URL and bearer", opts: a2aserve.Options{BaseURL: "https://agents.example.com/", BearerAuth: true},
			path: "/a2a/first/.well-known/agent-card.json", want: "first", wantURL: "https://agents.example.com/a2a/first", bearer: true, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Logger = slog.New(slog.DiscardHandler)
			h, err := a2aserve.New(set, nil, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer testwait.Close(t, srv)
			resp, err := srv.Client().Get(srv.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if tt.status != 200 {
				return
			}
			var card a2a.AgentCard
			if err := json.Unmarshal(body, &card); err != nil {
				t.Fatal(err)
			}
			wantURL := tt.wantURL
			if wantURL == "" {
				wantURL = srv.URL + "/a2a/" + tt.want
			}
			if card.Name != tt.want || card.URL != wantURL || !card.Capabilities.Streaming ||
				card.PreferredTransport != a2a.TransportProtocolJSONRPC || len(card.Skills) != 1 ||
				card.Description == "" || card.Version == "" || card.ProtocolVersion != a2aserve.ProtocolVersion {
				t.Fatalf("card = %s", body)
			}
			if _, ok := card.SecuritySchemes["bearer"]; ok != tt.bearer || (len(card.Security) == 1) != tt.bearer {
				t.Fatalf("bearer scheme = %v, want %v: %s", ok, tt.bearer, body)
			}
		})
	}
	if _, err := a2aserve.New(set, nil, a2aserve.Options{BaseURL: "agents.example.com"}); err == nil {
		t.Fatal("a BaseURL without a scheme was accepted")
	}
	if _, err := a2aserve.New(nil, nil, a2aserve.Options{}); err == nil {
		t.Fatal("a nil set was accepted")
	}
}

func TestSendAndGet(t *testing.T) {
	f := newFixture(t, llmtest.Text("Hello there.").WithUsage(llm.Usage{InputTokens: 12, OutputTokens: 3}))
	c := f.client("alice")
	task := send(t, c, userText("hi"))
	if task.Status.State != a2a.TaskStateCompleted || answer(task) != "Hello there." {
		t.Fatalf("task = %s / %q", task.Status.State, answer(task))
	}
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 {
		t.Fatalf("artifacts = %+v, want one with the answer alone", task.Artifacts)
	}
	meta, _ := task.Metadata[a2aserve.MetadataKey].(map[string]any)
	usage, _ := meta["usage"].(map[string]any)
	if usage["input_tokens"] != float64(12) || usage["output_tokens"] != float64(3) || meta["session_id"] != "alice."+task.ContextID {
		t.Fatalf("task metadata = %v", task.Metadata)
	}
	got, err := c.GetTask(bounded(t), &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateCompleted || answer(got) != "Hello there." {
		t.Fatalf("tasks/get = %s / %q", got.Status.State, answer(got))
	}
	if n := f.sessionLen("alice", task.ContextID); n != 2 {
		t.Fatalf("the session holds %d messages, want 2", n)
	}
	if _, err := c.GetTask(bounded(t), &a2a.TaskQueryParams{ID: "nope"}); err == nil {
		t.Fatal("tasks/get of an unknown task succeeded")
	}
}

func TestStream(t *testing.T) {
	f := newFixture(t, llmtest.Text("A fairly long answer, streamed in pieces."))
	f.model.WithChunkSize(4)
	c := f.client("alice")
	var (
		states   []a2a.TaskState
		streamed strings.Builder
		final    *a2a.Artifact
		taskID   a2a.TaskID
	)
	for ev, err := range c.SendStreamingMessage(bounded(t), &a2a.MessageSendParams{Message: userText("tell me")}) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, ev.Status.State)
			taskID = ev.TaskID
		case *a2a.TaskArtifactUpdateEvent:
			if ev.LastChunk {
				final = ev.Artifact
				continue
			}
			for _, p := range ev.Artifact.Parts {
				streamed.WriteString(p.(a2a.TextPart).Text)
			}
		}
	}
	if len(states) < 2 || states[len(states)-1] != a2a.TaskStateCompleted {
		t.Fatalf("states = %v, want them to end in completed", states)
	}
	if streamed.String() != "A fairly long answer, streamed in pieces." {
		t.Fatalf("streamed %q", streamed.String())
	}
	if final == nil || len(final.Parts) != 1 || final.Parts[0].(a2a.TextPart).Text != streamed.String() || final.Metadata[a2aserve.MetadataKey] == nil {
		t.Fatalf("final artifact = %+v", final)
	}
	got, err := c.GetTask(bounded(t), &a2a.TaskQueryParams{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	if answer(got) != streamed.String() || len(got.Artifacts[0].Parts) != 1 {
		t.Fatalf("stored artifacts = %+v", got.Artifacts)
	}
}

// TestCancel cancels a turn whose model hangs, and one waiting for
// approval: both end canceled and store nothing.
func TestCancel(t *testing.T) {
	for _, tt := range []struct {
		name  string
		steps []llmtest.Step
		wait  a2a.TaskState // the state to reach before cancelling
	}{
		{"running", []llmtest.Step{llmtest.Hang()}, a2a.TaskStateWorking},
		{"waiting for approval", []llmtest.Step{llmtest.Reply(llmtest.Call("c1", "delete_file", `{"path":"x"}`))}, a2a.TaskStateInputRequired},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.steps...)
			c := f.client("alice")
			var taskID a2a.TaskID
			var contextID string
			events := c.SendStreamingMessage(bounded(t), &a2a.MessageSendParams{Message: userText("work")})
			for ev, err := range events {
				if err != nil {
					t.Fatal(err)
				}
				if st, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && st.Status.State == tt.wait {
					taskID, contextID = st.TaskID, st.ContextID
					break
				}
			}
			if taskID == "" {
				t.Fatalf("never reached %s", tt.wait)
			}
			if tt.wait == a2a.TaskStateWorking {
				waitFor(t, func() bool { return f.model.Calls() == 1 }) // the model hangs now
			}
			task, err := c.CancelTask(bounded(t), &a2a.TaskIDParams{ID: taskID})
			if err != nil {
				t.Fatal(err)
			}
			if task.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("cancel answered %s", task.Status.State)
			}
			got, err := c.GetTask(bounded(t), &a2a.TaskQueryParams{ID: taskID})
			if err != nil || got.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("tasks/get = %v, %v", got, err)
			}
			if n := f.sessionLen("alice", contextID); n != 0 {
				t.Fatalf("a cancelled turn stored %d messages", n)
			}
			if f.ran.Load() != 0 || len(f.broker.Pending(nil)) != 0 {
				t.Fatalf("tool ran %d times; pending %v", f.ran.Load(), f.broker.Pending(nil))
			}
			if _, err := c.SendMessage(bounded(t), &a2a.MessageSendParams{Message: followUp(taskID, a2a.TextPart{Text: "approve"})}); err == nil {
				t.Fatal("a message to a canceled task was accepted")
			}
		})
	}
}

// waitFor polls cond for up to thirty seconds (a race-detector run on a
// loaded 2-core machine took more than ten).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition never met")
}

// followUp returns a user message continuing task id.
func followUp(id a2a.TaskID, parts ...a2a.Part) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	m.TaskID = id
	return m
}

// TestRequestLimits: an unknown agent is 404; a body over MaxBodyBytes is
// refused as a parse error.
func TestRequestLimits(t *testing.T) {
	a, err := agent.New(llmtest.New(), agent.Config{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	set, _ := host.NewSet(host.Agent{Name: "a", Agent: a})
	h, err := a2aserve.New(set, nil, a2aserve.Options{MaxBodyBytes: 1024, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer testwait.Close(t, srv)
	post := func(path, body string) (int, string) {
		resp, err := srv.Client().Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := post("/a2a/nobody", `{}`); code != http.StatusNotFound {
		t.Fatalf("unknown agent: %d", code)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"` + strings.Repeat("x", 2048) + `"}]}}}`
	if _, body := post("/a2a/a", big); !strings.Contains(body, "-32700") {
		t.Fatalf("an oversized body: %s", body)
	}
}
