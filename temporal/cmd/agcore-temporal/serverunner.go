package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/a2aserve"
	"github.com/agcore/agcore/serve/web"

	agtemporal "github.com/agcore/agcore/temporal"
)

// runnerRequest is one line agcore serve --temporal writes to
// serve-runner's standard input: start a background response's turn, or
// cancel one.
type runnerRequest struct {
	ID int64  `json:"id"`
	Op string `json:"op"` // "start" or "cancel"
	// Agents are the served agents, as data: the turn's agent
	// (Turn.Agent) and those its handoffs and agent tools name are among
	// them. ApproveAll approves every call that needs approval (serve
	// --yes).
	Agents     []agent.Spec      `json:"agents,omitempty"`
	ApproveAll bool              `json:"approve_all,omitempty"`
	Turn       *serve.RemoteTurn `json:"turn,omitempty"`
	// Task, in place of Turn, is an A2A task's turn to start.
	Task *a2aserve.RemoteTask `json:"task,omitempty"`
	// Response is the response id to cancel, or whose approvals to list
	// or decide.
	Response string `json:"response,omitempty"`
	// AGUI is the AG-UI run (its key, PRINCIPAL/RUN) to cancel or whose
	// approvals to list or decide, in place of Response.
	AGUI string `json:"agui,omitempty"`
	// A2A is the A2A task (AGENT/TASK) to cancel, or whose approvals to
	// list or decide, in place of Response.
	A2A string `json:"a2a,omitempty"`
	// Chat is a chat turn of the web page to start ("start", in place of
	// Turn); ChatID (web.ChatLog.ID: PRINCIPAL/SESSION/RUN) names one to
	// cancel, or whose approvals to list or decide, in place of Response.
	Chat   *web.RemoteChat `json:"chat,omitempty"`
	ChatID string          `json:"chat_id,omitempty"`
	// CallID, Approve and Reason are a decision ("decide"); Content, with
	// the approval of an MCP server's request for input, the form's answer
	// (a JSON object's text: agtemporal.Decision.Content).
	CallID  string `json:"call_id,omitempty"`
	Approve bool   `json:"approve,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Content string `json:"content,omitempty"`
}

// runnerReply answers a runnerRequest (by its id): Error is empty on
// success.
type runnerReply struct {
	ID    int64  `json:"id"`
	Error string `json:"error,omitempty"`
	// Code names the error: "unknown_call" for a decision of a call the
	// turn does not wait on, "invalid_content" for a decision whose
	// content does not fit the form it answers (mcp.ErrFormContent).
	Code string `json:"code,omitempty"`
	// Pending answers "pending": the calls the response's turn waits on.
	Pending []serve.RemoteApproval `json:"pending,omitempty"`
	// Status and Ended answer "status": the turn's workflow status
	// (Temporal's name: "Running", "Terminated", "TimedOut", "Failed",
	// "Completed", "Canceled"; "NotFound" for a workflow the server does
	// not know) and whether it ended.
	Status string `json:"status,omitempty"`
	Ended  bool   `json:"ended,omitempty"`
}

func newServeRunnerCmd() *cobra.Command {
	var (
		c         common
		heartbeat time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve-runner",
		Short: "Start and cancel agcore serve's background responses, AG-UI runs and A2A tasks as workflows (agcore serve --temporal runs it)",
		Long: `serve-runner is the Temporal side of agcore serve --temporal, which runs it and
talks to it over its standard input and output (one JSON object a line):
{"id":1,"op":"start","agents":[...],"turn":{...}} starts the turn of a
background response as a workflow (id agcore-response/RESPONSE_ID) on the
task queue's workers; {"id":2,"op":"cancel","response":"resp_..."}
cancels one; {"id":3,"op":"pending","response":"resp_..."} lists the calls
its turn waits on ({"id":3,"pending":[...]}) and {"id":4,"op":"decide",
"response":"resp_...","call_id":"call_1","approve":true} decides one (a
call it does not wait on: "code":"unknown_call"; "content":"{...}" answers
an MCP server's request for input, content that does not fit its form:
"code":"invalid_content"); with "agui":"PRINCIPAL/RUN"
in place of "response", they cancel an AG-UI run's turn (workflow id
agcore-agui/PRINCIPAL/RUN) and list and decide its calls. A chat turn of
the web page: {"op":"start","agents":[...],"chat":{...}} starts it
(workflow id agcore-web/PRINCIPAL/SESSION/RUN), and
"chat_id":"PRINCIPAL/SESSION/RUN" in place of "response" cancels it or
lists and decides its calls. An A2A task: {"op":"start","agents":[...],
"task":{...}} starts its turn (workflow id agcore-a2a/AGENT/TASK), and
"a2a":"AGENT/TASK" in place of "response" cancels it or lists and
decides its calls. {"id":5,"op":"status","response":"resp_..."}
(or "agui", "chat_id" or "a2a") describes the turn's workflow: {"id":5,
"status":"Terminated","ended":true} ("Running" without "ended"; "NotFound",
without "ended", for a workflow the server does not know: never started,
or its history purged). Each is answered
{"id":N} or {"id":N,"error":"..."}. It exits when its input ends.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			cl, err := c.dial(ctx, slog.LevelWarn, "agcore-serve")
			if err != nil {
				return err
			}
			defer cl.Close()
			defer c.tracing.close()
			fmt.Fprintf(os.Stderr, "agcore-temporal: serve-runner on %s, task queue %s\n", c.address, c.queue)
			return serveRunner(ctx, os.Stdin, os.Stdout, func(ctx context.Context, req runnerRequest) (runnerReply, error) {
				switch req.Op {
				case "start":
					if req.Task != nil {
						in := a2aInput(req)
						in.Timeouts.Heartbeat = heartbeat
						return runnerReply{}, agtemporal.StartA2A(ctx, cl, c.queue, in)
					}
					if req.Chat != nil {
						in := chatInput(req)
						in.Timeouts.Heartbeat = heartbeat
						return runnerReply{}, agtemporal.StartWeb(ctx, cl, c.queue, in)
					}
					if req.Turn == nil {
						return runnerReply{}, errors.New("start: no turn")
					}
					in := turnInput(req)
					in.Timeouts.Heartbeat = heartbeat
					return runnerReply{}, agtemporal.StartResponse(ctx, cl, c.queue, in)
				case "cancel":
					if req.A2A != "" {
						agentName, task, _ := strings.Cut(req.A2A, "/")
						return runnerReply{}, agtemporal.CancelA2A(ctx, cl, agentName, task)
					}
					if req.ChatID != "" {
						return runnerReply{}, agtemporal.CancelWeb(ctx, cl, req.ChatID)
					}
					if req.AGUI != "" {
						return runnerReply{}, agtemporal.CancelAGUI(ctx, cl, req.AGUI)
					}
					return runnerReply{}, agtemporal.CancelResponse(ctx, cl, req.Response)
				case "pending", "decide":
					return runnerApprovals(ctx, cl, req)
				case "status":
					return runnerStatus(ctx, cl, req)
				}
				return runnerReply{}, fmt.Errorf("unknown op %q", req.Op)
			})
		},
	}
	c.add(cmd)
	cmd.Flags().DurationVar(&heartbeat, "model-heartbeat", 0, "heartbeat timeout of a model call (default 20s)")
	return cmd
}

// turnInput is the workflow input of a start request.
func turnInput(req runnerRequest) agtemporal.TurnInput {
	t := req.Turn
	log := t.Log
	in := agtemporal.TurnInput{Agents: req.Agents, Agent: t.Agent, Principal: t.Owner, SessionID: t.SessionID, TurnID: t.TurnID,
		Messages: t.Input, RunInstructions: t.Instructions, Temperature: t.Temperature, MaxTokens: t.MaxTokens,
		ApproveAll: req.ApproveAll, Response: &log, Timeout: t.Timeout}
	if t.AGUI != nil { // an AG-UI run (agui.go), not a response
		in.Response, in.AGUI = nil, t.AGUI
	}
	if q := t.Quota; q != nil {
		in.Quota = &agtemporal.Quota{Total: q.Total, PerDay: q.PerDay}
		if q.Principal != t.Owner {
			in.QuotaPrincipal = q.Principal
		}
	}
	return in
}

// a2aInput is the workflow input of a start request of an A2A task.
func a2aInput(req runnerRequest) agtemporal.TurnInput {
	t := req.Task
	log := t.Log
	return agtemporal.TurnInput{Agents: req.Agents, Agent: t.Agent, Principal: t.Owner, SessionID: t.SessionID, TurnID: t.TurnID,
		Messages: t.Input, ApproveAll: req.ApproveAll, A2A: &log}
}

// chatInput is the workflow input of a start request of a chat turn of
// the web page.
func chatInput(req runnerRequest) agtemporal.TurnInput {
	t := req.Chat
	log := t.Log
	in := agtemporal.TurnInput{Agents: req.Agents, Agent: t.Agent, Principal: log.Owner, SessionID: log.Session, TurnID: log.Run,
		Messages: t.Input, ApproveAll: req.ApproveAll, Web: &log}
	if q := t.Quota; q != nil {
		in.Quota = &agtemporal.Quota{Total: q.Total, PerDay: q.PerDay}
		if q.Principal != log.Owner {
			in.QuotaPrincipal = q.Principal
		}
	}
	return in
}

// serveRunner answers the requests read from in, each on a goroutine of
// its own (bounded in time), writing the replies to out one a line, until
// in ends.
func serveRunner(ctx context.Context, in io.Reader, out io.Writer, do func(context.Context, runnerRequest) (runnerReply, error)) error {
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	enc := json.NewEncoder(out)
	reply := func(r runnerReply) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(r)
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var req runnerRequest
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			reply(runnerReply{ID: req.ID, Error: "bad request: " + err.Error()})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			r, err := do(rctx, req)
			r.ID = req.ID
			if err != nil {
				r.Error = err.Error()
			}
			reply(r)
		}()
	}
	wg.Wait()
	return sc.Err()
}

// runnerStatus answers "status": the workflow of the response's (or the
// AG-UI run's, or the web page's chat turn's) turn described, its status
// and whether it ended; "NotFound" (not ended) for a workflow the server
// does not know: never started, or its history already purged.
func runnerStatus(ctx context.Context, cl client.Client, req runnerRequest) (runnerReply, error) {
	id := agtemporal.ResponseWorkflowID(req.Response)
	switch {
	case req.ChatID != "":
		id = agtemporal.WebWorkflowID(req.ChatID)
	case req.AGUI != "":
		id = agtemporal.AGUIWorkflowID(req.AGUI)
	case req.A2A != "":
		agentName, task, _ := strings.Cut(req.A2A, "/")
		id = agtemporal.A2AWorkflowID(agentName, task)
	}
	d, err := cl.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return runnerReply{Status: "NotFound"}, nil
	}
	if err != nil {
		return runnerReply{}, err
	}
	st := d.GetWorkflowExecutionInfo().GetStatus()
	return runnerReply{Status: st.String(), Ended: st != enums.WORKFLOW_EXECUTION_STATUS_RUNNING}, nil
}
