package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/mcp"
)

// listPrompts is /prompts: each MCP server's prompts, with their
// arguments (a required one marked *).
func (a *app) listPrompts(ctx context.Context, rt *runtime) string {
	prompts, err := allPrompts(ctx, rt)
	if err != nil {
		return err.Error()
	}
	if len(prompts) == 0 {
		return "no MCP server offers prompts"
	}
	var b strings.Builder
	for i, p := range prompts {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s/%s", p.Server, p.Name)
		for _, arg := range p.Arguments {
			b.WriteString(" " + arg.Name)
			if arg.Required {
				b.WriteByte('*')
			}
		}
		if p.Description != "" {
			b.WriteString(" — " + oneLine(p.Description))
		}
	}
	return b.String()
}

// allPrompts lists the prompts of every MCP server of rt.
func allPrompts(ctx context.Context, rt *runtime) ([]mcp.Prompt, error) {
	if rt.mcp == nil {
		return nil, nil
	}
	var all []mcp.Prompt
	for _, c := range rt.mcp.Clients() {
		ps, err := c.Prompts(ctx)
		if err != nil {
			return nil, err
		}
		all = append(all, ps...)
	}
	return all, nil
}

// usePrompt is /prompt NAME [ARG=VALUE ...]: the MCP prompt's messages
// as the next turn's input, their text joined and their images and files
// attached.
func (a *app) usePrompt(ctx context.Context, rt *runtime, line string) (string, error) {
	words, err := splitArgs(line)
	if err != nil {
		return "", err
	}
	if len(words) == 0 {
		return "", errors.New("/prompt NAME [ARG=VALUE ...]: name a prompt (/prompts lists them)")
	}
	prompts, err := allPrompts(ctx, rt)
	if err != nil {
		return "", err
	}
	var match []mcp.Prompt
	for _, p := range prompts {
		if words[0] == p.Name || words[0] == p.Server+"/"+p.Name {
			match = append(match, p)
		}
	}
	switch {
	case len(match) == 0:
		return "", fmt.Errorf("no MCP prompt %q (/prompts lists them)", words[0])
	case len(match) > 1:
		return "", fmt.Errorf("%d MCP servers have a prompt %q: name it SERVER/%s", len(match), words[0], words[0])
	}
	p := match[0]
	args := map[string]string{}
	for _, w := range words[1:] {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return "", fmt.Errorf("%q: give each argument as NAME=VALUE", w)
		}
		args[k] = v
	}
	var missing []string
	for _, arg := range p.Arguments {
		if _, ok := args[arg.Name]; arg.Required && !ok {
			missing = append(missing, arg.Name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("the prompt %s/%s needs %s", p.Server, p.Name, strings.Join(missing, ", "))
	}
	var client *mcp.Client
	for _, c := range rt.mcp.Clients() {
		if c.Name() == p.Server {
			client = c
		}
	}
	msgs, err := client.GetPrompt(ctx, p.Name, args)
	if err != nil {
		return "", err
	}
	var text []string
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b := b.(type) {
			case llm.Text:
				if m.Role == llm.RoleAssistant {
					text = append(text, "(assistant) "+b.Text)
				} else {
					text = append(text, b.Text)
				}
			default:
				rt.attach = append(rt.attach, b)
			}
		}
	}
	if len(text) == 0 {
		text = []string{fmt.Sprintf("(the prompt %s/%s)", p.Server, p.Name)}
	}
	return strings.Join(text, "\n\n"), nil
}

// splitArgs splits a command line at spaces, a "double-quoted" part
// keeping its spaces (\" and \\ inside it are a quote and a backslash).
func splitArgs(line string) ([]string, error) {
	var out []string
	var cur strings.Builder
	in, quoted := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quoted && ch == '\\' && i+1 < len(line) && (line[i+1] == '"' || line[i+1] == '\\'):
			i++
			cur.WriteByte(line[i])
		case ch == '"':
			quoted, in = !quoted, true
		case !quoted && (ch == ' ' || ch == '\t'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if quoted {
		return nil, errors.New("a quote is not closed")
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}
