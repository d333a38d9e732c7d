package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agcore/agcore/agent"
	"github.com/agcore/agcore/llmtest"
	"github.com/agcore/agcore/serve/host"
)

func TestNewSet(t *testing.T) {
	a, err := agent.New(llmtest.New(), agent.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		agents []host.Agent
		want   string // error substring; "" for success
	}{
		{"none", nil, "no agents"},
		{"unnamed", []host.Agent{{Agent: a}}, "has no name"},
		{"no agent", []host.Agent{{Name: "x"}}, "has no *agent.Agent"},
		{"duplicate", []host.Agent{{Name: "x", Agent: a}, {Name: "x", Agent: a}}, `two agents are named "x"`},
		{"two", []host.Agent{{Name: "x", Agent: a}, {Name: "y", Agent: a}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := host.NewSet(tt.agents...)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Default().Name != "x" || len(s.All()) != 2 {
				t.Fatalf("default %q, %d agents", s.Default().Name, len(s.All()))
			}
			if y, ok := s.Get("y"); !ok || y.Name != "y" {
				t.Fatalf("Get(y) = %+v, %v", y, ok)
			}
			if _, ok := s.Get("z"); ok {
				t.Fatal("Get(z) found an agent")
			}
		})
	}
	if _, err := host.NewSet(); !errors.Is(err, host.ErrNoAgents) {
		t.Fatalf("NewSet() = %v", err)
	}
}

func TestPrincipal(t *testing.T) {
	if _, ok := host.PrincipalFrom(context.Background()); ok {
		t.Fatal("a bare context has a principal")
	}
	if p, ok := host.PrincipalFrom(host.WithPrincipal(context.Background(), "ci")); !ok || p != "ci" {
		t.Fatalf("principal = %q, %v", p, ok)
	}
}

func TestStop(t *testing.T) {
	if host.Stop(context.Background()) != nil {
		t.Fatal("a context without WithStop has a stop channel")
	}
	ch := make(chan struct{})
	ctx := host.WithStop(context.Background(), ch)
	select {
	case <-host.Stop(ctx):
		t.Fatal("stopped before the channel closed")
	default:
	}
	close(ch)
	select {
	case <-host.Stop(context.WithoutCancel(ctx)): // kept by a detached context
	default:
		t.Fatal("not stopped after the channel closed")
	}
}
