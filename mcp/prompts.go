package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/agcore/agcore/llm"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prompt is a prompt template a server offers (prompts/list).
type Prompt struct {
	Server      string // the server's short name
	Name        string
	Description string
	Arguments   []PromptArgument
}

// PromptArgument is an argument of a [Prompt].
type PromptArgument struct {
	Name        string
	Description string
	Required    bool
}

// Prompts lists the server's prompts; a server without the prompts
// capability has none.
func (c *Client) Prompts(ctx context.Context) ([]Prompt, error) {
	if p := c.session.InitializeResult(); p == nil || p.Capabilities == nil || p.Capabilities.Prompts == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var out []Prompt
	for p, err := range c.session.Prompts(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("MCP server %q: prompts/list: %w", c.name, redact(err, c.secrets))
		}
		pr := Prompt{Server: c.name, Name: p.Name, Description: p.Description}
		if pr.Description == "" {
			pr.Description = p.Title
		}
		for _, a := range p.Arguments {
			pr.Arguments = append(pr.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		out = append(out, pr)
	}
	return out, nil
}

// GetPrompt gets the prompt name with args (prompts/get) as messages:
// text, images and embedded resources' text (a binary resource becomes a
// file block).
func (c *Client) GetPrompt(ctx context.Context, name string, args map[string]string) ([]llm.Message, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.session.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("MCP server %q: prompts/get %q: %w", c.name, name, redact(err, c.secrets))
	}
	var out []llm.Message
	for _, m := range res.Messages {
		role := llm.RoleUser
		if m.Role == "assistant" {
			role = llm.RoleAssistant
		}
		var b llm.Block
		switch ct := m.Content.(type) {
		case *sdk.TextContent:
			b = llm.Text{Text: ct.Text}
		case *sdk.ImageContent:
			b = llm.Image{Data: ct.Data, MediaType: ct.MIMEType}
		case *sdk.AudioContent:
			b = llm.Audio{Data: ct.Data, MediaType: ct.MIMEType}
		case *sdk.EmbeddedResource:
			if r := ct.Resource; r != nil && r.Text != "" {
				b = llm.Text{Text: fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.URI, strings.TrimRight(r.Text, "\n"))}
			} else if r != nil {
				b = llm.File{Data: r.Blob, MediaType: r.MIMEType, Name: r.URI}
			}
		case *sdk.ResourceLink:
			b = llm.Text{Text: fmt.Sprintf("(resource %s)", ct.URI)}
		}
		if b == nil {
			continue
		}
		// Consecutive messages of one role are one message.
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, b)
			continue
		}
		out = append(out, llm.Message{Role: role, Content: []llm.Block{b}})
	}
	return out, nil
}
