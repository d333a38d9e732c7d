package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

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
