package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/agcore/agcore/cmd/agcore/internal/render"
	"github.com/agcore/agcore/tool"
)

// askFunc asks the user question and returns the line typed.
type askFunc func(ctx context.Context, question string) (string, error)

// approver decides the calls of tools that need approval (write_file, and
// MCP servers configured with "approval"): --yes approves them, an
// interactive terminal asks, and anything else denies them with a reason
// the model reads.
type approver struct {
	yes   bool
	ask   askFunc                // nil when nobody can be asked
	pause func() (resume func()) // clears the status line around a question
	mu    sync.Mutex             // one question at a time: a batch's calls are decided in parallel
}

// Approve implements tool.Approver.
func (p *approver) Approve(ctx context.Context, call tool.Call) (tool.Decision, error) {
	if p.yes {
		return tool.Decision{Approved: true}, nil
	}
	if p.ask == nil {
		return tool.Decision{Reason: "it needs the user's approval, and agcore is not running interactively (the user can allow it with --yes)"}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	resume := p.pause()
	defer resume()
	q := fmt.Sprintf("Allow %s %s? [y/N] ", call.Name, render.ShortArgs(call.Input, 160))
	answer, err := p.ask(ctx, q)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Decision{}, ctx.Err()
		}
		return tool.Decision{Reason: "the user did not approve it"}, nil
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return tool.Decision{Approved: true}, nil
	}
	return tool.Decision{Reason: "the user declined"}, nil
}

// lineAsker asks on w and reads answers from r, a line at a time. The
// reading goroutine starts at the first question and lives as long as r
// can be read, so a cancelled question does not lose the next answer.
type lineAsker struct {
	w     io.Writer
	r     io.Reader
	once  sync.Once
	lines chan string
}

func (l *lineAsker) ask(ctx context.Context, question string) (string, error) {
	l.once.Do(func() {
		l.lines = make(chan string)
		go func() {
			defer close(l.lines)
			sc := bufio.NewScanner(l.r)
			for sc.Scan() {
				l.lines <- sc.Text()
			}
		}()
	})
	fmt.Fprint(l.w, question)
	select {
	case line, ok := <-l.lines:
		if !ok {
			return "", io.EOF
		}
		return line, nil
	case <-ctx.Done():
		fmt.Fprintln(l.w)
		return "", ctx.Err()
	}
}
