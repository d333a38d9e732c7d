package serve_test

import (
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/internal/testkit/testwait"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/middleware"
	"github.com/agcore/agcore/replay"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/web"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

// TestRecordsEveryEntryPoint serves two principals with Options.Records
// and turns through every entry point, some at once: a Responses session
// of two turns, a conversation of the same name for each principal, a
// web chat, an A2A task and a chat completion. Each session of each
// principal, and the chat completion, has a record of its own turns
// only, in order, under the header the agent's RecordHeader gives.
func TestRecordsEveryEntryPoint(t *testing.T) {
	t.Parallel()
	e := &env{t: t, store: memstore.New(), broker: &approval.Broker{}}
	a, err := agent.New(&model{}, agent.Config{Name: "echo", Instructions: "Echo.", Store: e.store, Approver: e.broker,
		Retry:          middleware.RetryConfig{MaxAttempts: 1},
		Middleware:     []middleware.Middleware{replay.ContextMiddleware()},
		ToolMiddleware: []tool.Middleware{replay.ContextToolMiddleware()}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := host.NewSet(host.Agent{Name: "echo", Agent: a, Store: e.store})
	if err != nil {
		t.Fatal(err)
	}
	a2a, err := a2aserve.New(set, e.broker, a2aserve.Options{BearerAuth: true, CancelWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	wh, err := web.New(set, e.broker, web.Options{Heartbeat: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := replay.OpenDir(filepath.Join(t.TempDir(), "records"))
	if err != nil {
		t.Fatal(err)
	}
	e.h, err = serve.New(serve.Options{Agents: set, Broker: e.broker, A2A: a2a, Web: wh,
		Tokens:  map[string]string{"alice": "token-a", "bob": "token-b"},
		Records: dir, RecordHeader: func(agent string) replay.Header { return replay.Header{Model: "fake", Instructions: "Echo."} }})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = testwait.CloseOnCleanup(t, httptest.NewServer(e.h))
	call := func(token, method, path string, body any) (int, string) { // (ownersEnv.call is for one goroutine)
		resp := e.do(method, path, body, "Authorization: Bearer "+token, web.CSRFHeader+": 1")
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}

	// Each entry point once, at the same time.
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first string
		fails []string
	)
	check := func(what string, st int, body, want string) {
		mu.Lock()
		defer mu.Unlock()
		if st != 200 || !strings.Contains(body, want) {
			fails = append(fails, what+": "+body)
		}
	}
	for _, f := range []func(){
		func() {
			st, body := call("token-a", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "alice one"})
			check("alice's response", st, body, "echo: alice one")
			if st == 200 {
				mu.Lock()
				first = jsonOf(t, body)["id"].(string)
				mu.Unlock()
			}
		},
		func() {
			st, body := call("token-a", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "alice notes", "conversation": "notes"})
			check("alice's conversation", st, body, "echo: alice notes")
		},
		func() {
			st, body := call("token-b", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "bob notes", "conversation": "notes"})
			check("bob's conversation", st, body, "echo: bob notes")
		},
		func() {
			st, body := call("token-a", "POST", "/api/chat", map[string]any{"message": "alice web"})
			check("alice's web chat", st, body, "event: finish")
		},
		func() {
			st, body := call("token-a", "POST", "/a2a/echo", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": a2aMessage("alice a2a", "ctx-a", "")})
			check("alice's A2A task", st, body, `"kind":"task"`)
		},
		func() {
			st, body := call("token-b", "POST", "/v1/chat/completions", map[string]any{"model": "echo", "messages": []any{map[string]any{"role": "user", "content": "bob chat"}}})
			check("bob's chat completion", st, body, "echo: bob chat")
		},
	} {
		wg.Go(f)
	}
	wg.Wait()
	if len(fails) > 0 {
		t.Fatal(fails)
	}
	st, body := call("token-a", "POST", "/v1/responses", map[string]any{"model": "echo", "input": "alice two", "previous_response_id": first})
	if st != 200 || !strings.Contains(body, "echo: alice two") {
		t.Fatalf("alice's second response: %d %s", st, body)
	}
	if err := dir.Close(); err != nil {
		t.Fatal(err)
	}

	entries, err := os.ReadDir(dir.Path())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, en := range entries {
		rec, err := replay.Load(filepath.Join(dir.Path(), en.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var inputs []string
		for _, tr := range rec.Turns {
			inputs = append(inputs, tr.Input[0].Text())
		}
		who, _, _ := strings.Cut(inputs[0], " ")
		if !strings.HasPrefix(en.Name(), who+"_") {
			t.Errorf("%s holds %s's turns", en.Name(), who)
		}
		for _, c := range rec.Calls {
			for _, m := range c.Request.Messages {
				if m.Role == llm.RoleUser && !slices.Contains(inputs, m.Text()) {
					t.Errorf("%s: call %d carries %q, not a turn of this record (%q)", en.Name(), c.N, m.Text(), inputs)
				}
			}
		}
		if rec.Header.Model != "fake" || rec.Header.Meta["agent"] != "echo" || len(rec.Calls) != len(rec.Turns) {
			t.Errorf("%s: header %+v, %d calls for %d turns", en.Name(), rec.Header, len(rec.Calls), len(rec.Turns))
		}
		got = append(got, strings.Join(inputs, " | "))
	}
	slices.Sort(got)
	want := []string{"alice a2a", "alice notes", "alice one | alice two", "alice web", "bob chat", "bob notes"}
	if !slices.Equal(got, want) {
		t.Fatalf("the records hold %q, want %q", got, want)
	}
}
