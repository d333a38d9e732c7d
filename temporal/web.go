package agtemporal

// The web page's chat turns of agcore serve --temporal: a TurnWorkflow
// whose input carries a web.ChatLog writes the turn's progress, as the
// page's events, to the serving processes' event log, and ends the turn
// (its final event, its run record deleted), so that the page on any
// replica follows it while the turn runs on the workers. The workflow is
// respond's (respond.go), with the page's translation (web.ChatEvents).

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/serve/runlog"
	"github.com/agcore/agcore/serve/web"
)

const activityWebEnd = "agcore.WebEnd"

// WebEndInput is the end of a chat turn of the web page: its last
// events, the final one (finish or error) last.
type WebEndInput struct {
	Log    web.ChatLog
	Events []runlog.Event
}

// WebWorkflowID is the workflow id of a chat turn of agcore serve's web
// page, by its id (web.ChatLog.ID: PRINCIPAL/SESSION/RUN).
func WebWorkflowID(id string) string { return "agcore-web/" + id }

// StartWeb starts a chat turn of the web page (in.Web set), workflow id
// WebWorkflowID, or finds it already started: a turn's id (its run id
// fresh for each turn) runs at most once.
func StartWeb(ctx context.Context, c client.Client, taskQueue string, in TurnInput) error {
	if in.Web == nil {
		return errors.New("agtemporal: StartWeb needs TurnInput.Web")
	}
	return startOnce(ctx, c, taskQueue, in, WebWorkflowID(in.Web.ID()), enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
}

// CancelWeb asks the chat turn id (web.ChatLog.ID) to stop: it ends with
// the page's error event of a stopped turn, every tool call answered,
// nothing of it stored. A turn that is unknown or already over is not an
// error.
func CancelWeb(ctx context.Context, c client.Client, id string) error {
	err := c.CancelWorkflow(ctx, WebWorkflowID(id), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return nil
	}
	return err
}

// PendingWeb returns the calls the chat turn id (web.ChatLog.ID) waits
// on; none (no error) when no such workflow runs.
func PendingWeb(ctx context.Context, c client.Client, id string) ([]PendingApproval, error) {
	return pendingOf(ctx, c, WebWorkflowID(id))
}

// DecideWeb sends d to the chat turn id (web.ChatLog.ID) and waits until
// the workflow has recorded it. It returns an error wrapping
// ErrUnknownCall when the turn does not wait on d.CallID: never did,
// already decided, or no such workflow runs.
func DecideWeb(ctx context.Context, c client.Client, id string, d Decision) error {
	return decideOf(ctx, c, WebWorkflowID(id), "chat turn "+id, d)
}

// webTranslator is a chat turn's: web.ChatEvents, ended by the WebEnd
// activity (web.FinishChat).
type webTranslator struct {
	l  web.ChatLog
	ev *web.ChatEvents
}

func newWebTranslator(l web.ChatLog) *webTranslator {
	return &webTranslator{l: l, ev: web.NewChatEvents(l)}
}

func (t *webTranslator) log() (string, time.Duration) { return t.l.EventLog(), t.l.Retention }

func (t *webTranslator) update(u agent.Update) []runlog.Event {
	t.ev.Update(u)
	return t.ev.Take()
}

func (t *webTranslator) end(resp *agent.Response, err error, cancelled bool, pending []runlog.Event) (string, any) {
	last, _ := t.ev.End(resp, err, cancelled)
	return activityWebEnd, WebEndInput{Log: t.l, Events: append(pending, last...)}
}

// WebEnd writes a chat turn's last events and deletes its run record
// (web.FinishChat).
func (a *activities) WebEnd(ctx context.Context, in WebEndInput) error {
	if _, err := a.records(); err != nil {
		return err
	}
	return web.FinishChat(ctx, a.opts.Store, in.Log, in.Events)
}
