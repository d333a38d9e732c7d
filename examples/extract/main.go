// Command extract pulls a contact out of free text into a Go struct with
// package structured: the schema comes from the struct, the answer is
// validated against it (one repair turn if it does not validate) and
// decoded. It runs offline on the scripted demo model, whose answer is a
// deterministic placeholder that fits the schema (it does not read the
// text), and against any provider of the agcore command's table:
//
//	go run ./examples/extract
//	go run ./examples/extract -stream
//	OPENAI_API_KEY=... go run ./examples/extract -provider openai "Reach Ada Lovelace at ada@example.com about the engine, soon."
//
// With -stream it prints the partial values as the answer's JSON arrives.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	_ "github.com/agcore/agcore/provider/builtin" // every adapter agcore ships registers itself
	"github.com/agcore/agcore/provider/registry"
	"github.com/agcore/agcore/structured"
)

// Contact is what the example extracts.
type Contact struct {
	Name    string   `json:"name" jsonschema:"the person's full name"`
	Email   string   `json:"email,omitempty" jsonschema:"their email address, if the text gives one"`
	Company string   `json:"company,omitempty" jsonschema:"where they work, if the text says"`
	Topics  []string `json:"topics" jsonschema:"what they want to talk about"`
	Urgency string   `json:"urgency" enum:"low,normal,high" jsonschema:"how soon they need an answer"`
}

const defaultText = "Hi, this is Ada Lovelace from the Analytical Engine Company (ada@example.com). " +
	"I'd like to talk about Bernoulli numbers and your punched cards, ideally this week."

func main() {
	provider := flag.String("provider", "demo", "a provider of the agcore command's table (its key from the environment)")
	model := flag.String("model", "", "the model (the provider's default when empty)")
	stream := flag.Bool("stream", false, "print the partial values as the JSON arrives")
	flag.Parse()
	text := strings.Join(flag.Args(), " ")
	if text == "" {
		text = defaultText
	}
	if err := run(context.Background(), os.Stdout, *provider, *model, text, *stream); err != nil {
		log.Fatal(err)
	}
}

// run extracts the contact in text with the provider's model and prints
// it.
func run(ctx context.Context, w io.Writer, provider, model, text string, stream bool) error {
	m, err := registry.New(provider, registry.Config{Model: model})
	if err != nil {
		return err
	}
	a, err := agent.New(m, agent.Config{
		Name:         "extractor",
		Instructions: "Extract the contact details the user's text gives. Leave out what it does not say.",
	})
	if err != nil {
		return err
	}
	msgs := []llm.Message{llm.UserText(text)}
	var c Contact
	if stream {
		for p, err := range structured.Stream[Contact](ctx, a, msgs, nil) {
			if err != nil {
				return err
			}
			if p.Done {
				c = p.Value
				break
			}
			fmt.Fprintf(w, "partial: %s\n", p.JSON)
		}
	} else {
		var err error
		if c, _, err = structured.Run[Contact](ctx, a, msgs, nil); err != nil {
			return err
		}
	}
	out, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s\nname: %s, urgency: %s, %d topic(s)\n", out, c.Name, c.Urgency, len(c.Topics))
	return nil
}
