package agtemporal

import (
	"errors"

	"go.temporal.io/sdk/workflow"
)

// SessionInput starts a session workflow.
type SessionInput struct {
	// Turn holds the settings of every turn (Model, Instructions, Tools,
	// limits, timeouts); its SessionID names the session, and its TurnID
	// and Messages are ignored.
	Turn TurnInput
	// TurnsPerRun is how many turns one run of the workflow serves before
	// it continues as new (0: 100); it also continues as new whenever the
	// server suggests it (a long history).
	TurnsPerRun int
	// Served counts the turns served by earlier runs.
	Served int
}

// SessionWorkflow is a long-lived workflow per session that serializes
// its turns: each [TurnRequest] sent by the [TurnUpdate] update runs as a
// child [TurnWorkflow] (workflow id TurnWorkflowID, so approvals address
// the turn directly) once the previous turn has ended, and the update
// returns its result. The workflow continues as new after TurnsPerRun
// turns or when the server suggests it, once no update is in flight.
func SessionWorkflow(ctx workflow.Context, in SessionInput) error {
	if in.Turn.SessionID == "" {
		return errors.New("agtemporal: SessionInput.Turn.SessionID is empty")
	}
	perRun := in.TurnsPerRun
	if perRun <= 0 {
		perRun = 100
	}
	served, busy, draining := 0, false, false
	err := workflow.SetUpdateHandlerWithOptions(ctx, TurnUpdate,
		func(ctx workflow.Context, req TurnRequest) (*TurnResult, error) {
			if err := workflow.Await(ctx, func() bool { return !busy }); err != nil {
				return nil, err
			}
			busy = true
			defer func() { busy = false; served++ }()
			tin := in.Turn
			tin.TurnID, tin.Messages = req.TurnID, req.Messages
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
				WorkflowID: TurnWorkflowID(tin.SessionID, req.TurnID),
			})
			// Turns started before version 2 of the turn workflow run the
			// frozen TurnWorkflowV1; later ones the agent's own loop.
			name := TurnWorkflowName
			if workflow.GetVersion(ctx, "agcore.turn-workflow", workflow.DefaultVersion, 2) == workflow.DefaultVersion {
				name = TurnWorkflowV1Name
			}
			var res TurnResult
			if err := workflow.ExecuteChildWorkflow(cctx, name, tin).Get(ctx, &res); err != nil {
				return nil, err
			}
			return &res, nil
		},
		workflow.UpdateHandlerOptions{Validator: func(_ workflow.Context, req TurnRequest) error {
			if draining {
				return errors.New("agtemporal: the session workflow is continuing as new; send the turn again")
			}
			probe := TurnInput{TurnID: req.TurnID, Messages: req.Messages}
			return validateInput(&probe)
		}})
	if err != nil {
		return err
	}
	if err := workflow.Await(ctx, func() bool {
		return served >= perRun || workflow.GetInfo(ctx).GetContinueAsNewSuggested()
	}); err != nil {
		return err
	}
	draining = true
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	in.Served += served
	return workflow.NewContinueAsNewError(ctx, SessionWorkflowName, in)
}
