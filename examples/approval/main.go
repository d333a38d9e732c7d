// Command approval shows a tool that needs the user's approval before each
// call. The approver asks on the terminal; a denial is told to the model,
// which carries on. It runs offline: the model is scripted with llmtest.
//
//	go run ./examples/approval            # answer y or n at each prompt
//	printf 'y\nn\n' | go run ./examples/approval
//
// With no input (end of file) every call is denied.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/tool"
)

// terminalApprover asks on out and reads the answer from in. The calls of
// a batch are decided in parallel, so it asks one question at a time.
type terminalApprover struct {
	mu  sync.Mutex
	in  *bufio.Reader
	out io.Writer
}

func (a *terminalApprover) Approve(ctx context.Context, call tool.Call) (tool.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(a.out, "\nThe model wants to run %s %s. Allow? [y/N] ", call.Name, call.Input)
	line, err := a.in.ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	if err != nil && answer == "" {
		fmt.Fprintln(a.out, "(no answer)")
		return tool.Decision{Reason: "the user did not answer"}, nil
	}
	fmt.Fprintln(a.out, answer)
	if answer == "y" || answer == "yes" {
		return tool.Decision{Approved: true}, nil
	}
	return tool.Decision{Reason: "the user said no"}, nil
}

type deleteArgs struct {
	Path string `json:"path" jsonschema:"the file to delete"`
}

func main() {
	deleteFile := tool.MustFunc("delete_file", "Delete a file.",
		func(_ context.Context, in deleteArgs) (string, error) {
			return "deleted " + in.Path + " (pretend)", nil
		},
		tool.WithApproval(), // every call goes through the Approver
	)
	listFiles := tool.MustFunc("list_files", "List the files of a directory.",
		func(_ context.Context, in struct {
			Dir string `json:"dir"`
		}) ([]string, error) {
			return []string{in.Dir + "/draft.txt", in.Dir + "/notes.txt"}, nil
		})

	model := llmtest.New(
		llmtest.Reply(llmtest.Call("c1", "list_files", `{"dir":"/tmp/work"}`)),
		llmtest.Reply(
			llm.Text{Text: "I'll remove both files."},
			llmtest.Call("c2", "delete_file", `{"path":"/tmp/work/draft.txt"}`),
			llmtest.Call("c3", "delete_file", `{"path":"/tmp/work/notes.txt"}`),
		),
		llmtest.Func(func(_ context.Context, req *llm.Request) (*llm.Response, error) {
			// The scripted model reads what happened, as a real one would.
			var lines []string
			for _, m := range req.Messages[len(req.Messages)-2:] {
				lines = append(lines, "- "+m.Text())
			}
			return &llm.Response{Message: llm.AssistantText("Here is what happened:\n" + strings.Join(lines, "\n"))}, nil
		}),
	)

	a, err := agent.New(model, agent.Config{
		Tools:           []tool.Tool{listFiles, deleteFile},
		Approver:        &terminalApprover{in: bufio.NewReader(os.Stdin), out: os.Stdout},
		ToolConcurrency: 1, // ask in call order
	})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := a.Run(context.Background(), []llm.Message{llm.UserText("Clean up /tmp/work.")}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("\nTool results the model saw:")
	for _, m := range resp.Messages {
		if m.Role == llm.RoleTool {
			fmt.Printf("  %s (error=%v): %s\n", m.ToolCallID, m.IsError, m.Text())
		}
	}
	fmt.Println("\nAssistant:", resp.Text())
}
