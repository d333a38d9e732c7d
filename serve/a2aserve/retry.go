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
// input-required result (a2a.ErrTaskNotCancelable). Both are retried
// briefly while the task's turn is not being followed and the task is not
// over, which is exactly that window.
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

func (h retrying) OnCancelTask(ctx context.Context, p *a2a.TaskIDParams) (*a2a.Task, error) {
	for start := time.Now(); ; {
		t, err := h.RequestHandler.OnCancelTask(ctx, p)
		if !errors.Is(err, eventqueue.ErrQueueClosed) && !errors.Is(err, a2a.ErrTaskNotCancelable) || p == nil {
			return t, err
		}
		if stored, gerr := h.store.Get(ctx, p.ID); gerr != nil || stored.Status.State.Terminal() || !h.again(ctx, p.ID, start) {
			return t, err
		}
	}
}
