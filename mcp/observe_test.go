package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/observe"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const testTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

type fixedObserver struct{}

func (fixedObserver) Start(ctx context.Context, _ observe.Phase) (context.Context, observe.Span) {
	return observe.Start(context.Background(), "")
}

func (fixedObserver) Inject(_ context.Context, set func(k, v string)) {
	set("traceparent", testTraceparent)
}

// TestACallCarriesTheTraceContext: a tool call made under a traced context
// carries its traceparent in _meta, and over HTTP as a header too; an
// untraced call carries neither.
func TestACallCarriesTheTraceContext(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "meta", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		tp, _ := req.Params.Meta["traceparent"].(string)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "meta:" + tp}}}, nil
	})
	var mu sync.Mutex
	var headers []string // the traceparent header of each POST
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			headers = append(headers, r.Header.Get("Traceparent"))
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	c, err := Connect(startTimeout(t), Server{URL: ts.URL + "/mcp", HTTPClient: ts.Client()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	meta := toolByName(t, c, "mcp__http__meta")
	mu.Lock()
	headers = nil
	mu.Unlock()

	out, err := meta.Invoke(observe.With(context.Background(), fixedObserver{}), nil)
	if err != nil || out != "meta:"+testTraceparent {
		t.Errorf("traced call: %q, %v", out, err)
	}
	mu.Lock()
	if len(headers) != 1 || headers[0] != testTraceparent {
		t.Errorf("the traced call's HTTP requests carried traceparent %q", headers)
	}
	headers = nil
	mu.Unlock()

	out, err = meta.Invoke(context.Background(), nil)
	if err != nil || out != "meta:" {
		t.Errorf("untraced call: %q, %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(headers) != 1 || headers[0] != "" {
		t.Errorf("the untraced call's HTTP requests carried traceparent %q", headers)
	}
}

// eventObserver records the events of its contexts by the call each
// context belongs to.
type eventObserver struct {
	fixedObserver
	call   string
	mu     *sync.Mutex
	events *[]string
}

func (o eventObserver) AddEvent(_ context.Context, name string, attrs map[string]any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	*o.events = append(*o.events, fmt.Sprintf("%s %s %v %v %v %v", o.call, name, attrs[observe.AttrMCPTool], attrs[observe.AttrMCPLevel], attrs[observe.AttrMCPLogger], attrs[observe.AttrMCPMessage]))
}

// TestALogMessageIsAnEventOnEachCallInFlight: a log message belongs to no
// request, so it goes on the span of each call of the server in flight,
// the client's secrets scrubbed; with no call in flight it goes nowhere.
func TestALogMessageIsAnEventOnEachCallInFlight(t *testing.T) {
	c := &Client{name: "srv", secrets: []string{"s3cret"}}
	opts := c.clientOptions(&Server{})
	var mu sync.Mutex
	var events []string
	log := func() {
		opts.LoggingMessageHandler(context.Background(), &sdk.LoggingMessageRequest{Params: &sdk.LoggingMessageParams{Level: "warning", Logger: "db", Data: "slow query with key s3cret"}})
	}
	log()
	_, done1 := c.calls.start(observe.With(context.Background(), eventObserver{call: "A", mu: &mu, events: &events}), "query", time.Minute, func() {})
	_, done2 := c.calls.start(observe.With(context.Background(), eventObserver{call: "B", mu: &mu, events: &events}), "scan", time.Minute, func() {})
	_, done3 := c.calls.start(context.Background(), "untraced", time.Minute, func() {})
	log()
	done1()
	done2()
	done3()
	log()
	slices.Sort(events)
	want := []string{
		"A agcore.mcp.log query warning db slow query with key xxxxx",
		"B agcore.mcp.log scan warning db slow query with key xxxxx",
	}
	if !slices.Equal(events, want) {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
}
