package agtemporal

// Background responses of agcore serve --temporal: a TurnWorkflow whose
// input carries a serve.ResponseLog writes the turn's progress, as the
// Responses API's events, to the serving processes' event log, and its
// outcome to the response's record, so that any replica streams, polls
// and cancels it while the turn runs on the workers.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/tool"
)

// EventsFlushInterval is the least workflow time between two writes of a
// background response's events (the final write excepted).
const EventsFlushInterval = 50 * time.Millisecond

// eventsWriteTimeout bounds one attempt of a write of a background
// response's events.
const eventsWriteTimeout = 10 * time.Second

// responseFlushVersion is the change id (workflow.GetVersion) of the
// events writer whose pause ends with the turn.
const responseFlushVersion = "agcore.response-flush"

// aguiApprovalVersion is the change id (workflow.GetVersion) of an AG-UI
// run whose calls that wait for a decision are shown by the interrupt
// event agcore.approval_required.
const aguiApprovalVersion = "agcore.agui-approval-event"

const (
	activityResponseEvents = "agcore.ResponseEvents"
	activityResponseEnd    = "agcore.ResponseEnd"
)

// ResponseEventsInput is one write of a background response's events.
type ResponseEventsInput struct {
	Run       string
	Events    []runlog.Event
	Retention time.Duration
}

// ResponseEndInput is the end of a background response: its outcome.
type ResponseEndInput struct {
	Log     serve.ResponseLog
	Outcome serve.ResponseOutcome
}

// ResponseWorkflowID is the workflow id of the turn of an agcore serve
// background response.
func ResponseWorkflowID(responseID string) string { return "agcore-response/" + responseID }

// StartResponse starts the turn of a background response (in.Response
// set), workflow id ResponseWorkflowID, or finds it already started: a
// response id runs at most once. Given an AG-UI run's input (in.AGUI set)
// it starts that run (StartAGUI), so that serve-runner starts either of
// agcore serve's remote turns with one call.
func StartResponse(ctx context.Context, c client.Client, taskQueue string, in TurnInput) error {
	if in.AGUI != nil && in.Response == nil {
		return StartAGUI(ctx, c, taskQueue, in)
	}
	if in.Response == nil {
		return errors.New("agtemporal: StartResponse needs TurnInput.Response")
	}
	return startOnce(ctx, c, taskQueue, in, ResponseWorkflowID(in.Response.ResponseID), enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
}

// startOnce starts the TurnWorkflow of one of agcore serve's remote turns
// under id, or finds it already started (the id names the turn: a second
// start is the same turn); reuse says whether an ended turn's id may run
// again.
func startOnce(ctx context.Context, c client.Client, taskQueue string, in TurnInput, id string, reuse enums.WorkflowIdReusePolicy) error {
	if err := validateInput(&in); err != nil {
		return err
	}
	if taskQueue == "" {
		taskQueue = DefaultTaskQueue
	}
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       id,
		TaskQueue:                taskQueue,
		WorkflowIDReusePolicy:    reuse,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, TurnWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	return err
}

// CancelResponse asks the turn of a background response to stop: it ends
// "cancelled", every tool call of its output answered. A turn that is
// unknown or already over is not an error.
func CancelResponse(ctx context.Context, c client.Client, responseID string) error {
	return cancelWorkflow(ctx, c, ResponseWorkflowID(responseID))
}

// CancelAGUI asks the turn of an agcore serve AG-UI run (its lease
// record's key, PRINCIPAL/RUN) to stop: the run ends RUN_ERROR with the
// code "cancelled", its tool calls answered. A run that is unknown or
// already over is not an error.
func CancelAGUI(ctx context.Context, c client.Client, key string) error {
	return cancelWorkflow(ctx, c, AGUIWorkflowID(key))
}

// cancelWorkflow cancels the workflow id; an unknown one is not an error.
func cancelWorkflow(ctx context.Context, c client.Client, id string) error {
	err := c.CancelWorkflow(ctx, id, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	return err
}

// respond runs the turn as run does, showing its updates as the Responses
// API's events: they are buffered in the workflow and written by an
// activity at most once per EventsFlushInterval of workflow time (a
// coroutine of their own, so the turn never waits for a write), and the
// final write, after the turn, holds the outcome. The writes run on a
// disconnected context: a cancelled turn still ends its response
// ("cancelled").
//
// TurnInput.Timeout, when positive, bounds the turn (a durable timer, not
// the workflow's execution timeout, so that the response still ends):
// past it the turn is cancelled and the response fails with the code
// "timeout".
func (d *driver) respond(ctx workflow.Context, run func(ctx workflow.Context, fn func(agent.Update) bool) (*agent.Response, error)) (*agent.Response, error) {
	n := 0
	ids := func(prefix string) string {
		n++
		return fmt.Sprintf("%s%s_%d", prefix, d.in.TurnID, n)
	}
	// The translation is pure (no clock, no I/O; its ids are ids, not
	// random), and encoding/json's reflection is deterministic, which
	// workflowcheck cannot see: the replay tests over committed histories
	// check it (history-v2-response.json, history-v2-agui.json).
	var (
		ev  translator
		err error
	)
	switch {
	case d.in.A2A != nil:
		now := func() time.Time { return workflow.Now(ctx) }
		ev, err = newA2ATranslator(*d.in.A2A, d.in.Principal, now, ids) //workflowcheck:ignore
	case d.in.Web != nil:
		ev = newWebTranslator(*d.in.Web) //workflowcheck:ignore
	case d.in.AGUI != nil:
		ev = newAGUITranslator(*d.in.AGUI, ids) //workflowcheck:ignore
	default:
		ev, err = newResponseTranslator(*d.in.Response, ids) //workflowcheck:ignore
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	run0, retention := ev.log()
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	actx := workflow.WithActivityOptions(dctx, workflow.ActivityOptions{
		StartToCloseTimeout: d.to.Persist,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
	})
	var (
		pending      []runlog.Event
		done, exited bool
		last         time.Time // of the last write, workflow time
		flushes      int
	)
	// A durable timer fires a second late at best (the server's timer
	// precision), so the pause between two writes, shorter than that, is
	// cut short by the turn's end: the events still pending go with the
	// final write instead of holding it (version 1). Histories recorded
	// before it keep their full pause (DefaultVersion).
	endCutsPause := workflow.GetVersion(ctx, responseFlushVersion, workflow.DefaultVersion, 1) >= 1
	workflow.Go(dctx, func(c workflow.Context) {
		defer func() { exited = true }()
		for {
			_ = workflow.Await(c, func() bool { return len(pending) > 0 || done })
			if len(pending) == 0 || endCutsPause && done {
				return // done; the final write holds what is pending
			}
			if wait := EventsFlushInterval - workflow.Now(c).Sub(last); wait > 0 && !last.IsZero() {
				if !endCutsPause {
					_ = workflow.Sleep(c, wait)
				} else if _, _ = workflow.AwaitWithTimeout(c, wait, func() bool { return done }); done {
					return
				}
			}
			batch := pending
			pending = nil
			last = workflow.Now(c)
			flushes++
			// A write is one store operation: a short timeout, so that a
			// write its worker died in is tried again soon (the final
			// write waits for this one).
			wctx := workflow.WithActivityOptions(actx, workflow.ActivityOptions{
				ActivityID: fmt.Sprintf("events-%d", flushes), StartToCloseTimeout: eventsWriteTimeout,
				RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 10},
			})
			// A write that fails for good loses those events only: the
			// final write still ends the response.
			activity, input := any(activityResponseEvents), any(ResponseEventsInput{Run: run0, Events: batch, Retention: retention})
			if f, ok := ev.(flusher); ok {
				activity, input = f.flush(batch) //workflowcheck:ignore
			}
			_ = workflow.ExecuteActivity(wctx, activity, input).Get(c, nil)
		}
	})
	// An AG-UI run shows each call that waits for a decision as a run of
	// the serving process does, with the event agcore.approval_required
	// (version 1); histories recorded before it show none.
	if a, ok := ev.(*aguiTranslator); ok && workflow.GetVersion(ctx, aguiApprovalVersion, workflow.DefaultVersion, 1) >= 1 {
		d.waiting = func(call tool.Call) {
			a.ev.ApprovalRequired(call.ID, call.Name, call.Input) //workflowcheck:ignore
			pending = append(pending, a.ev.Take()...)
		}
	}
	// An A2A task waits for a decision input-required, its status
	// message naming the waiting calls.
	if a, ok := ev.(*a2aTranslator); ok {
		d.waiting = func(call tool.Call) {
			a.ev.Waiting(call.ID, call.Name, call.Input) //workflowcheck:ignore
			pending = append(pending, a.take()...)       //workflowcheck:ignore
		}
	}
	// A chat turn of the web page shows it with the page's approval event
	// (a path newer than the version above: no marker).
	if wt, ok := ev.(*webTranslator); ok {
		d.waiting = func(call tool.Call) {
			wt.ev.ApprovalRequired(call.ID, call.Name, call.Input) //workflowcheck:ignore
			pending = append(pending, wt.ev.Take()...)
		}
	}
	tctx, stop := workflow.WithCancel(ctx)
	timedOut := false
	if d.in.Timeout > 0 {
		workflow.Go(tctx, func(c workflow.Context) {
			if workflow.Sleep(c, d.in.Timeout) == nil {
				timedOut = true
				stop()
			}
		})
	}
	resp, runErr := run(tctx, func(u agent.Update) bool {
		pending = append(pending, ev.update(u)...) //workflowcheck:ignore
		return true
	})
	done = true
	stop() // the timer, if any
	_ = workflow.Await(dctx, func() bool { return exited })
	cancelled := ctx.Err() != nil
	if timedOut && runErr != nil && !cancelled {
		runErr = fmt.Errorf("agtemporal: the turn took longer than %s: %w", d.in.Timeout, context.DeadlineExceeded)
	}
	endActivity, endInput := ev.end(resp, runErr, cancelled, pending) //workflowcheck:ignore
	ectx := workflow.WithActivityOptions(actx, workflow.ActivityOptions{
		ActivityID: "events-end", StartToCloseTimeout: 3 * eventsWriteTimeout,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 20},
	})
	if err := workflow.ExecuteActivity(ectx, endActivity, endInput).Get(dctx, nil); err != nil {
		return resp, errors.Join(runErr, err)
	}
	return resp, runErr
}

// translator turns a turn's updates into a protocol's events, written
// to the serving processes' event log (a background response's, an AG-UI
// run's, a chat turn of the web page's). It does no I/O: the workflow writes the events by activities.
type translator interface {
	// log is the event log's run and the events' retention.
	log() (run string, retention time.Duration)
	// update returns the events of one update.
	update(u agent.Update) []runlog.Event
	// end returns the activity that ends the turn's output and its input:
	// pending (the events not yet written), then the last ones.
	end(resp *agent.Response, err error, cancelled bool, pending []runlog.Event) (activity string, input any)
}

// flusher is a translator whose events are written by an activity of
// its own (not the event log's ResponseEvents): an A2A task's.
type flusher interface {
	// flush returns the activity that writes batch and its input.
	flush(batch []runlog.Event) (activity string, input any)
}

// responseTranslator is a background response's: serve.ResponseEvents,
// ended by the ResponseEnd activity (serve.FinishResponse).
type responseTranslator struct {
	l  serve.ResponseLog
	ev *serve.ResponseEvents
}

func newResponseTranslator(l serve.ResponseLog, ids func(string) string) (*responseTranslator, error) {
	ev, err := serve.NewResponseEvents(l, ids)
	if err != nil {
		return nil, err
	}
	return &responseTranslator{l: l, ev: ev}, nil
}

func (t *responseTranslator) log() (string, time.Duration) { return t.l.Run, t.l.Retention }

func (t *responseTranslator) update(u agent.Update) []runlog.Event {
	if t.ev.Update(u) != nil {
		return nil
	}
	return t.ev.Take()
}

func (t *responseTranslator) end(resp *agent.Response, err error, cancelled bool, pending []runlog.Event) (string, any) {
	out, _ := t.ev.End(resp, err, cancelled)
	out.Events = append(pending, out.Events...)
	return activityResponseEnd, ResponseEndInput{Log: t.l, Outcome: out}
}

// records is the worker store's records, where the serving processes keep
// responses and their events.
func (a *activities) records() (session.Records, error) {
	recs, ok := session.RecordsOf(a.opts.Store)
	if !ok || a.opts.Store == nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker's store keeps no records: background responses need one (the serving processes' --store)", "agcore.NoStore", nil)
	}
	return recs, nil
}

// ResponseEvents writes one batch of a background response's events to
// the event log; written again (a retry), it changes nothing.
func (a *activities) ResponseEvents(ctx context.Context, in ResponseEventsInput) error {
	recs, err := a.records()
	if err != nil {
		return err
	}
	return (&runlog.Log{Records: recs, Retention: in.Retention}).AppendBatch(ctx, in.Run, in.Events, false)
}

// ResponseEnd writes a background response's outcome: its record, then
// its last events (serve.FinishResponse).
func (a *activities) ResponseEnd(ctx context.Context, in ResponseEndInput) error {
	recs, err := a.records()
	if err != nil {
		return err
	}
	err = serve.FinishResponse(ctx, recs, in.Log, in.Outcome)
	if errors.Is(err, session.ErrConflict) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	return err
}
