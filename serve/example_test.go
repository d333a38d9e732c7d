package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session/memstore"
)

// A Go program serves its agent to OpenAI clients: one agent, one token,
// and a drain before the server shuts down.
func Example() {
	store := memstore.New()
	broker := &approval.Broker{}
	model := llmtest.New(llmtest.Text("Hello from agcore."))
	a, err := agent.New(model, agent.Config{Name: "helper", Store: store, Approver: broker})
	if err != nil {
		panic(err)
	}
	agents, err := host.NewSet(host.Agent{Name: "helper", Agent: a, Store: store})
	if err != nil {
		panic(err)
	}
	h, err := serve.New(serve.Options{Agents: agents, Broker: broker, Tokens: map[string]string{"app": "s3cret"}})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h) // in a program: &http.Server{Addr: ..., Handler: h}

	req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions",
		strings.NewReader(`{"model":"helper","messages":[{"role":"user","content":"Hi"}]}`))
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := srv.Client().Do(req)
	if err != nil {
		panic(err)
	}
	var out struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	fmt.Println(out.Choices[0].Message.Content)

	// Shutting down: no new turns, those in progress get 10 seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.Shutdown(ctx, srv.Config) // in a program: the *http.Server you started
	srv.Close()
	// Output:
	// Hello from agcore.
}
