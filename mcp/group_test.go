package mcp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// inMemoryServer starts newTestServer in memory and returns the Server
// reaching it and a channel closed once the server's session ends.
func inMemoryServer(t *testing.T, name string) (Server, <-chan struct{}) {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := newTestServer().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { ss.Wait(); close(done) }()
	t.Cleanup(func() { ss.Close(); <-done })
	return Server{Name: name, Transport: ct}, done
}

func TestConnectAllNumbersClashingNamesAndOffersEveryTool(t *testing.T) {
	a, _ := inMemoryServer(t, "test")
	b, _ := inMemoryServer(t, "test")
	g, err := ConnectAll(startTimeout(t), []Server{a, b})
	if err != nil {
		t.Fatal(err)
	}
	var clients []string
	for _, c := range g.Clients() {
		clients = append(clients, c.Name())
	}
	if !slices.Equal(clients, []string{"test", "test_2"}) {
		t.Errorf("servers %v", clients)
	}
	got := names(g.Tools())
	if len(got) != 12 || got[0] != "mcp__test__echo" || got[6] != "mcp__test_2__echo" {
		t.Errorf("tools %v", got)
	}
	seen := map[string]bool{}
	for _, n := range got {
		if seen[n] {
			t.Errorf("%s offered twice", n)
		}
		seen[n] = true
	}
	if err := g.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestConnectAllClosesTheOthersWhenOneFails(t *testing.T) {
	ok, done := inMemoryServer(t, "fine")
	_, err := ConnectAll(startTimeout(t), []Server{ok, {Name: "ghost", Command: "agcore-no-such-command-xyz"}})
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Server != "ghost" || !strings.Contains(err.Error(), `MCP server "ghost"`) {
		t.Fatalf("err = %v; want the ghost server's ConnectError", err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("the server that connected was not closed")
	}
}
