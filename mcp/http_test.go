package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestAStreamableHTTPServerIsListedAndCalled(t *testing.T) {
	srv := newTestServer()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	defer ts.Close()
	c, err := Connect(startTimeout(t), Server{URL: ts.URL + "/mcp", HTTPClient: ts.Client()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Name() != "http" {
		t.Errorf("a server at an IP address is named %q, want http", c.Name())
	}
	out, err := toolByName(t, c, "mcp__http__echo").Invoke(context.Background(), json.RawMessage(`{"message":"over HTTP"}`))
	if err != nil || out != "echo: over HTTP" {
		t.Errorf("echo: %q, %v", out, err)
	}
	if _, err := toolByName(t, c, "mcp__http__fail").Invoke(context.Background(), nil); err == nil || err.Error() != "the disk is full" {
		t.Errorf("fail: %v", err)
	}
}

func TestAnUnreachableURLIsAConnectErrorThatHidesCredentials(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := strings.Replace(ts.URL, "http://", "http://user:hunter2@", 1) + "/mcp?api_key=SECRET123"
	ts.Close() // nothing listens there any more
	_, err := Connect(startTimeout(t), Server{Name: "remote", URL: url})
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Stage != "initialize" || !strings.Contains(err.Error(), `MCP server "remote" (http://127.0.0.1:`) {
		t.Fatalf("err = %v; want a ConnectError naming the server", err)
	}
	for _, secret := range []string{"SECRET123", "hunter2"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows %q: %v", secret, err)
		}
	}
}

func TestAServerAnsweringHTTPErrorsIsAConnectError(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "no MCP here", http.StatusNotFound)
	}))
	defer ts.Close()
	_, err := Connect(startTimeout(t), Server{Name: "web", URL: ts.URL, HTTPClient: ts.Client()})
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Server != "web" {
		t.Fatalf("err = %v", err)
	}
}
