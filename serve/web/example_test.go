package web_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session/memstore"
)

// The page and its API for one agent. The handler authenticates nobody:
// serve it on loopback, or behind middleware that checks a token and sets
// host.WithPrincipal (as package serve does).
func ExampleNew() {
	broker := &approval.Broker{} // decides the calls of tools that need approval
	store := memstore.New()
	a, err := agent.New(llmtest.New(llmtest.Text("Hello!")), agent.Config{Name: "assistant", Store: store, Approver: broker})
	if err != nil {
		log.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "assistant", Description: "Answers briefly.", Agent: a, Store: store, Model: "scripted"})
	if err != nil {
		log.Fatal(err)
	}
	page, err := web.New(set, broker, web.Options{})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(page) // or http.ListenAndServe("127.0.0.1:8080", page)
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/api/agents")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(string(body))
	// Output:
	// {"agents":[{"name":"assistant","description":"Answers briefly.","model":"scripted","sessions":true,"default":true}]}
}
