package mcpserve_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/serve/mcpserve"
	"github.com/agcore/agcore/tool/fstool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveWith connects a client to a server of opts offering agents.
func serveWith(t *testing.T, opts mcpserve.Options, copts *sdk.ClientOptions, agents ...host.Agent) *sdk.ClientSession {
	t.Helper()
	return serveVersion(t, "", opts, copts, agents...)
}

// serveVersion is serveWith with the client speaking protocol version
// ("" for the SDK's latest).
func serveVersion(t *testing.T, version string, opts mcpserve.Options, copts *sdk.ClientOptions, agents ...host.Agent) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if len(agents) == 0 {
		agents = []host.Agent{echoAgent(t, "echo")}
	}
	st, ct := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- mcpserve.Serve(ctx, st, opts, agents...) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v1"}, copts).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		<-done
	})
	return cs
}

// contentOptions serves a directory's files as prompts and resources,
// read under fstool's rules.
func contentOptions(t *testing.T) (mcpserve.Options, string) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"notes.txt":      "first notes",
		"logo.png":       "\x89PNG\r\n\x1a\nnot really",
		"docs/a.md":      "# A",
		".env":           "KEY=secret",
		"docs/.env.prod": "KEY=secret",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(name string) ([]byte, error) { return fstool.ReadFile(dir, name, fstool.Options{}) }
	return mcpserve.Options{
		ReadFile: read,
		Prompts: []mcpserve.Prompt{
			{Name: "review", Description: "Review a document", Arguments: []mcpserve.PromptArgument{
				{Name: "doc", Required: true, Values: []string{"docs://a.md", "docs://b.md", "notes://all"}},
				{Name: "tone"},
			}, Messages: []mcpserve.PromptMessage{
				{Resource: "{{doc}}"},
				{Text: "Review it in a {{tone}} tone."},
				{Role: "assistant", Image: "logo.png"},
			}},
		},
		Resources: []mcpserve.Resource{
			{URI: "notes://all", Name: "notes", File: "notes.txt"},
			{URI: "logo://png", Name: "logo", File: "logo.png"},
			{URI: "inline://hello", Name: "hello", Text: "hello"},
			{URI: "secret://env", Name: "env", File: ".env"},
		},
		ResourceTemplates: []mcpserve.ResourceTemplate{
			{URITemplate: "docs://{name}", Name: "docs", File: "docs/{name}"},
		},
	}, dir
}

func TestPromptsAreTemplatesOverTheServersResources(t *testing.T) {
	opts, _ := contentOptions(t)
	cs := serveWith(t, opts, nil)
	ctx := context.Background()
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(list.Prompts) != 1 || len(list.Prompts[0].Arguments) != 2 || !list.Prompts[0].Arguments[0].Required {
		t.Fatalf("prompts: %+v, %v", list, err)
	}
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "review", Arguments: map[string]string{"doc": "docs://a.md", "tone": "kind"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 3 {
		t.Fatalf("messages: %+v", got.Messages)
	}
	if r, ok := got.Messages[0].Content.(*sdk.EmbeddedResource); !ok || r.Resource.URI != "docs://a.md" || r.Resource.Text != "# A" || r.Resource.MIMEType != "text/markdown" {
		t.Errorf("message 1: %#v", got.Messages[0].Content)
	}
	if tc, ok := got.Messages[1].Content.(*sdk.TextContent); !ok || tc.Text != "Review it in a kind tone." {
		t.Errorf("message 2: %#v", got.Messages[1].Content)
	}
	if im, ok := got.Messages[2].Content.(*sdk.ImageContent); !ok || im.MIMEType != "image/png" || got.Messages[2].Role != "assistant" || !strings.HasPrefix(string(im.Data), "\x89PNG") {
		t.Errorf("message 3: %#v", got.Messages[2])
	}
	for _, tc := range []struct {
		name string
		args map[string]string
		want string
	}{
		{"a required argument missing", map[string]string{"tone": "kind"}, "doc is required"},
		{"a resource the server does not have", map[string]string{"doc": "nope://x"}, "not found"},
		{"a template value leaving its directory", map[string]string{"doc": "docs://..%2F.env"}, "not a name"},
		{"a secret through a template", map[string]string{"doc": "docs://.env.prod"}, "secret pattern"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "review", Arguments: tc.args})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPromptArgumentsComplete(t *testing.T) {
	opts, _ := contentOptions(t)
	cs := serveWith(t, opts, nil)
	for _, tc := range []struct {
		prompt, arg, typed string
		want               []string
	}{
		{"review", "doc", "docs", []string{"docs://a.md", "docs://b.md"}},
		{"review", "doc", "NOTES", []string{"notes://all"}},
		{"review", "doc", "", []string{"docs://a.md", "docs://b.md", "notes://all"}},
		{"review", "tone", "k", []string{}},
		{"other", "doc", "", []string{}},
	} {
		res, err := cs.Complete(context.Background(), &sdk.CompleteParams{
			Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: tc.prompt},
			Argument: sdk.CompleteParamsArgument{Name: tc.arg, Value: tc.typed},
		})
		if err != nil || !slices.Equal(res.Completion.Values, tc.want) {
			t.Errorf("complete %s.%s %q = %+v, %v; want %v", tc.prompt, tc.arg, tc.typed, res, err, tc.want)
		}
	}
}

func TestResourcesAreReadOnlyFilesUnderTheSecretRules(t *testing.T) {
	opts, _ := contentOptions(t)
	cs := serveWith(t, opts, nil)
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil || len(list.Resources) != 4 {
		t.Fatalf("resources: %+v, %v", list, err)
	}
	for _, tc := range []struct {
		uri, mime, text string
		blob            bool
	}{
		{"notes://all", "text/plain", "first notes", false},
		{"logo://png", "image/png", "", true},
		{"inline://hello", "text/plain", "hello", false},
		{"docs://a.md", "text/markdown", "# A", false},
	} {
		res, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: tc.uri})
		if err != nil || len(res.Contents) != 1 {
			t.Errorf("%s: %+v, %v", tc.uri, res, err)
			continue
		}
		c := res.Contents[0]
		if c.URI != tc.uri || c.MIMEType != tc.mime || c.Text != tc.text || (len(c.Blob) > 0) != tc.blob {
			t.Errorf("%s: %+v", tc.uri, c)
		}
	}
	for uri, want := range map[string]string{
		"secret://env":       "secret pattern",
		"docs://.env.prod":   "secret pattern",
		"docs://missing.md":  "does not exist",
		"docs://..%2Fnotes":  "not a name",
		"unknown://anything": "not found",
	} {
		if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", uri, err, want)
		}
	}
}

func TestASubscriberIsToldWhenTheFileChanges(t *testing.T) {
	opts, dir := contentOptions(t)
	updated := make(chan string, 4)
	// Clients of the 2025-11-25 protocol (the suite's, Claude Desktop's)
	// subscribe with resources/subscribe.
	cs := serveVersion(t, "2025-11-25", opts, &sdk.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
		updated <- req.Params.URI
	}})
	ctx := context.Background()
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "notes://all"}); err != nil {
		t.Fatal(err)
	}
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "unknown://x"}); err == nil {
		t.Error("subscribing to a resource the server does not have succeeded")
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("second notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		if uri != "notes://all" {
			t.Errorf("updated %q", uri)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated after the file changed")
	}
	if err := cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: "notes://all"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("third notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case uri := <-updated:
		t.Errorf("told of %s after unsubscribing", uri)
	case <-time.After(2500 * time.Millisecond):
	}
}

func TestCheckReportsWhatCannotBeServed(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts mcpserve.Options
		want string
	}{
		{"fine", mcpserve.Options{Prompts: []mcpserve.Prompt{{Name: "p", Messages: []mcpserve.PromptMessage{{Text: "hi"}}}}}, ""},
		{"a message with two contents", mcpserve.Options{Prompts: []mcpserve.Prompt{{Name: "p", Messages: []mcpserve.PromptMessage{{Text: "hi", Image: "a.png"}}}}}, "one of text, image and resource"},
		{"a bad role", mcpserve.Options{Prompts: []mcpserve.Prompt{{Name: "p", Messages: []mcpserve.PromptMessage{{Role: "system", Text: "hi"}}}}}, "neither user nor assistant"},
		{"a resource with file and text", mcpserve.Options{Resources: []mcpserve.Resource{{URI: "a://b", Name: "b", File: "f", Text: "t"}}}, "one of file and text"},
		{"a template with an operator", mcpserve.Options{ResourceTemplates: []mcpserve.ResourceTemplate{{URITemplate: "a://{+path}", Name: "b", File: "{path}"}}}, "valid uri_template"},
		{"an input schema that is not an object", mcpserve.Options{AgentTools: map[string]mcpserve.AgentTool{"x": {InputSchema: json.RawMessage(`{"type":"string"}`)}}}, `"type": "object"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Check()
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Check() = %v, want %q", err, tc.want)
			}
		})
	}
}

// echoAgent answers each prompt with the prompt.
func echoAgent(t *testing.T, name string) host.Agent {
	t.Helper()
	m := llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		return &llm.Response{Message: llm.AssistantText("got: " + req.Messages[len(req.Messages)-1].Text()), FinishReason: llm.FinishStop}, nil
	})
	a, err := agent.New(llmtest.New(m, m, m), agent.Config{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	return host.Agent{Name: name, Agent: a}
}

func TestAnAgentToolWithAnInputSchema(t *testing.T) {
	schema := json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"n":{"type":"integer"}},"properties":{"city":{"type":"string"},"days":{"$ref":"#/$defs/n"}},"required":["city"],"additionalProperties":false}`)
	opts := mcpserve.Options{AgentTools: map[string]mcpserve.AgentTool{
		"weather": {InputSchema: schema, Prompt: "Forecast for {{city}} over {{days}} days."},
		"raw":     {InputSchema: json.RawMessage(`{"type":"object"}`)},
		"plain":   {Prompt: "Translate: {{prompt}}"},
	}}
	cs := serveWith(t, opts, nil, echoAgent(t, "weather"), echoAgent(t, "raw"), echoAgent(t, "plain"))
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != "weather" {
			continue
		}
		b, _ := json.Marshal(tl.InputSchema)
		for _, kw := range []string{`"$schema":"https://json-schema.org/draft/2020-12/schema"`, `"$defs"`, `"additionalProperties":false`} {
			if !strings.Contains(string(b), kw) {
				t.Errorf("the listed schema lost %s: %s", kw, b)
			}
		}
	}
	for _, tc := range []struct {
		tool string
		args any
		want string
	}{
		{"weather", map[string]any{"city": "Oslo", "days": 3}, "got: Forecast for Oslo over 3 days."},
		{"raw", map[string]any{"x": 1}, `got: {"x":1}`},
		{"raw", nil, "got: {}"},
		{"plain", map[string]any{"prompt": "bonjour"}, "got: Translate: bonjour"},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
		if err != nil || res.IsError || text(res) != tc.want {
			t.Errorf("%s %v: %q (error %v, %v), want %q", tc.tool, tc.args, text(res), res != nil && res.IsError, err, tc.want)
		}
	}
	for _, args := range []map[string]any{{"days": 3}, {"city": "Oslo", "extra": true}, {"city": "Oslo", "days": "three"}} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "weather", Arguments: args})
		if err != nil || !res.IsError || !strings.Contains(text(res), "does not match the schema") {
			t.Errorf("weather %v: %q, %v; want a refusal naming the schema", args, text(res), err)
		}
	}
}
