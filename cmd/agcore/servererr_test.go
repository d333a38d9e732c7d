package main_test

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

// compatible points the CLI at the fake as an OpenAI-compatible server at
// base (the fake's URL plus a path).
func (c *cli) compatible(base, model string) *cli {
	c.env["AGCORE_PROVIDER"] = "compatible"
	c.env["OPENAI_BASE_URL"] = base
	c.env["AGCORE_MODEL"] = model
	return c
}

// Errors from a server the user points at are told with what to try, and
// named by the provider as configured, never as "openai".
func TestServerErrorsSayWhatToTry(t *testing.T) {
	t.Parallel()
	html := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><body>Welcome to nginx!</body></html>")
	}
	notFound := func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) }
	tests := []struct {
		name     string
		reply    reply
		base     string // appended to the fake's URL
		code     string
		want     []string
		requests int
	}{
		{"a base URL without /v1", notFound, "", "invalid_request",
			[]string{"compatible (http://127.0.0.1:", "answered HTTP 404 Not Found", "the base URL usually ends in /v1: try --base-url http://127.0.0.1:"}, 1},
		{"a web page instead of the API", html, "/v1", "network",
			[]string{"answered with a web page (text/html), not an API response", "check the base URL"}, 1},
		{"a server error", status(500, `{"error":{"message":"model crashed","type":"server_error"}}`), "/v1", "server",
			[]string{"compatible (http://127.0.0.1:", "answered HTTP 500 Internal Server Error: model crashed"}, 1},
		{"a 501 HTML page", htmlStatus(501, "<!DOCTYPE html>\n<html>\n<head><title>Method\n Not Implemented here</title></head>\n<body>\n"+strings.Repeat("<p>details</p>\n", 200)+"</body></html>"), "/v1", "invalid_request",
			[]string{"answered HTTP 501 Not Implemented: Method Not Implemented here"}, 1},
		{"a bad key", status(401, `{"error":{"message":"bad key","type":"invalid_request_error"}}`), "/v1", "auth",
			[]string{"answered HTTP 401 Unauthorized: bad key", "(check the key in $OPENAI_API_KEY)"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, tt.reply)
			c := newCLI(t).compatible(srv.URL+tt.base, "local-model")
			if tt.code == "network" || tt.code == "invalid_request" {
				c.env["AGCORE_RETRIES"] = "3" // a web page is not retried
			}
			r := c.run("", "run", "--json", "hello")
			e := last(t, events(t, r.stdout))
			msg, _ := e["message"].(string)
			if r.code != 1 || e["code"] != tt.code {
				t.Errorf("exit %d, event %v; want exit 1 and code %s", r.code, e, tt.code)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") || len(msg) > 300 {
				t.Errorf("message of %d bytes, not one short line: %q", len(msg), msg)
			}
			if strings.Contains(msg, "openai") || strings.Contains(msg, "stream ended before") {
				t.Errorf("message %q names openai or the stream's internals", msg)
			}
			if n := len(srv.got()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			// The same in text, on stderr.
			srv.add(tt.reply)
			c.env["AGCORE_RETRIES"] = "0"
			r = c.run("", "run", "hello")
			if !strings.Contains(r.stderr, "error ("+tt.code+"): "+msg) {
				t.Errorf("stderr = %q, want the message", r.stderr)
			}
		})
	}
}

// A prompt that cannot fit the window is refused in words, and nothing is
// sent; a large prompt for a model of unknown window is sent with a
// warning.
func TestPromptSizeIsCheckedBeforeSending(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("lorem ipsum dolor sit amet ", 2000) // about 10k tokens
	t.Run("over the window", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t)
		c := newCLI(t).openai(srv, "sk-test")
		r := c.run(big, "run", "--context-window", "1000", "Summarise:")
		if r.code != 1 || len(srv.got()) != 0 {
			t.Fatalf("exit %d, %d requests; stderr %s", r.code, len(srv.got()), r.stderr)
		}
		line := strings.TrimSpace(r.stderr)
		if !strings.HasPrefix(line, "error (context_length): your prompt is about ") || !strings.Contains(line, " tokens; gpt-4o-mini's window is 1,000, so nothing was sent") ||
			strings.Contains(line, "compact") || strings.Contains(line, "microcompact") || strings.Count(line, "\n") != 0 {
			t.Errorf("stderr = %q", r.stderr)
		}
	})
	t.Run("unknown window", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, openaiReply(turn{text: "ok"}))
		c := newCLI(t).compatible(srv.URL+"/v1", "my-local-model")
		r := c.run(strings.Repeat(big, 4), "run", "--tools", "", "Summarise:")
		if r.code != 0 || len(srv.got()) != 1 {
			t.Fatalf("exit %d, %d requests; stderr %s", r.code, len(srv.got()), r.stderr)
		}
		if !strings.Contains(r.stderr, "warning: sending a prompt of about ") || !strings.Contains(r.stderr, "my-local-model's context window is unknown") {
			t.Errorf("stderr = %q, want the warning", r.stderr)
		}
	})
}

// A model served by a compatible server is not billed at its maker's
// price; with --provider openai it is.
func TestCompatibleServerIsNotBilledAtOpenAIPrices(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"compatible", "openai"} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, openaiReply(turn{text: "Hi.", in: 1000, out: 100}))
			c := newCLI(t).openai(srv, "sk-test")
			r := c.ok("run", "--json", "--provider", provider, "--model", "gpt-4o", "hello")
			done := last(t, events(t, r.stdout))
			if known := done["cost_known"] == true; known != (provider == "openai") {
				t.Errorf("cost_known %v cost_usd %v", done["cost_known"], done["cost_usd"])
			}
		})
	}
}

// The presets of OpenAI-compatible services work as --provider names, each
// with its own key variable.
func TestProviderPresets(t *testing.T) {
	t.Parallel()
	tests := []struct{ provider, keyEnv string }{
		{"vllm", ""}, {"openrouter", "OPENROUTER_API_KEY"}, {"groq", "GROQ_API_KEY"}, {"xai", "XAI_API_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			t.Parallel()
			srv := newFake(t, openaiReply(turn{text: "Preset works."}))
			c := newCLI(t)
			if tt.keyEnv != "" {
				c.env[tt.keyEnv] = "sk-preset"
			}
			r := c.ok("run", "--provider", tt.provider, "--base-url", srv.URL+"/v1", "-m", "some/model", "hello")
			if r.stdout != "Preset works.\n" {
				t.Errorf("stdout %q", r.stdout)
			}
			req := srv.got()[0]
			if req.path != "/v1/chat/completions" || req.body["model"] != "some/model" {
				t.Errorf("request to %s for %v", req.path, req.body["model"])
			}
			if auth := req.header.Get("Authorization"); tt.keyEnv != "" && auth != "Bearer sk-preset" {
				t.Errorf("Authorization %q", auth)
			}
		})
	}
	c := newCLI(t)
	if r := c.run("", "run", "--provider", "groq", "-m", "x", "hi"); r.code != 2 || !strings.Contains(r.stderr, "GROQ_API_KEY") {
		t.Errorf("groq without its key: exit %d, %s", r.code, r.stderr)
	}
}

// -m is --model, aliases name models, and a model names its provider when
// none is named.
func TestModelAliases(t *testing.T) {
	t.Parallel()
	t.Run("built-in", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, openaiReply(turn{text: "ok"}))
		c := newCLI(t).openai(srv, "sk-test")
		c.ok("run", "-m", "4o", "hello")
		if m := srv.got()[0].body["model"]; m != "gpt-4o" {
			t.Errorf("model %v, want gpt-4o", m)
		}
	})
	t.Run("from the config file", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, openaiReply(turn{text: "ok"}))
		c := newCLI(t).openai(srv, "sk-test")
		writeFiles(t, c.home, map[string]string{"config.json": `{"aliases": {"fast": "gpt-4.1-nano"}}`})
		c.ok("run", "-m", "fast", "hello")
		if m := srv.got()[0].body["model"]; m != "gpt-4.1-nano" {
			t.Errorf("model %v, want gpt-4.1-nano", m)
		}
	})
	t.Run("the model names the provider", func(t *testing.T) {
		t.Parallel()
		srv := newFake(t, anthropicReply(turn{text: "From Claude."}))
		c := newCLI(t)
		c.env["OPENAI_API_KEY"] = "sk-openai" // detected first, were it not for the model
		c.env["ANTHROPIC_API_KEY"] = "sk-ant"
		c.env["ANTHROPIC_BASE_URL"] = srv.URL
		r := c.ok("run", "-m", "sonnet", "hello")
		if r.stdout != "From Claude.\n" || srv.got()[0].path != "/v1/messages" || srv.got()[0].body["model"] != "claude-sonnet-4-6" {
			t.Errorf("stdout %q, request %s %v", r.stdout, srv.got()[0].path, srv.got()[0].body["model"])
		}
	})
}

// htmlStatus answers with an HTML page and the status code.
func htmlStatus(code int, page string) reply {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(code)
		io.WriteString(w, page)
	}
}

// TestStoreRefusalIsOneLine: a PostgreSQL or Redis store that refuses the
// connection is told in one short line naming the address once, not the
// driver's chain of repeated dial errors.
func TestStoreRefusalIsOneLine(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := newCLI(t)
	for _, store := range []string{"postgres://root:secret@" + addr + "/test?sslmode=disable", "redis://" + addr + "/0"} {
		for _, args := range [][]string{{"sessions", "list"}, {"run", "--provider", "demo", "hi"}} {
			r := c.run("", append(args, "--store", store)...)
			msg := strings.TrimSpace(r.stderr)
			if r.code != 1 || strings.Count(msg, "\n") > 0 || strings.Count(msg, addr) != 1 || len(msg) > 200 ||
				!strings.Contains(msg, "nothing answers there (connection refused)") || strings.Contains(msg, "dial") || strings.Contains(msg, "secret") {
				t.Errorf("%v --store %s: exit %d, %d bytes:\n%s", args, store, r.code, len(msg), msg)
			}
		}
	}
}
