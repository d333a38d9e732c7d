package tool

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

func named(name string) Tool {
	return MustFunc(name, "tool "+name, func(context.Context, struct{}) (string, error) { return name, nil })
}

func names(ts []Tool) string {
	s := ""
	for _, t := range ts {
		s += t.Name() + " "
	}
	return s
}

func TestRegistryListsInRegistrationOrder(t *testing.T) {
	t.Parallel()
	var r Registry // the zero value works
	for _, n := range []string{"zeta", "alpha", "mid", "beta"} {
		if err := r.Register(named(n)); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 { // stable across calls
		if got := names(r.List()); got != "zeta alpha mid beta " {
			t.Fatalf("List = %q", got)
		}
	}
	defs := r.Definitions()
	if len(defs) != 4 || defs[0].Name != "zeta" || defs[3].Name != "beta" || defs[1].Name != "alpha" {
		t.Errorf("Definitions = %+v", defs)
	}
	if !r.Remove("alpha") || r.Remove("alpha") {
		t.Error("Remove reported wrongly")
	}
	if got := names(r.List()); got != "zeta mid beta " {
		t.Errorf("after Remove, List = %q", got)
	}
	if tl, ok := r.Get("beta"); !ok || tl.Name() != "beta" {
		t.Errorf("Get after Remove = %v, %v", tl, ok)
	}
}

func TestRegistryRejectsDuplicatesAtomically(t *testing.T) {
	t.Parallel()
	var r Registry
	if err := r.Register(named("a")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tools []Tool
	}{
		{"a name already registered", []Tool{named("b"), named("a")}},
		{"a name twice in one call", []Tool{named("c"), named("c")}},
		{"a nil tool", []Tool{nil}},
	}
	for _, tt := range tests {
		if err := r.Register(tt.tools...); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	if r.Len() != 1 {
		t.Errorf("a failed Register added tools: %q", names(r.List()))
	}
}

func TestRegistryIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	var r Registry
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			_ = r.Register(named(fmt.Sprint("t", i)))
			r.Get("t1")
			r.List()
			r.Definitions()
		})
	}
	wg.Wait()
	if r.Len() != 50 {
		t.Errorf("Len = %d", r.Len())
	}
}
