package otelagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/observe"
	"github.com/agcore/agcore/otelagent"
	"github.com/agcore/agcore/provider/openai"
	"github.com/agcore/agcore/tool"
)

const canaryKey = "sk-canary-7f3a9c1e5b2d4608aa"

// requestLog records what a test server received.
type requestLog struct {
	mu          sync.Mutex
	traceparent []string
	auth        []string
}

func (l *requestLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.traceparent = append(l.traceparent, r.Header.Get("Traceparent"))
	l.auth = append(l.auth, r.Header.Get("Authorization"))
}

func (l *requestLog) parents() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.traceparent...)
}

// fakeOpenAI answers Chat Completions requests with each of answers in
// turn: an HTTP status and body (a stream of chunks for 200).
func fakeOpenAI(t *testing.T, log *requestLog, answers ...[2]string) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		log.add(r)
		mu.Lock()
		a := answers[min(n, len(answers)-1)]
		n++
		mu.Unlock()
		if a[0] != "200" {
			w.Header().Set("Content-Type", "application/json")
			var code int
			fmt.Sscan(a[0], &code)
			w.WriteHeader(code)
			io.WriteString(w, a[1])
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, a[1])
	}))
	t.Cleanup(srv.Close)
	return srv
}

// textStream is a Chat Completions stream answering text.
func textStream(text string) string {
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{"role":"assistant","content":` + fmt.Sprintf("%q", text) + `},"finish_reason":null}]}` + "\n\n" +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","model":"gpt-test","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}` + "\n\n" +
		"data: [DONE]\n\n"
}

// parentOf returns the trace id and parent span id of a traceparent.
func parentOf(tp string) (trace, span string) {
	f := strings.Split(tp, "-")
	if len(f) != 4 {
		return "", ""
	}
	return f[1], f[2]
}

// wantParent checks that traceparent names span as the parent.
func wantParent(t *testing.T, traceparent string, span sdktrace.ReadOnlySpan) {
	t.Helper()
	tr, sp := parentOf(traceparent)
	if tr != span.SpanContext().TraceID().String() || sp != span.SpanContext().SpanID().String() {
		t.Errorf("traceparent %q does not name span %q (%s, %s)", traceparent, span.Name(),
			span.SpanContext().TraceID(), span.SpanContext().SpanID())
	}
}

// TestProviderRequestsCarryTheTraceContext: every HTTP request the provider
// adapter sends for a model call, each retry's included, carries the
// traceparent of that call's chat span.
func TestProviderRequestsCarryTheTraceContext(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})
	log := &requestLog{}
	srv := fakeOpenAI(t, log, [2]string{"503", `{"error":{"message":"overloaded","type":"server_error"}}`}, [2]string{"200", textStream("hello")})
	model := openai.New(openai.WithAPIKey(canaryKey), openai.WithBaseURL(srv.URL), openai.WithModel("gpt-test"))
	a := newAgent(t, model, agent.Config{Name: "p", Telemetry: r.tel, Clock: &stepClock{}})
	if _, err := a.Run(context.Background(), []llm.Message{llm.UserText("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	chat := one(t, r.ended(), "chat gpt-test")
	got := log.parents()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	for _, tp := range got {
		wantParent(t, tp, chat)
	}
}

// TestAPIKeysNeverAppear: with every content attribute opted in, through a
// retried call whose failed attempt's error echoes the key, a successful
// answer, and a run that fails with an error echoing the key, the key is
// in no span, event, status, attribute or metric.
func TestAPIKeysNeverAppear(t *testing.T) {
	r := newRecorded(t, otelagent.Config{RecordContent: true})
	echo := `{"error":{"message":"Incorrect API key provided: ` + canaryKey + `","type":"invalid_request_error","code":"` + canaryKey + `"}}`
	log := &requestLog{}
	srv := fakeOpenAI(t, log,
		[2]string{"500", echo},
		[2]string{"200", textStream("hello")},
		[2]string{"401", echo},
	)
	model := openai.New(openai.WithAPIKey(canaryKey), openai.WithBaseURL(srv.URL), openai.WithModel("gpt-test"))
	a := newAgent(t, model, agent.Config{Name: "k", Instructions: "system text", Telemetry: r.tel, Clock: &stepClock{}})
	if _, err := a.Run(context.Background(), []llm.Message{llm.UserText("first")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(context.Background(), []llm.Message{llm.UserText("second")}, nil); err == nil {
		t.Fatal("the 401 did not fail the run")
	}
	if log.auth[0] != "Bearer "+canaryKey {
		t.Fatalf("the key was not sent: %q", log.auth[0])
	}
	spans := r.ended()
	if len(find(spans, "chat gpt-test")) != 2 {
		t.Fatalf("spans %q", names(spans))
	}
	dump, err := json.Marshal(tracetest.SpanStubsFromReadOnlySpans(spans))
	if err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	mdump, err := json.Marshal(rm)
	if err != nil {
		t.Fatal(err)
	}
	for what, data := range map[string][]byte{"spans": dump, "metrics": mdump} {
		if strings.Contains(string(data), canaryKey) || strings.Contains(string(data), "canary") {
			t.Errorf("the API key appears in the %s", what)
		}
	}
	// The content was recorded, and the echoed errors were (redacted).
	for _, want := range []string{"first", "second", "hello", "system text", "Incorrect API key provided", "xxxxx"} {
		if !strings.Contains(string(dump), want) {
			t.Errorf("the spans do not hold %q", want)
		}
	}
}

// fetchTool calls url over HTTP with the trace context of its call.
type fetchTool struct{ url string }

func (f fetchTool) Name() string                { return "fetch" }
func (f fetchTool) Description() string         { return "fetches" }
func (f fetchTool) Parameters() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (f fetchTool) Invoke(ctx context.Context, _ json.RawMessage) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	if err != nil {
		return "", err
	}
	observe.Inject(ctx, req.Header.Set)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestToolCallsCarryTheTraceContext: an MCP tool call carries the
// traceparent of its execute_tool span in _meta and in its HTTP request,
// and a tool that calls a service with observe.Inject joins the trace
// under its execute_tool span.
func TestToolCallsCarryTheTraceContext(t *testing.T) {
	r := newRecorded(t, otelagent.Config{})

	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "meta", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		tp, _ := req.Params.Meta["traceparent"].(string)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: tp}}}, nil
	})
	mcpLog := &requestLog{}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	mcpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Traceparent") != "" {
			mcpLog.add(req)
		}
		h.ServeHTTP(w, req)
	}))
	defer mcpSrv.Close()
	ctx := context.Background()
	client, err := mcp.Connect(ctx, mcp.Server{Name: "srv", URL: mcpSrv.URL, HTTPClient: mcpSrv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	svcLog := &requestLog{}
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		svcLog.add(req)
		io.WriteString(w, "fetched")
	}))
	defer svc.Close()

	model := llmtest.New(
		llmtest.Reply(llmtest.Call("c1", "mcp__srv__meta", `{}`), llmtest.Call("c2", "fetch", `{}`)),
		llmtest.Text("done"),
	).WithInfo(priced).Verify(t)
	tools := append(client.Tools(), fetchTool{svc.URL})
	a := newAgent(t, model, agent.Config{Name: "t", Tools: tools, Telemetry: r.tel})
	resp, err := a.Run(ctx, []llm.Message{llm.UserText("go")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	spans := r.ended()
	mcpSpan, fetchSpan := one(t, spans, "execute_tool mcp__srv__meta"), one(t, spans, "execute_tool fetch")
	childOf(t, mcpSpan, one(t, spans, "invoke_agent t"))
	metaTP := resp.Messages[1].Text() // the MCP tool's result: the _meta traceparent it received
	wantParent(t, metaTP, mcpSpan)
	if got := mcpLog.parents(); len(got) != 1 {
		t.Errorf("MCP HTTP requests with a traceparent: %q", got)
	} else {
		wantParent(t, got[0], mcpSpan)
	}
	if got := svcLog.parents(); len(got) != 1 {
		t.Errorf("service requests: %q", got)
	} else {
		wantParent(t, got[0], fetchSpan)
	}
}

var _ tool.Tool = fetchTool{}
