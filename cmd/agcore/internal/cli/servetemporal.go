package cli

// agcore serve --temporal: background responses, AG-UI runs and the web
// page's chat turns (servewebtemporal.go) run as Temporal workflows on the
// workers (agcore worker), so that they outlive the replica that accepted
// them. This process keeps serving every endpoint;
// its serve.Runner hands each background turn, as data, to a child
// agcore-temporal serve-runner (the Temporal SDK lives in its own module,
// which agcore cannot import), which starts and cancels the workflows.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/cmd/agcore/internal/config"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/web"
)

// addServeTemporalFlags adds serve's durable flags.
func addServeTemporalFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.String("temporal", "", "run every turn that outlives its connection (background responses, AG-UI runs, A2A tasks, the web page's chat turns) as a Temporal workflow on the server at HOST:PORT, on the workers of agcore worker (with agcore-temporal): it goes on when this server dies")
	fs.String("namespace", "", `with --temporal: the Temporal namespace (default "default")`)
	fs.String("task-queue", "", `with --temporal: the task queue of the workers (default "agcore")`)
	fs.Duration("model-heartbeat", 0, "with --temporal: heartbeat timeout of a model call, after which a call whose worker died runs again on another (default 20s)")
}

// temporalRunner is agcore serve --temporal's serve.Runner: a remote
// runner (serve.RemoteRunner) whose requests go to a child agcore-temporal
// serve-runner, one JSON line each, answered by id. A turn it cannot take
// (the client's declared tools) runs in this process (serve.InProcess).
type temporalRunner struct {
	serve.InProcess
	bin        string
	args       []string
	agents     []agent.Spec
	approveAll bool
	stderr     io.Writer

	mu      sync.Mutex
	stdin   io.WriteCloser
	cmd     *exec.Cmd
	exited  chan struct{} // closed when cmd has exited
	next    int64
	waiting map[int64]chan runnerMsg
}

type runnerMsg struct {
	ID         int64             `json:"id"`
	Op         string            `json:"op,omitempty"`
	Agents     []agent.Spec      `json:"agents,omitempty"`
	ApproveAll bool              `json:"approve_all,omitempty"`
	Turn       *serve.RemoteTurn `json:"turn,omitempty"`
	Response   string            `json:"response,omitempty"`
	AGUI       string            `json:"agui,omitempty"` // an AG-UI run's key, for its approvals
	// A chat turn of the web page to start, or the id of one
	// (web.ChatLog.ID) to cancel, or whose approvals to list or decide
	// (servewebtemporal.go).
	Chat   *web.RemoteChat `json:"chat,omitempty"`
	ChatID string          `json:"chat_id,omitempty"`
	// An A2A task's turn to start, or the task (AGENT/TASK) to cancel,
	// or whose approvals to list or decide (servetempa2a.go).
	Task  *a2aserve.RemoteTask `json:"task,omitempty"`
	A2A   string               `json:"a2a,omitempty"`
	Error string               `json:"error,omitempty"`
	// The approvals of a response's turn (servetempapprovals.go).
	CallID  string                 `json:"call_id,omitempty"`
	Approve bool                   `json:"approve,omitempty"`
	Reason  string                 `json:"reason,omitempty"`
	Content string                 `json:"content,omitempty"` // an MCP form's answer
	Pending []serve.RemoteApproval `json:"pending,omitempty"`
	Code    string                 `json:"code,omitempty"`
	// The answer to "status": the workflow's status (Temporal's name of
	// it, "Running", "Terminated", ...; "NotFound" for a workflow the
	// server does not know) and whether it ended.
	Status string `json:"status,omitempty"`
	Ended  bool   `json:"ended,omitempty"`
}

// newTemporalRunner returns the runner of agcore serve --temporal ADDR,
// its child started (so that a missing agcore-temporal or an unreachable
// server is said at once).
func (a *app) newTemporalRunner(cmd *cobra.Command, s *config.Settings, file *config.File) (*temporalRunner, error) {
	addr, _ := cmd.Flags().GetString("temporal")
	bin, err := a.temporalBinary()
	if err != nil {
		return nil, err
	}
	args := []string{"serve-runner", "--temporal=" + addr}
	for _, f := range []string{"namespace", "task-queue", "model-heartbeat"} {
		if fl := cmd.Flags().Lookup(f); fl.Changed {
			args = append(args, "--"+f+"="+fl.Value.String())
		}
	}
	specs, err := a.servedSpecs(cmd, s, file)
	if err != nil {
		return nil, err
	}
	r := &temporalRunner{bin: bin, args: args, agents: specs, approveAll: s.Yes, stderr: a.env.Stderr}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.startLocked(); err != nil {
		return nil, exit(ExitFailed, "--temporal: %v", err)
	}
	return r, nil
}

// servedSpecs are the served agents as data: "agcore" (the settings'),
// then the config file's, each with its handoffs.
func (a *app) servedSpecs(cmd *cobra.Command, s *config.Settings, file *config.File) ([]agent.Spec, error) {
	specs := []agent.Spec{durableSpec(s, "agcore")}
	for _, name := range slices.Sorted(maps.Keys(file.Agents)) {
		in := a.input(cmd)
		in.Flags[config.AgentFlag] = name
		hs, err := resolveDurable(in)
		if err != nil {
			return nil, exit(ExitUsage, "agent %q of the config file: %v", name, err)
		}
		sp := durableSpec(hs, name)
		sp.Handoffs = slices.Clone(file.Agents[name].Handoffs)
		specs = append(specs, sp)
	}
	return specs, nil
}

// startLocked starts the child; r.mu is held.
func (r *temporalRunner) startLocked() error {
	c := exec.Command(r.bin, r.args...)
	c.Stderr = r.stderr
	c.Env = append(os.Environ(), "AGCORE_VIA_AGCORE=1")
	c.SysProcAttr = childAttr()
	in, err := c.StdinPipe()
	if err != nil {
		return err
	}
	out, err := c.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", r.bin, err)
	}
	r.cmd, r.stdin, r.waiting = c, in, map[int64]chan runnerMsg{}
	r.exited = make(chan struct{})
	waiting, exited := r.waiting, r.exited
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var m runnerMsg
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			r.mu.Lock()
			ch := waiting[m.ID]
			delete(waiting, m.ID)
			r.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		}
		_ = c.Wait()
		r.mu.Lock()
		defer r.mu.Unlock()
		for id, ch := range waiting {
			ch <- runnerMsg{ID: id, Error: "agcore-temporal serve-runner exited"}
			delete(waiting, id)
		}
		if r.cmd == c {
			r.cmd, r.stdin = nil, nil // the next request starts another
		}
	}()
	return nil
}

// call sends m and waits for its answer.
func (r *temporalRunner) call(ctx context.Context, m runnerMsg) error {
	_, err := r.ask(ctx, m)
	return err
}

// ask sends m and returns its answer; an answer with an error is also
// the error.
func (r *temporalRunner) ask(ctx context.Context, m runnerMsg) (runnerMsg, error) {
	r.mu.Lock()
	if r.cmd == nil {
		if err := r.startLocked(); err != nil {
			r.mu.Unlock()
			return runnerMsg{}, err
		}
	}
	r.next++
	m.ID = r.next
	ch := make(chan runnerMsg, 1)
	r.waiting[m.ID] = ch
	b, _ := json.Marshal(m)
	_, err := r.stdin.Write(append(b, '\n'))
	if err != nil {
		delete(r.waiting, m.ID)
	}
	r.mu.Unlock()
	if err != nil {
		return runnerMsg{}, fmt.Errorf("agcore-temporal serve-runner: %w", err)
	}
	select {
	case a := <-ch:
		if a.Error != "" {
			return a, errors.New(a.Error)
		}
		return a, nil
	case <-ctx.Done():
		return runnerMsg{}, context.Cause(ctx)
	}
}

// StartRemote implements serve.RemoteRunner.
func (r *temporalRunner) StartRemote(ctx context.Context, t serve.RemoteTurn) error {
	return r.call(ctx, runnerMsg{Op: "start", Agents: r.agents, ApproveAll: r.approveAll, Turn: &t})
}

// CancelRemote implements serve.RemoteRunner.
func (r *temporalRunner) CancelRemote(ctx context.Context, responseID string) error {
	return r.call(ctx, runnerMsg{Op: "cancel", Response: responseID})
}

// The runner says whether a remote turn's workflow still runs.
var _ serve.RemoteWatcher = (*temporalRunner)(nil)

// RemoteEnded implements serve.RemoteWatcher: the serve-runner child
// describes the turn's workflow (its "status" op); one that is no longer
// running ended without the turn's outcome when serve asks (the outcome's
// write is its last activity). One the server does not know is
// serve.ErrRemoteNotFound.
func (r *temporalRunner) RemoteEnded(ctx context.Context, responseID, aguiKey string) (bool, string, error) {
	return r.workflowEnded(ctx, runnerMsg{Op: "status", Response: responseID, AGUI: aguiKey}, serve.ErrRemoteNotFound)
}

// workflowNotFound is serve-runner's status of a workflow the Temporal
// server does not know.
const workflowNotFound = "NotFound"

// workflowEnded asks serve-runner the status m names: ended, and why, or
// notFound (wrapped) for a workflow the server does not know.
func (r *temporalRunner) workflowEnded(ctx context.Context, m runnerMsg, notFound error) (bool, string, error) {
	a, err := r.ask(ctx, m)
	if err != nil {
		return false, "", err
	}
	if a.Status == workflowNotFound {
		return false, "", fmt.Errorf("agcore-temporal serve-runner: no workflow for the turn: %w", notFound)
	}
	if !a.Ended {
		return false, "", nil
	}
	return true, fmt.Sprintf("the Temporal workflow running the turn ended without its outcome (workflow status %s)", a.Status), nil
}

// Close ends the child: its input closed, it exits once its requests
// are answered (at most a few seconds).
func (r *temporalRunner) Close() {
	r.mu.Lock()
	c, in, exited := r.cmd, r.stdin, r.exited
	r.cmd, r.stdin = nil, nil
	r.mu.Unlock()
	if c == nil {
		return
	}
	_ = in.Close()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = c.Process.Kill()
		<-exited
	}
}
