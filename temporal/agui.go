package agtemporal

// AG-UI runs of agcore serve --temporal: a TurnWorkflow whose input
// carries a serve.AGUILog writes the turn's progress, as AG-UI's events,
// to the serving processes' event log, and ends the run (its final event,
// its lease record deleted), so that any replica streams it while the
// turn runs on the workers. The workflow is respond's (respond.go), with
// AG-UI's translation (serve.AGUIEvents).

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/serve"
	"github.com/agcore/agcore/serve/runlog"
)

const activityAGUIEnd = "agcore.AGUIEnd"

// AGUIEndInput is the end of an AG-UI run: its last events, the final
// one (RUN_FINISHED or RUN_ERROR) last.
type AGUIEndInput struct {
	Log    serve.AGUILog
	Events []runlog.Event
}

// AGUIWorkflowID is the workflow id of the turn of an agcore serve AG-UI
// run, by its lease record's key (PRINCIPAL/RUN: serve.AGUILog.Key).
func AGUIWorkflowID(key string) string { return "agcore-agui/" + key }

// StartAGUI starts the turn of an AG-UI run (in.AGUI set), workflow id
// AGUIWorkflowID, or finds it running: a run id runs once at a time (the
// serving process refuses a run id whose lease record is there); an
// ended run's id may run again.
func StartAGUI(ctx context.Context, c client.Client, taskQueue string, in TurnInput) error {
	if in.AGUI == nil {
		return errors.New("agtemporal: StartAGUI needs TurnInput.AGUI")
	}
	return startOnce(ctx, c, taskQueue, in, AGUIWorkflowID(in.AGUI.Key), enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE)
}

// aguiTranslator is an AG-UI run's: serve.AGUIEvents, ended by the
// AGUIEnd activity (serve.FinishAGUI).
type aguiTranslator struct {
	l  serve.AGUILog
	ev *serve.AGUIEvents
}

func newAGUITranslator(l serve.AGUILog, ids func(string) string) *aguiTranslator {
	return &aguiTranslator{l: l, ev: serve.NewAGUIEvents(l, ids)}
}

func (t *aguiTranslator) log() (string, time.Duration) { return t.l.Run, t.l.Retention }

func (t *aguiTranslator) update(u agent.Update) []runlog.Event {
	if t.ev.Update(u) != nil {
		return nil
	}
	return t.ev.Take()
}

func (t *aguiTranslator) end(resp *agent.Response, err error, cancelled bool, pending []runlog.Event) (string, any) {
	last, _ := t.ev.End(resp, err, cancelled)
	return activityAGUIEnd, AGUIEndInput{Log: t.l, Events: append(pending, last...)}
}

// AGUIEnd writes an AG-UI run's last events and deletes its lease record
// (serve.FinishAGUI).
func (a *activities) AGUIEnd(ctx context.Context, in AGUIEndInput) error {
	recs, err := a.records()
	if err != nil {
		return err
	}
	return serve.FinishAGUI(ctx, recs, in.Log, in.Events)
}
