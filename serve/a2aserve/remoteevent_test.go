package a2aserve

import (
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// TestRemoteEvent: a follower of a remote task gets the growth of the
// streamed answer alone as an appending artifact-update event, and the
// task itself for any other change.
func TestRemoteEvent(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	later := at.Add(time.Second)
	task := func(state a2a.TaskState, ts time.Time, history int, answer ...string) *a2a.Task {
		t := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: state, Timestamp: &ts}}
		for range history {
			t.History = append(t.History, &a2a.Message{ID: "m", Role: a2a.MessageRoleUser})
		}
		if len(answer) > 0 {
			parts := a2a.ContentParts{}
			for _, s := range answer {
				parts = append(parts, a2a.TextPart{Text: s})
			}
			t.Artifacts = []*a2a.Artifact{{ID: "a1", Name: "answer", Parts: parts}}
		}
		return t
	}
	working := a2a.TaskStateWorking
	for _, tc := range []struct {
		name      string
		prev, cur *a2a.Task
		delta     string // "" : the task itself
	}{
		{"first", nil, task(working, at, 1), ""},
		{"the answer begins", task(working, at, 1), task(working, at, 1, "Hel"), ""},
		{"the answer grows", task(working, at, 1, "Hel"), task(working, at, 1, "Hello"), "lo"},
		{"grown, the parts appended so far", task(working, at, 1, "Hel", "lo"), task(working, at, 1, "Hello there"), " there"},
		{"a tool call's status", task(working, at, 1, "Hel"), task(working, later, 2, "Hello"), ""},
		{"completed", task(working, at, 1, "Hel"), task(a2a.TaskStateCompleted, at, 1, "Hello"), ""},
		{"replaced", task(working, at, 1, "Hello"), task(working, at, 1, "Bye"), ""},
		{"unchanged text", task(working, at, 1, "Hello"), task(working, at, 1, "Hello"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := remoteEvent(tc.prev, tc.cur)
			if tc.delta == "" {
				if ev != a2a.Event(tc.cur) {
					t.Fatalf("got %#v, want the task", ev)
				}
				return
			}
			up, ok := ev.(*a2a.TaskArtifactUpdateEvent)
			if !ok || !up.Append || up.Artifact.ID != "a1" || up.TaskID != "t1" || up.ContextID != "c1" || len(up.Artifact.Parts) != 1 ||
				up.Artifact.Parts[0].(a2a.TextPart).Text != tc.delta {
				t.Fatalf("got %#v, want the delta %q", ev, tc.delta)
			}
		})
	}
}
