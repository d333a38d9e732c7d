package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/serve/host"
	"github.com/agcore/agcore/session"
	"github.com/agcore/agcore/session/memstore"
)

func as(principal string) context.Context {
	return host.WithPrincipal(context.Background(), principal)
}

func turn(id string) session.Turn {
	return session.Turn{ID: id, Messages: []llm.Message{llm.UserText("hi"), llm.AssistantText("hello")}}
}

func TestOwnerAndSessionName(t *testing.T) {
	for _, tt := range []struct{ principal, owner, name string }{
		{"", "", "conv"},
		{host.LocalPrincipal, "", "conv"},
		{"alice", "alice", "alice.conv"},
	} {
		if got := host.Owner(as(tt.principal)); got != tt.owner {
			t.Errorf("Owner(%q) = %q, want %q", tt.principal, got, tt.owner)
		}
		if got := host.SessionName(as(tt.principal), "conv"); got != tt.name {
			t.Errorf("SessionName(%q) = %q, want %q", tt.principal, got, tt.name)
		}
	}
}

// TestSessions: a principal's view holds its own sessions, and the
// sessions an older server stored in its namespace with no owner; never
// another's, nor the single user's outside its namespace.
func TestSessions(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	for id, owner := range map[string]string{"a1": "alice", "b1": "bob", "alice.old": "", "solo": ""} {
		tr := turn("t-" + id)
		tr.Owner = owner
		if err := st.Append(ctx, id, tr); err != nil {
			t.Fatal(err)
		}
	}
	alice := host.Sessions(as("alice"), st)
	for _, id := range []string{"a1", "alice.old"} {
		if _, err := alice.Load(ctx, id); err != nil {
			t.Errorf("alice loads %s: %v", id, err)
		}
		if _, err := alice.LoadView(ctx, id); err != nil {
			t.Errorf("alice loads the view of %s: %v", id, err)
		}
		if err := alice.Append(ctx, id, turn("t2-"+id)); err != nil {
			t.Errorf("alice continues %s: %v", id, err)
		}
	}
	for _, id := range []string{"b1", "solo"} {
		if _, err := alice.Load(ctx, id); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("alice loads %s: %v", id, err)
		}
		if err := alice.Append(ctx, id, turn("t3-"+id)); !errors.Is(err, session.ErrOwner) {
			t.Errorf("alice appends to %s: %v", id, err)
		}
		if err := alice.Delete(ctx, id); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("alice deletes %s: %v", id, err)
		}
	}
	page, err := alice.List(ctx, session.ListOptions{AnyOwner: true})
	if err != nil || len(page.Sessions) != 1 || page.Sessions[0].ID != "a1" {
		t.Errorf("alice lists %+v, %v", page.Sessions, err)
	}
	if s, err := st.Load(ctx, "alice.old"); err != nil || s.Turns != 2 || s.Owner != "" {
		t.Errorf("the older session after alice's turn: %+v, %v", s, err)
	}
	if _, err := host.Sessions(as("bob"), st).Load(ctx, "alice.old"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("bob loads alice's older session: %v", err)
	}
	if _, err := host.Sessions(as(host.LocalPrincipal), st).Load(ctx, "a1"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the single user loads alice's session: %v", err)
	}
	if err := alice.Delete(ctx, "alice.old"); err != nil {
		t.Errorf("alice deletes her older session: %v", err)
	}
	if host.Sessions(as("alice"), nil) != nil {
		t.Error("Sessions(nil) is not nil")
	}
}
