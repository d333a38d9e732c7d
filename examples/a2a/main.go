// Command a2a serves an agcore agent over the Agent2Agent protocol on
// 127.0.0.1 and talks to it with the official A2A Go client: it resolves
// the agent card, streams a first answer, then asks for a deployment whose
// tool needs approval, approves it when the task turns input-required, and
// prints the final answer. It runs offline: the model is scripted with
// llmtest.
//
//	go run ./examples/a2a
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/approval"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session/memstore"
	"github.com/agcore/agcore/tool"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// The agent: a scripted model, a tool that needs approval, sessions in
	// memory, approvals parked in a broker the A2A handler decides through.
	deploy := tool.MustFunc("deploy", "Deploy the site.", func(context.Context, struct{}) (string, error) {
		return "deployed version 42", nil
	}, tool.WithApproval())
	model := llmtest.New(
		llmtest.Text("Hello! I can deploy the site for you."),
		llmtest.Reply(llm.Text{Text: "Deploying now."}, llmtest.Call("call_1", "deploy", `{}`)),
		llmtest.Text("Done: version 42 is live."),
	)
	broker := &approval.Broker{}
	store := memstore.New()
	a, err := agent.New(model, agent.Config{Name: "deployer", Tools: []tool.Tool{deploy}, Approver: broker, Store: store})
	if err != nil {
		return err
	}
	set, err := host.NewSet(host.Agent{Name: "deployer", Description: "Deploys the site.", Agent: a, Store: store})
	if err != nil {
		return err
	}
	h, err := a2aserve.New(set, broker, a2aserve.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}

	// Serve on a free port of the loopback interface.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	base := "http://" + ln.Addr().String()

	// The client side: the default agent's card, then a client from it.
	card, err := agentcard.DefaultResolver.Resolve(ctx, base)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "agent %q at %s\n", card.Name, card.URL)
	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		return err
	}
	defer client.Destroy()

	// A streamed first turn.
	first := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Hi, what can you do?"})
	var contextID string
	for ev, err := range client.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: first}) {
		if err != nil {
			return err
		}
		switch ev := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			if ev.LastChunk { // the whole answer, replacing the streamed deltas
				fmt.Fprintf(out, "answer: %s\n", text(ev.Artifact.Parts))
			}
		case *a2a.TaskStatusUpdateEvent:
			contextID = ev.ContextID
			if ev.Final {
				fmt.Fprintf(out, "state: %s\n", ev.Status.State)
			}
		}
	}

	// A second turn in the same context (the same agcore session), whose
	// tool call waits for approval.
	second := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "Please deploy."})
	second.ContextID = contextID
	task, err := sendTask(ctx, client, second)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "state: %s\n%s\n", task.Status.State, text(task.Status.Message.Parts))
	if task.Status.State != a2a.TaskStateInputRequired {
		return errors.New("the deployment did not wait for approval")
	}
	decision := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "approve"})
	decision.TaskID = task.ID
	if task, err = sendTask(ctx, client, decision); err != nil {
		return err
	}
	fmt.Fprintf(out, "state: %s\nanswer: %s\n", task.Status.State, text(task.Artifacts[0].Parts))
	return nil
}

// sendTask sends msg and returns the task it ended in.
func sendTask(ctx context.Context, c *a2aclient.Client, msg *a2a.Message) (*a2a.Task, error) {
	res, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: msg})
	if err != nil {
		return nil, err
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("the agent answered with a %T, not a task", res)
	}
	return task, nil
}

// text joins the text parts of parts.
func text(parts a2a.ContentParts) string {
	var s string
	for _, p := range parts {
		if t, ok := p.(a2a.TextPart); ok {
			s += t.Text
		}
	}
	return s
}
