// Command mcp connects to an MCP server and prints the tools it offers
// under the names a model sees; with -call it also calls one.
//
//	go run ./examples/mcp -- npx -y @modelcontextprotocol/server-everything
//	go run ./examples/mcp -call mcp__everything__echo -args '{"message":"hi"}' -- npx -y @modelcontextprotocol/server-everything
//	go run ./examples/mcp -url http://localhost:3001/mcp
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/agcore/agcore/mcp"
	"github.com/agcore/agcore/tool"
)

func main() {
	name := flag.String("name", "", "the server's short name in tool names (default: derived from the command or URL)")
	url := flag.String("url", "", "a streamable HTTP server's URL, instead of a command")
	call := flag.String("call", "", "a tool to call after listing, by the name printed")
	args := flag.String("args", "{}", "the JSON arguments of -call")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: mcp [flags] -- CMD [ARGS...]\n       mcp [flags] -url URL\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	log.SetFlags(0)

	srv := mcp.Server{Name: *name, URL: *url, Stderr: os.Stderr}
	if *url == "" {
		if flag.NArg() == 0 {
			flag.Usage()
			os.Exit(2)
		}
		srv.Command, srv.Args = flag.Arg(0), flag.Args()[1:]
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// npx may download the server first: give the start a generous bound.
	start, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	c, err := mcp.Connect(start, srv)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	tools := c.Tools()
	fmt.Printf("server %q offers %d tools:\n", c.Name(), len(tools))
	for _, t := range tools {
		fmt.Printf("  %-45s %s\n", t.Name(), firstLine(t.Description()))
		if params := paramNames(t); params != "" {
			fmt.Printf("  %-45s   (%s)\n", "", params)
		}
	}
	if *call == "" {
		return
	}
	var reg tool.Registry
	if err := reg.Register(tools...); err != nil {
		log.Fatal(err)
	}
	t, ok := reg.Get(*call)
	if !ok {
		log.Fatalf("no tool %q", *call)
	}
	out, err := t.Invoke(ctx, json.RawMessage(*args))
	if err != nil {
		c.Close()
		log.Fatalf("%s failed: %v", *call, err)
	}
	fmt.Printf("\n%s:\n%s\n", *call, out)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// paramNames lists a tool's parameters, the required ones marked with "*".
func paramNames(t tool.Tool) string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(t.Parameters(), &s) != nil {
		return ""
	}
	var names []string
	for n := range s.Properties {
		for _, r := range s.Required {
			if r == n {
				n += "*"
				break
			}
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
