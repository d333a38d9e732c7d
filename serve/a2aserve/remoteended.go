package a2aserve

// Remote tasks whose run ended without writing their end: a durable
// runner's workflow terminated by an operator, timed out, or failed before
// its last write. Nothing would ever end such a task, so a process that
// reads it unfinished, unchanged for a while, asks the runner
// (RemoteWatcher) whether its turn still runs, and stores it failed when
// it does not.

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/session"
)

// RemoteWatcher is a Remote that can say whether a task's turn still
// runs. With one, a process that reads a remote task unfinished (tasks/get,
// a follower, a resubscription) whose status has not changed for
// remoteCheckAfter asks it (at most once per remoteCheckAfter per task and
// process); a turn that ended without writing the task's end stores the
// task failed, the runner's reason in its status message. Nothing is
// notified of that change.
type RemoteWatcher interface {
	Remote
	// TaskEnded reports whether the turn of task of agent has ended, and
	// how, as the text to show. A turn the runner does not know has not
	// ended.
	TaskEnded(ctx context.Context, agent, task string) (ended bool, reason string, err error)
}

// remoteCheckAfter is how long a remote task shows no change before a
// process asks its RemoteWatcher whether the turn still runs, and the
// least time between two such questions about one task from one process.
var remoteCheckAfter = 5 * time.Second

// endedCheck asks a RemoteWatcher about the remote tasks of one agent.
type endedCheck struct {
	watcher RemoteWatcher
	agent   string

	mu   sync.Mutex
	last map[a2a.TaskID]time.Time
}

// due reports whether task id, unchanged since at, may be asked about
// now, and if so records that it is.
func (c *endedCheck) due(id a2a.TaskID, at *time.Time) bool {
	now := time.Now()
	if at != nil && now.Sub(*at) < remoteCheckAfter {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.last[id]; ok && now.Sub(t) < remoteCheckAfter {
		return false
	}
	if c.last == nil {
		c.last = map[a2a.TaskID]time.Time{}
	}
	for k, t := range c.last { // keep the map small
		if now.Sub(t) > time.Hour {
			delete(c.last, k)
		}
	}
	c.last[id] = now
	return true
}

// endedRemote checks the remote task t, read from rec: when its turn
// ended without its end, the task is stored failed (unless it changed
// meanwhile) and returned so; else t.
func (s *recordTasks) endedRemote(ctx context.Context, t *a2a.Task, tr taskRecord, rec session.Record) (*a2a.Task, session.Record) {
	c := s.ended
	if c == nil || !c.due(t.ID, t.Status.Timestamp) {
		return t, rec
	}
	ended, reason, err := c.watcher.TaskEnded(ctx, c.agent, string(t.ID))
	if err != nil || !ended {
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
	return failed, got
}
