package a2aserve

import (
	"context"
	"errors"
	"iter"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
)

// retrying works around a window of a2a-go v0.3.3: an execution that ended
// waiting for input (input-required) is forgotten by the SDK a moment after
// its client has the final event. A client that answers or cancels at once
// can land in that window: its message is refused ("task execution is
// already in progress") and its cancellation goes to the ending execution,
// failing to write to it (eventqueue.ErrQueueClosed) or resolving to its
// input-required result (a2a.ErrTaskNotCancelable). A message is retried
// briefly while the task's turn is not being followed, which is exactly
// that window; a cancellation waits for the SDK to let go of the
// execution (OnCancelTask).
type retrying struct {
	a2asrv.RequestHandler
	exec  *executor
	store tasks
}

const (
	retryEvery = 5 * time.Millisecond
	retryFor   = 2 * time.Second
)

// inProgress reports the SDK's refusal of a message to a task whose
// execution it still holds. The error value is in an internal package of
// the SDK, so it is recognised by its text.
func inProgress(err error) bool {
	return err != nil && strings.Contains(err.Error(), "task execution is already in progress")
}

// again waits before the next attempt; false when it should stop.
func (h retrying) again(ctx context.Context, id a2a.TaskID, start time.Time) bool {
	if id == "" || h.exec.followed(id) || time.Since(start) > retryFor {
		return false
	}
	t := time.NewTimer(retryEvery)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (h retrying) OnSendMessage(ctx context.Context, p *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	for start := time.Now(); ; {
		res, err := h.RequestHandler.OnSendMessage(ctx, p)
		if !inProgress(err) || p.Message == nil || !h.again(ctx, p.Message.TaskID, start) {
			return res, err
		}
	}
}

func (h retrying) OnSendMessageStream(ctx context.Context, p *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		for start := time.Now(); ; {
			first, retry := true, false
			for ev, err := range h.RequestHandler.OnSendMessageStream(ctx, p) {
				if first && inProgress(err) && p.Message != nil && h.again(ctx, p.Message.TaskID, start) {
					retry = true
					break
				}
				first = false
				if !yield(ev, err) {
					return
				}
			}
			if !retry {
				return
			}
		}
	}
}

// OnCancelTask cancels through the SDK once it holds no execution of the
// task that has already ended.
//
// The SDK's Cancel sends the cancellation into the execution it holds
// for the task, if any, and answers with that execution's result. An
// execution whose Execute returned (it parked the task input-required)
// is still held for a moment after its client has the final event, so a
// cancellation sent right after input-required would reach it: its
// events are over (the write of the canceled state fails,
// eventqueue.ErrQueueClosed) or its result is input-required
// (a2a.ErrTaskNotCancelable). Meanwhile our Cancel has cancelled the
// turn, whose end stores the task canceled. So, unless an Execute of
// the task is in progress (a live exchange, which the cancellation must
// reach), the SDK is first left to let go of the execution (settle).
// A cancellation that reaches an execution in the moment it parks (the
// same two errors) settles and is sent again: the turn is cancelled by
// then, and the task ends canceled.
func (h retrying) OnCancelTask(ctx context.Context, p *a2a.TaskIDParams) (*a2a.Task, error) {
	if p == nil {
		return h.RequestHandler.OnCancelTask(ctx, p)
	}
	for attempt := 1; ; attempt++ {
		if attempt > 1 || !h.exec.inExecute(p.ID) {
			h.settle(ctx, p.ID)
		}
		t, err := h.RequestHandler.OnCancelTask(ctx, p)
		if attempt == cancelAttempts || !errors.Is(err, eventqueue.ErrQueueClosed) && !errors.Is(err, a2a.ErrTaskNotCancelable) {
			return t, err
		}
		// Not cancelable because it is over (completed, failed,
		// rejected) is the answer.
		if stored, gerr := h.store.Get(ctx, p.ID); gerr != nil || stored.Status.State.Terminal() && stored.Status.State != a2a.TaskStateCanceled {
			return t, err
		}
	}
}

// cancelAttempts bounds the attempts of one tasks/cancel: after the
// first reached an ending execution, the SDK holds none (unless messages
// keep starting new ones).
const cancelAttempts = 3

// settle waits until the SDK lets go of the execution it holds for task
// id, if any, or the next Execute of the task begins (a new exchange,
// not one ending), or ctx ends. The SDK's own resubscription to an
// execution ends exactly then: its events end when the SDK destroys the
// execution's queue, and then it waits for the execution's result,
// which the SDK gives once it has forgotten the execution. Without an
// execution it answers "task not found" at once.
func (h retrying) settle(ctx context.Context, id a2a.TaskID) {
	begun, unwatch := h.exec.watch(id)
	defer unwatch()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-begun:
			cancel()
		case <-ctx.Done():
		}
	}()
	for range h.RequestHandler.OnResubscribeToTask(ctx, &a2a.TaskIDParams{ID: id}) {
	}
}
