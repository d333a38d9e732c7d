package a2aserve

import (
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/session"
)

// TestChangedAt: a remote task's last change is its status's timestamp,
// else its record's write (its expiry less taskRetention), else unknown.
func TestChangedAt(t *testing.T) {
	at := time.Unix(1_000_000, 0)
	for _, c := range []struct {
		name    string
		stamp   *time.Time
		expires time.Time
		want    time.Time
	}{
		{"status timestamp", &at, at.Add(time.Hour), at},
		{"record written", nil, at.Add(taskRetention), at},
		{"zero timestamp: record written", &time.Time{}, at.Add(taskRetention), at},
		{"unknown", nil, time.Time{}, time.Time{}},
	} {
		task := &a2a.Task{Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: c.stamp}}
		if got := changedAt(task, session.Record{Expires: c.expires}); !got.Equal(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestEndedCheckDue: a task is asked about once unchanged for the
// interval, then at most once per interval.
func TestEndedCheckDue(t *testing.T) {
	c := newEndedCheck(nil, "helper", nil, nil)
	recent, old := time.Now(), time.Now().Add(-time.Minute)
	if c.due("t1", &recent) {
		t.Error("a task that just changed is due")
	}
	if !c.due("t1", &old) || c.due("t1", &old) {
		t.Error("an unchanged task: not due once, or due twice within the interval")
	}
	if !c.due("t2", nil) {
		t.Error("a task without a timestamp is not due")
	}
}
