package a2aserve

import (
	"context"
	"encoding/json"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/session"
)

// SetRemoteCheckAfter sets remoteCheckAfter for a test and returns the
// function that puts it back.
func SetRemoteCheckAfter(d time.Duration) func() {
	was := remoteCheckAfter
	remoteCheckAfter = d
	return func() { remoteCheckAfter = was }
}

// RemoteLostAfter is remoteLostAfter, for tests.
const RemoteLostAfter = remoteLostAfter

// AgeTask moves the status timestamp of task id of agent, stored in recs,
// back by d: as if it had not changed for d longer.
func AgeTask(ctx context.Context, recs session.Records, agent string, id a2a.TaskID, d time.Duration) error {
	s := &recordTasks{recs: recs, agent: agent}
	tr, rec, err := s.read(ctx, id)
	if err != nil {
		return err
	}
	var t a2a.Task
	if err := json.Unmarshal(tr.Task, &t); err != nil {
		return err
	}
	at := time.Now().Add(-d)
	if t.Status.Timestamp != nil {
		at = t.Status.Timestamp.Add(-d)
	}
	t.Status.Timestamp = &at
	if tr.Task, err = json.Marshal(&t); err != nil {
		return err
	}
	if rec.Value, err = json.Marshal(tr); err != nil {
		return err
	}
	_, err = recs.UpdateRecord(ctx, tasksNamespace, rec)
	return err
}
