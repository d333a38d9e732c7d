package a2aserve

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
)

func TestTaskStoreEvictsOldestFinished(t *testing.T) {
	s := newTaskStore(3)
	ctx := host.WithPrincipal(context.Background(), "alice")
	save := func(id string, state a2a.TaskState) {
		t.Helper()
		if err := s.Save(ctx, &a2a.Task{ID: a2a.TaskID(id), ContextID: "c", Status: a2a.TaskStatus{State: state}}); err != nil {
			t.Fatal(err)
		}
	}
	save("t1", a2a.TaskStateInputRequired) // waiting: never evicted
	save("t2", a2a.TaskStateCompleted)
	save("t3", a2a.TaskStateCompleted)
	save("t4", a2a.TaskStateWorking) // over max: t2, the oldest finished, goes
	for id, want := range map[string]bool{"t1": true, "t2": false, "t3": true, "t4": true} {
		_, err := s.Get(ctx, a2a.TaskID(id))
		if (err == nil) != want {
			t.Fatalf("Get(%s) = %v, want kept %v", id, err, want)
		}
		if err != nil && !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("Get(%s) = %v", id, err)
		}
	}
	// The owner is the principal of the first save; a task got from the
	// store is the caller's to change.
	if err := s.Save(host.WithPrincipal(ctx, "bob"), &a2a.Task{ID: "t1", ContextID: "c"}); err != nil {
		t.Fatal(err)
	}
	if o, ok := s.owner(t.Context(), "t1"); !ok || o != "alice" {
		t.Fatalf("owner = %q, %v", o, ok)
	}
	got, _ := s.Get(ctx, "t3")
	got.Status.State = a2a.TaskStateFailed
	if again, _ := s.Get(ctx, "t3"); again.Status.State != a2a.TaskStateCompleted {
		t.Fatal("a change to a got task reached the store")
	}
	if err := s.Save(ctx, &a2a.Task{ID: "x"}); err == nil {
		t.Fatal("a task without a context id was saved")
	}
}

func TestSessionID(t *testing.T) {
	for _, id := range []string{"ctx-1", "019ad1e2-7c3b-7e39-a0d4-33a7c1f0e5b1", "has space", "../etc", "", "é"} {
		got := SessionID(id)
		if err := session.ValidateID(got); err != nil {
			t.Fatalf("SessionID(%q) = %q: %v", id, got, err)
		}
		if session.ValidateID(id) == nil && got != id {
			t.Fatalf("SessionID(%q) = %q, want the id itself", id, got)
		}
		if got != SessionID(id) {
			t.Fatal("not deterministic")
		}
	}
	if SessionID("a b") == SessionID("a  b") {
		t.Fatal("two context ids share a session")
	}
}

func TestParseDecisions(t *testing.T) {
	tests := []struct {
		parts []a2a.Part
		want  []decision
	}{
		{[]a2a.Part{a2a.TextPart{Text: "  Approve."}}, []decision{{approved: true}}},
		{[]a2a.Part{a2a.TextPart{Text: "deny - not today"}}, []decision{{reason: "not today"}}},
		{[]a2a.Part{a2a.TextPart{Text: "No: too risky"}}, []decision{{reason: "too risky"}}},
		{[]a2a.Part{a2a.TextPart{Text: "maybe later"}}, nil},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"approval_id": "r/c", "approved": false, "reason": "r"}}}, []decision{{id: "r/c", reason: "r"}}},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"approved": "yes"}}}, nil},
	}
	for _, tt := range tests {
		got, problem := parseDecisions(&a2a.Message{Parts: tt.parts})
		if fmt.Sprint(got) != fmt.Sprint(tt.want) || (len(got) == 0) != (problem != "") {
			t.Errorf("parseDecisions(%v) = %+v, %q; want %+v", tt.parts, got, problem, tt.want)
		}
	}
}
