package serve_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/host"
)

// A program composes its own server from serve's parts: only the
// Responses and models protocols, mounted on its own ServeMux beside a
// route of its own, behind the layers it chooses: its access log, panic
// recovery, bearer tokens (the principal, resolved once, reaches the
// program's route and the protocols) and a 64 KiB body limit.
func Example_compose() {
	model := llmtest.New(llmtest.Text("Hello from agcore."))
	a, err := agent.New(model, agent.Config{Name: "helper"})
	if err != nil {
		panic(err)
	}
	agents, err := host.NewSet(host.Agent{Name: "helper", Agent: a})
	if err != nil {
		panic(err)
	}
	h, err := serve.New(serve.Options{Agents: agents})
	if err != nil {
		panic(err)
	}

	mux := http.NewServeMux()
	h.Responses().Mount(mux)
	h.Models().Mount(mux)
	mux.HandleFunc("GET /v1/whoami", func(w http.ResponseWriter, r *http.Request) {
		p, _ := host.PrincipalFrom(r.Context())
		fmt.Fprintln(w, p)
	})
	auth, err := serve.Authenticate(serve.Auth{Tokens: map[string]string{"app": "s3cret"}})
	if err != nil {
		panic(err)
	}
	logger := slog.New(slog.DiscardHandler) // in a program: slog.Default()
	srv := httptest.NewServer(serve.Chain(mux, serve.AccessLog(logger), serve.Recover(logger), auth, serve.LimitBody(64<<10)))
	defer srv.Close()

	call := func(method, path, body string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer s3cret")
		resp, err := srv.Client().Do(req)
		if err != nil {
			panic(err)
		}
		return resp
	}
	resp := call("GET", "/v1/whoami", "")
	who, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Print(string(who))

	resp = call("POST", "/v1/responses", `{"model":"helper","input":"Hi","store":false}`)
	var out struct {
		Output []struct {
			Content []struct{ Text string }
		}
	}
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	fmt.Println(out.Output[len(out.Output)-1].Content[0].Text)

	resp = call("POST", "/v1/chat/completions", `{}`) // not mounted here
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output:
	// app
	// Hello from agcore.
	// 404
}
