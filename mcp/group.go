package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agcore/agcore/tool"
)

// Group is a set of connected servers whose tools are offered together.
type Group struct {
	clients []*Client
}

// ConnectAll connects to the servers concurrently, as [Connect] does. Servers
// whose short names clash are numbered in order ("files", "files_2"), so
// every tool name stays unique. If any server fails, the others are closed
// and the error joins the *[ConnectError] of each server that failed.
func ConnectAll(ctx context.Context, servers []Server) (*Group, error) {
	names := uniqueNames(servers)
	clients := make([]*Client, len(servers))
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i := range servers {
		wg.Go(func() {
			clients[i], errs[i] = connect(ctx, servers[i], names[i])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range clients {
			if c != nil {
				_ = c.Close()
			}
		}
		return nil, err
	}
	return &Group{clients: clients}, nil
}

// uniqueNames gives each server its short name, numbering repeats.
func uniqueNames(servers []Server) []string {
	names := make([]string, len(servers))
	used := make(map[string]bool, len(servers))
	for i := range servers {
		base := shortName(&servers[i])
		name := base
		for n := 2; used[name]; n++ {
			suffix := fmt.Sprintf("_%d", n)
			name = strings.TrimRight(base[:min(len(base), maxServerName-len(suffix))], "_-") + suffix
		}
		used[name] = true
		names[i] = name
	}
	return names
}

// Clients returns the connected servers, in the order they were given.
func (g *Group) Clients() []*Client { return append([]*Client(nil), g.clients...) }

// Tools returns the tools of every server, server by server in the order
// they were given.
func (g *Group) Tools() []tool.Tool {
	var out []tool.Tool
	for _, c := range g.clients {
		out = append(out, c.Tools()...)
	}
	return out
}

// Close closes every server and returns their errors joined.
func (g *Group) Close() error {
	errs := make([]error, len(g.clients))
	var wg sync.WaitGroup
	for i, c := range g.clients {
		wg.Go(func() { errs[i] = c.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
