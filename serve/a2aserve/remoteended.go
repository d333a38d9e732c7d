package a2aserve

// Remote tasks whose run ended without writing their end: a durable
// runner's workflow terminated by an operator, timed out, or failed before
// its last write; or never started (the accepting process died before the
// hand-over) or forgotten (the runner's history of it purged). Nothing
// would ever end such a task, so a process that reads it unfinished,
// unchanged for a while, asks the runner (RemoteWatcher) whether its turn
// still runs, and stores it failed when it does not, then sends its push
// notifications.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/serve/internal/ratelimit"
	"github.com/agcore/agcore/session"
)

// RemoteWatcher is a Remote that can say whether a task's turn still
// runs. With one, a process that reads a remote task unfinished (tasks/get,
// a follower, a resubscription) whose status has not changed for
// remoteCheckAfter (5 seconds) asks it (at most once per remoteCheckAfter
// per task and process); a turn that ended without writing the task's end
// stores the task failed, the runner's reason in its status message, and
// the task's push notification configs are sent the failed task, as for
// any change of its state (claimed in the store first: sent once, by the
// process that stored it). A task the runner has no run for
// (ErrRemoteNotFound) ends so too once its status is older than 2 minutes
// (longer than a hand-over may take).
type RemoteWatcher interface {
	Remote
	// TaskEnded reports whether the turn of task of agent has ended, and
	// how, as the text to show. A turn the runner does not know has not
	// ended: the error then wraps ErrRemoteNotFound.
	TaskEnded(ctx context.Context, agent, task string) (ended bool, reason string, err error)
}

// ErrRemoteNotFound is wrapped by the error of RemoteWatcher.TaskEnded for
// a task whose turn the runner has no run for: never handed over (the
// accepting process died between storing the task and the hand-over), or
// forgotten (the runner's history of it purged).
var ErrRemoteNotFound = errors.New("a2aserve: the runner has no run for the task")

// remoteCheckAfter is how long a remote task shows no change before a
// process asks its RemoteWatcher whether the turn still runs, and the
// least time between two such questions about one task from one process.
var remoteCheckAfter = 5 * time.Second

const (
	// remoteLostAfter is how long a remote task's status must be unchanged
	// for a runner that has no run for it (ErrRemoteNotFound) to end it:
	// longer than a hand-over may take (StartTask is given 30 s).
	remoteLostAfter = 2 * time.Minute
	// remoteLostReason is the reason of a task the runner has no run for.
	remoteLostReason = "the durable runner has no workflow for the task"
)

// endedCheck asks a RemoteWatcher about the remote tasks of one agent,
// and notifies the configs of those it stores failed.
type endedCheck struct {
	watcher RemoteWatcher
	agent   string
	asked   ratelimit.Due // by task id; Every: remoteCheckAfter when made
	// pushes and sender, when not nil, send the push notifications of a
	// task stored failed.
	pushes *pushConfigs
	sender *pushSender
}

func newEndedCheck(w RemoteWatcher, agent string, pushes *pushConfigs, sender *pushSender) *endedCheck {
	return &endedCheck{watcher: w, agent: agent, asked: ratelimit.Due{Every: remoteCheckAfter}, pushes: pushes, sender: sender}
}

// due reports whether task id, unchanged since at, may be asked about
// now, and if so records that it is.
func (c *endedCheck) due(id a2a.TaskID, at *time.Time) bool {
	now := time.Now()
	if at != nil && now.Sub(*at) < c.asked.Every {
		return false
	}
	return c.asked.Due(string(id), now)
}

// ended asks whether the turn of remote task t, read from rec, ended: its
// reason when it did. A task the runner has no run for ended when it
// changed last more than remoteLostAfter ago.
func (c *endedCheck) ended(ctx context.Context, t *a2a.Task, rec session.Record) (string, bool) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ended, reason, err := c.watcher.TaskEnded(cctx, c.agent, string(t.ID))
	if errors.Is(err, ErrRemoteNotFound) {
		at := changedAt(t, rec)
		return remoteLostReason, !at.IsZero() && time.Since(at) > remoteLostAfter
	}
	if err != nil || !ended {
		return "", false
	}
	if reason == "" {
		reason = "the run of the task ended"
	}
	return reason, true
}

// changedAt returns when remote task t, read from rec, last changed: its
// status's timestamp, else when its record was written (its expiry less
// taskRetention: every write of a task's record sets that), else zero.
func changedAt(t *a2a.Task, rec session.Record) time.Time {
	if t.Status.Timestamp != nil && !t.Status.Timestamp.IsZero() {
		return *t.Status.Timestamp
	}
	if !rec.Expires.IsZero() {
		return rec.Expires.Add(-taskRetention)
	}
	return time.Time{}
}

// notify sends the push notifications of t, stored failed by this
// process, to its configs (read from the store), each claimed in recs
// first.
func (c *endedCheck) notify(ctx context.Context, recs session.Records, t *a2a.Task) {
	if c.pushes == nil {
		return
	}
	c.pushes.forget(t.ID)
	c.sender.notifyAll(ctx, c.pushes, recs, t)
}

// endedRemote checks the remote task t, read from rec: when its turn
// ended without its end, the task is stored failed (unless it changed
// meanwhile), its push notifications sent, and returned so; else t.
func (s *recordTasks) endedRemote(ctx context.Context, t *a2a.Task, tr taskRecord, rec session.Record) (*a2a.Task, session.Record) {
	c := s.ended
	if c == nil || !c.due(t.ID, t.Status.Timestamp) {
		return t, rec
	}
	reason, ended := c.ended(ctx, t, rec)
	if !ended {
		return t, rec
	}
	failed := copyTask(t)
	setStatus(failed, a2a.TaskStateFailed, agentText(failed, "The run of this task ended without its outcome: "+reason), nil)
	data, err := json.Marshal(failed)
	if err != nil {
		return t, rec
	}
	v, err := json.Marshal(taskRecord{Owner: tr.Owner, Task: data, Remote: true})
	if err != nil {
		return t, rec
	}
	rec.Value, rec.Expires = v, time.Now().Add(taskRetention)
	got, err := s.recs.UpdateRecord(ctx, tasksNamespace, rec) // only if the task did not change meanwhile
	if err != nil {
		return t, rec // it changed (the next read sees it), or the store failed
	}
	c.notify(ctx, s.recs, failed)
	return failed, got
}
