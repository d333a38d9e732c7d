package httpx

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agcore/agcore/observe"
)

// headerObserver injects a fixed trace context.
type headerObserver struct{}

func (headerObserver) Start(ctx context.Context, _ observe.Phase) (context.Context, observe.Span) {
	return observe.Start(context.Background(), "")
}

func (headerObserver) Inject(_ context.Context, set func(k, v string)) {
	set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	set("tracestate", "a=b")
}

// TestPostInjectsTraceContext: a request made under a context that carries
// an observer carries its trace context headers, after the others; without
// one it carries none.
func TestPostInjectsTraceContext(t *testing.T) {
	var got []http.Header
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, r.Header.Clone())
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
	})}
	c := &Client{Provider: "p", HTTP: client, Endpoint: "http://h/x", Header: MergeHeader(nil, nil, "Authorization", "Bearer "+testSecret)}
	for _, ctx := range []context.Context{observe.With(context.Background(), headerObserver{}), context.Background()} {
		resp, err := c.Post(ctx, []byte(`{}`), true)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if tp := got[0].Get("Traceparent"); tp != "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" || got[0].Get("Tracestate") != "a=b" {
		t.Errorf("traced request headers: %v", got[0])
	}
	if got[0].Get("Authorization") != "Bearer "+testSecret || got[0].Get("Accept") != "text/event-stream" {
		t.Errorf("the trace context replaced other headers: %v", got[0])
	}
	if _, ok := got[1]["Traceparent"]; ok {
		t.Errorf("an untraced request has a traceparent: %v", got[1])
	}
}
