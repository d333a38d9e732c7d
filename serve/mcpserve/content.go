package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// uriTemplate is a URI template of simple {var} expressions (RFC 6570
// level 1), each matching one path segment's worth of characters (no "/").
type uriTemplate struct {
	re    *regexp.Regexp
	names []string
}

var templateVar = regexp.MustCompile(`\{([A-Za-z0-9_]+)\}`)

func parseTemplate(t string) (*uriTemplate, error) {
	if t == "" {
		return nil, errors.New("empty URI template")
	}
	var b strings.Builder
	b.WriteString("^")
	var names []string
	rest := t
	for {
		loc := templateVar.FindStringSubmatchIndex(rest)
		if loc == nil {
			break
		}
		b.WriteString(regexp.QuoteMeta(rest[:loc[0]]))
		b.WriteString("([^/?#]+)")
		names = append(names, rest[loc[2]:loc[3]])
		rest = rest[loc[1]:]
	}
	if strings.ContainsAny(rest, "{}") {
		return nil, fmt.Errorf("URI template %q: only {name} expressions are supported", t)
	}
	b.WriteString(regexp.QuoteMeta(rest))
	b.WriteString("$")
	return &uriTemplate{re: regexp.MustCompile(b.String()), names: names}, nil
}

// match returns the values of the variables in uri, or nil.
func (t *uriTemplate) match(uri string) map[string]string {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(t.names))
	for i, n := range t.names {
		out[n] = m[i+1]
	}
	return out
}

// Prompt is a prompt template offered to MCP clients (prompts/get), the
// config file's "mcp_serve.prompts": its messages with each {{name}}
// replaced by the argument name.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Messages    []PromptMessage  `json:"messages"`
}

// PromptArgument is an argument of a [Prompt]. Values, when given, are what
// completion/complete proposes for it (those starting with what the user
// typed).
type PromptArgument struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Required    bool     `json:"required,omitempty"`
	Values      []string `json:"values,omitempty"`
}

// PromptMessage is one message of a [Prompt]: its role ("user", the
// default, or "assistant") and one content, text (with {{name}}
// replaced), an image file, or one of the server's resources embedded
// (its URI, {{name}} replaced).
type PromptMessage struct {
	Role     string `json:"role,omitempty"`
	Text     string `json:"text,omitempty"`
	Image    string `json:"image,omitempty"`
	Resource string `json:"resource,omitempty"`
}

// Resource is a document offered read-only to MCP clients: a file (read
// through Options.ReadFile at each read, so it is current) or Text. A
// client may subscribe to a file's resource; it is told when the file
// changes.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// MIMEType is the document's type; empty means the file's extension
	// says (text/plain for Text). Text types are sent as text, others as
	// base64 blobs.
	MIMEType string `json:"mime_type,omitempty"`
	File     string `json:"file,omitempty"`
	Text     string `json:"text,omitempty"`
}

// ResourceTemplate offers a family of files: URITemplate (RFC 6570, such
// as "docs://{name}") names them, and File, with each {var} of the
// template replaced by its value in the URI read, is the file. A value
// cannot leave the directory it is put in: one holding "/" or ".." reads
// nothing.
type ResourceTemplate struct {
	URITemplate string `json:"uri_template"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mime_type,omitempty"`
	File        string `json:"file"`
}

// content serves the prompts and resources of Options.
type content struct {
	opts Options
	read func(string) ([]byte, error)

	mu      sync.Mutex
	watched map[string]*watch // subscribed URI → its file's state
	ticking bool
	server  *sdk.Server
}

type watch struct {
	file  string
	count int    // subscriptions
	last  string // the file's bytes' summary when last looked at
}

// watchEvery is how often subscribed files are looked at.
const watchEvery = time.Second

func newContent(opts Options) *content {
	read := opts.ReadFile
	if read == nil {
		read = func(name string) ([]byte, error) {
			return nil, fmt.Errorf("%s: this server reads no files", name)
		}
	}
	return &content{opts: opts, read: read, watched: map[string]*watch{}}
}

// register adds the prompts and resources to s.
func (c *content) register(s *sdk.Server) {
	c.server = s
	for _, p := range c.opts.Prompts {
		sp := &sdk.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
		if sp.Description == "" {
			sp.Description = "the prompt " + p.Name
		}
		for _, a := range p.Arguments {
			sp.Arguments = append(sp.Arguments, &sdk.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		s.AddPrompt(sp, func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return c.getPrompt(ctx, p, req.Params.Arguments)
		})
	}
	for _, r := range c.opts.Resources {
		s.AddResource(&sdk.Resource{URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: mimeOf(r.MIMEType, r.File, r.Text != "")},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				rc, err := c.readResource(r)
				if err != nil {
					return nil, err
				}
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{rc}}, nil
			})
	}
	for _, rt := range c.opts.ResourceTemplates {
		tmpl, err := parseTemplate(rt.URITemplate)
		if err != nil {
			continue // Check reports it
		}
		s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: rt.URITemplate, Name: rt.Name, Description: rt.Description, MIMEType: rt.MIMEType},
			func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
				file, err := templateFile(tmpl, rt.File, req.Params.URI)
				if err != nil {
					return nil, err
				}
				rc, err := c.readResource(Resource{URI: req.Params.URI, MIMEType: rt.MIMEType, File: file})
				if err != nil {
					return nil, err
				}
				return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{rc}}, nil
			})
	}
}

// Check reports what in opts cannot be served: a prompt or resource
// without a name, a message with no content or two, a bad URI template.
func (opts Options) Check() error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(opts.AgentTools)) {
		if s := opts.AgentTools[name].InputSchema; len(s) > 0 {
			var v struct {
				Type any `json:"type"`
			}
			if err := json.Unmarshal(s, &v); err != nil || v.Type != "object" {
				errs = append(errs, fmt.Errorf("agent %q: its input_schema must be a JSON Schema object with \"type\": \"object\"", name))
			}
		}
	}
	for i, p := range opts.Prompts {
		if p.Name == "" {
			errs = append(errs, fmt.Errorf("prompt %d has no name", i+1))
		}
		for j, m := range p.Messages {
			n := 0
			for _, v := range []string{m.Text, m.Image, m.Resource} {
				if v != "" {
					n++
				}
			}
			if n != 1 {
				errs = append(errs, fmt.Errorf("prompt %q, message %d: give one of text, image and resource", p.Name, j+1))
			}
			if m.Role != "" && m.Role != "user" && m.Role != "assistant" {
				errs = append(errs, fmt.Errorf("prompt %q, message %d: role %q is neither user nor assistant", p.Name, j+1, m.Role))
			}
		}
	}
	for _, r := range opts.Resources {
		if r.URI == "" || r.Name == "" || (r.File == "") == (r.Text == "") {
			errs = append(errs, fmt.Errorf("resource %q: give a uri, a name, and one of file and text", r.URI))
		}
	}
	for _, rt := range opts.ResourceTemplates {
		if _, err := parseTemplate(rt.URITemplate); err != nil || rt.Name == "" || rt.File == "" {
			errs = append(errs, fmt.Errorf("resource template %q: give a valid uri_template, a name and a file", rt.URITemplate))
		}
	}
	return errors.Join(errs...)
}

var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}`)

// expand replaces each {{name}} of s by values[name]: a string as it is,
// another value as JSON, a missing one by nothing.
func expand(s string, values map[string]any) string {
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		v, ok := values[placeholder.FindStringSubmatch(m)[1]]
		switch v := v.(type) {
		case string:
			return v
		case nil:
			if !ok {
				return ""
			}
		}
		b, _ := json.Marshal(v)
		return string(b)
	})
}

func (c *content) getPrompt(_ context.Context, p Prompt, args map[string]string) (*sdk.GetPromptResult, error) {
	values := make(map[string]any, len(args))
	for k, v := range args {
		values[k] = v
	}
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return nil, fmt.Errorf("prompt %s: the argument %s is required", p.Name, a.Name)
		}
	}
	res := &sdk.GetPromptResult{Description: p.Description}
	for _, m := range p.Messages {
		role := sdk.Role("user")
		if m.Role == "assistant" {
			role = "assistant"
		}
		var ct sdk.Content
		switch {
		case m.Text != "":
			ct = &sdk.TextContent{Text: expand(m.Text, values)}
		case m.Image != "":
			b, err := c.read(m.Image)
			if err != nil {
				return nil, fmt.Errorf("prompt %s: %w", p.Name, err)
			}
			ct = &sdk.ImageContent{Data: b, MIMEType: mimeOf("", m.Image, false)}
		case m.Resource != "":
			rc, err := c.resourceByURI(expand(m.Resource, values))
			if err != nil {
				return nil, fmt.Errorf("prompt %s: %w", p.Name, err)
			}
			ct = &sdk.EmbeddedResource{Resource: rc}
		}
		res.Messages = append(res.Messages, &sdk.PromptMessage{Role: role, Content: ct})
	}
	return res, nil
}

// resourceByURI reads the resource or the template's file uri names.
func (c *content) resourceByURI(uri string) (*sdk.ResourceContents, error) {
	for _, r := range c.opts.Resources {
		if r.URI == uri {
			return c.readResource(r)
		}
	}
	for _, rt := range c.opts.ResourceTemplates {
		tmpl, err := parseTemplate(rt.URITemplate)
		if err != nil || tmpl.match(uri) == nil {
			continue
		}
		file, err := templateFile(tmpl, rt.File, uri)
		if err != nil {
			return nil, err
		}
		return c.readResource(Resource{URI: uri, MIMEType: rt.MIMEType, File: file})
	}
	return nil, sdk.ResourceNotFoundError(uri)
}

// templateFile is the file of a template's URI: File with each {var}
// replaced, a value being one name (no "/", no "..").
func templateFile(tmpl *uriTemplate, file, uri string) (string, error) {
	m := tmpl.match(uri)
	if m == nil {
		return "", sdk.ResourceNotFoundError(uri)
	}
	for _, name := range tmpl.names {
		v, err := url.PathUnescape(m[name])
		if err != nil {
			return "", fmt.Errorf("%s: %w", uri, err)
		}
		if v == "" || v == "." || v == ".." || strings.ContainsAny(v, `/\`) || strings.ContainsRune(v, 0) {
			return "", fmt.Errorf("%s: %q is not a name this resource can have", uri, v)
		}
		file = strings.ReplaceAll(file, "{"+name+"}", v)
	}
	return file, nil
}

func (c *content) readResource(r Resource) (*sdk.ResourceContents, error) {
	mt := mimeOf(r.MIMEType, r.File, r.Text != "")
	if r.File == "" {
		return &sdk.ResourceContents{URI: r.URI, MIMEType: mt, Text: r.Text}, nil
	}
	b, err := c.read(r.File)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.URI, err)
	}
	if isText(mt) && utf8.Valid(b) {
		return &sdk.ResourceContents{URI: r.URI, MIMEType: mt, Text: string(b)}, nil
	}
	return &sdk.ResourceContents{URI: r.URI, MIMEType: mt, Blob: b}, nil
}

// mimeOf is the given type, else the file's extension's, else text/plain
// for text and application/octet-stream for a file.
func mimeOf(given, file string, text bool) string {
	if given != "" {
		return given
	}
	if file != "" {
		ext := strings.ToLower(path.Ext(file))
		if t, ok := mimeTypes[ext]; ok {
			return t
		}
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
		if !text {
			return "application/octet-stream"
		}
	}
	return "text/plain"
}

// mimeTypes are the types of common extensions, the same on every
// machine (mime.TypeByExtension reads the system's tables for the rest).
var mimeTypes = map[string]string{
	".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".html": "text/html", ".htm": "text/html",
	".json": "application/json", ".yaml": "application/yaml", ".yml": "application/yaml", ".xml": "application/xml",
	".go": "text/x-go", ".py": "text/x-python", ".js": "text/javascript", ".ts": "text/x-typescript", ".sh": "text/x-shellscript",
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp", ".svg": "image/svg+xml",
	".wav": "audio/wav", ".mp3": "audio/mpeg", ".pdf": "application/pdf",
}

func isText(mt string) bool {
	mt, _, _ = strings.Cut(mt, ";")
	return strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "json") || strings.HasSuffix(mt, "xml") ||
		strings.HasSuffix(mt, "yaml") || mt == "application/javascript"
}

// complete proposes the values of a prompt's argument that start with what
// was typed.
func (c *content) complete(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	res := &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}
	p := req.Params
	if p == nil || p.Ref == nil || p.Ref.Type != "ref/prompt" {
		return res, nil
	}
	for _, pr := range c.opts.Prompts {
		if pr.Name != p.Ref.Name {
			continue
		}
		for _, a := range pr.Arguments {
			if a.Name != p.Argument.Name {
				continue
			}
			for _, v := range a.Values {
				if strings.HasPrefix(strings.ToLower(v), strings.ToLower(p.Argument.Value)) {
					res.Completion.Values = append(res.Completion.Values, v)
				}
			}
		}
	}
	if n := len(res.Completion.Values); n > 100 {
		res.Completion.Values, res.Completion.HasMore, res.Completion.Total = res.Completion.Values[:100], true, n
	}
	return res, nil
}

// subscribe accepts a subscription to one of the resources (or a
// template's); a file's is watched, and the server tells the subscribed
// sessions (the SDK keeps who subscribed) when it changes.
func (c *content) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	file := ""
	found := false
	for _, r := range c.opts.Resources {
		if r.URI == uri {
			file, found = r.File, true
		}
	}
	if !found {
		for _, rt := range c.opts.ResourceTemplates {
			tmpl, err := parseTemplate(rt.URITemplate)
			if err == nil && tmpl.match(uri) != nil {
				if file, err = templateFile(tmpl, rt.File, uri); err != nil {
					return err
				}
				found = true
			}
		}
	}
	if !found {
		return sdk.ResourceNotFoundError(uri)
	}
	if file == "" {
		return nil // inline text never changes
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.watched[uri]
	if w == nil {
		w = &watch{file: file, last: c.summary(file)}
		c.watched[uri] = w
	}
	w.count++
	if !c.ticking {
		c.ticking = true
		go c.tick(c.server)
	}
	return nil
}

func (c *content) unsubscribe(_ context.Context, req *sdk.UnsubscribeRequest) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.watched[req.Params.URI]; w != nil {
		if w.count--; w.count <= 0 {
			delete(c.watched, req.Params.URI)
		}
	}
	return nil
}

// summary is what a file's change is seen by: its bytes, or the error
// reading it.
func (c *content) summary(file string) string {
	b, err := c.read(file)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

// tick looks at the watched files until none is watched, and tells the
// server's subscribed sessions of each one that changed.
func (c *content) tick(s *sdk.Server) {
	for {
		time.Sleep(watchEvery)
		c.mu.Lock()
		if len(c.watched) == 0 {
			c.ticking = false
			c.mu.Unlock()
			return
		}
		uris := slices.Sorted(func(yield func(string) bool) {
			for u := range c.watched {
				if !yield(u) {
					return
				}
			}
		})
		ws := make([]*watch, len(uris))
		for i, u := range uris {
			ws[i] = c.watched[u]
		}
		c.mu.Unlock()
		for i, w := range ws {
			now := c.summary(w.file)
			c.mu.Lock()
			changed := now != w.last
			w.last = now
			c.mu.Unlock()
			if changed {
				_ = s.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uris[i]})
			}
		}
	}
}
