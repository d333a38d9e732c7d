package tool

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/agcore/agcore/llm"
)

type fuzzArgs struct {
	Path  string   `json:"path"`
	Mode  string   `json:"mode,omitempty" enum:"read,write"`
	Count int      `json:"count,omitempty" enum:"1,2,3"`
	Tags  []string `json:"tags,omitempty" enum:"a,b"`
	Opt   *struct {
		Deep bool `json:"deep"`
	} `json:"opt,omitempty"`
}

// FuzzToolArguments feeds arbitrary argument bytes to a typed tool and to
// the invoker: nothing panics, every call gets exactly one result tied to
// its id, and the function never sees arguments its schema forbids (the
// validator and the decoder agree).
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{
		`{"path":"a.txt"}`, `{"path":"a","mode":"read","count":2,"tags":["a","b"],"opt":{"deep":true}}`,
		`{"path":"a","mode":"delete"}`, `{"PATH":"a"}`, `{"path":"a","Mode":"delete"}`, `{"path":"a","mode":"read","mode":"x"}`,
		`{"path":1}`, `{"path":"a","count":2.0}`, `{"path":"a","count":1e0}`, `[]`, `null`, ``, `{`, `{"path":"\ud800"}`,
	} {
		f.Add("files", []byte(s))
	}
	var got fuzzArgs
	called := false
	ft := MustFunc("files", "fuzz", func(_ context.Context, in fuzzArgs) (string, error) {
		got, called = in, true
		return "ok", nil
	})
	reg := &Registry{}
	if err := reg.Register(ft); err != nil {
		f.Fatal(err)
	}
	inv := &Invoker{Concurrency: 1}
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		called = false
		out, err := ft.Invoke(context.Background(), args)
		if err != nil {
			var ae *ArgumentError
			if !errors.As(err, &ae) {
				t.Fatalf("the function cannot fail, yet Invoke says %v", err)
			}
			if called {
				t.Fatal("the function ran on rejected arguments")
			}
		} else {
			if !called || out != "ok" {
				t.Fatalf("accepted arguments, but the function did not run (%q)", out)
			}
			checkFuzzArgs(t, args, got)
		}

		msgs, err := inv.Invoke(context.Background(), reg.Get, []llm.ToolUse{{ID: "call-1", Name: name, Input: args}})
		if err != nil {
			t.Fatalf("a batch failed without a fatal error or cancellation: %v", err)
		}
		if len(msgs) != 1 || msgs[0].Role != llm.RoleTool || msgs[0].ToolCallID != "call-1" {
			t.Fatalf("results %+v, want one tied to call-1", msgs)
		}
	})
}

// checkFuzzArgs checks that what the function got is allowed by the schema.
func checkFuzzArgs(t *testing.T, args []byte, in fuzzArgs) {
	t.Helper()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		t.Fatalf("accepted arguments %q are not a JSON object", args)
	}
	if _, ok := obj["path"]; !ok {
		t.Fatalf("accepted arguments %q lack the required path", args)
	}
	if !slices.Contains([]string{"", "read", "write"}, in.Mode) {
		t.Fatalf("the function got mode %q from %q", in.Mode, args)
	}
	if !slices.Contains([]int{0, 1, 2, 3}, in.Count) {
		t.Fatalf("the function got count %d from %q", in.Count, args)
	}
	for _, tag := range in.Tags {
		if tag != "a" && tag != "b" {
			t.Fatalf("the function got tag %q from %q", tag, args)
		}
	}
}
