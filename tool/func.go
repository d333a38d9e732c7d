package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// FuncTool is a typed tool made by [Func] from a Go function.
type FuncTool[In, Out any] struct {
	name, desc string
	schema     *Schema
	fn         func(context.Context, In) (Out, error)
	approval   bool
	timeout    time.Duration
}

// Option configures a tool made by [Func].
type Option func(*options)

type options struct {
	approval bool
	timeout  time.Duration
	schema   *Schema
}

// WithApproval makes the tool ask for approval before each call (see
// [Approvable]).
func WithApproval() Option { return func(o *options) { o.approval = true } }

// WithTimeout limits each call of the tool to d; a call that runs longer
// gets a cancelled context and becomes an error result saying it timed out.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithSchema replaces the generated schema with s (which must still describe
// the JSON form of In).
func WithSchema(s *Schema) Option { return func(o *options) { o.schema = s } }

// Func makes a tool from fn. The parameter schema is generated from In (see
// [SchemaFor]). Each call validates its arguments against the schema and
// decodes them into an In before fn runs; arguments that fail become an
// *[ArgumentError] and fn is not called.
//
// The result is serialized once: a string or []byte Out is used as is, a
// json.RawMessage is used as its JSON text, anything else is encoded with
// encoding/json.
func Func[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...Option) (*FuncTool[In, Out], error) {
	if name == "" {
		return nil, fmt.Errorf("tool: empty name")
	}
	if fn == nil {
		return nil, fmt.Errorf("tool %q: nil function", name)
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := o.schema
	if s == nil {
		var err error
		if s, err = SchemaFor[In](); err != nil {
			return nil, fmt.Errorf("tool %q: %w", name, err)
		}
	}
	return &FuncTool[In, Out]{name: name, desc: description, schema: s, fn: fn, approval: o.approval, timeout: o.timeout}, nil
}

// MustFunc is like [Func] but panics on error. Use it for tools defined at
// package level, whose schema is known to be valid.
func MustFunc[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...Option) *FuncTool[In, Out] {
	t, err := Func(name, description, fn, opts...)
	if err != nil {
		panic(err)
	}
	return t
}

// Name returns the tool's name.
func (t *FuncTool[In, Out]) Name() string { return t.name }

// Description returns the tool's description.
func (t *FuncTool[In, Out]) Description() string { return t.desc }

// Parameters returns the JSON Schema of In.
func (t *FuncTool[In, Out]) Parameters() json.RawMessage { return t.schema.JSON() }

// NeedsApproval reports whether the tool was made WithApproval.
func (t *FuncTool[In, Out]) NeedsApproval() bool { return t.approval }

// Timeout returns the per-call limit set WithTimeout, or 0.
func (t *FuncTool[In, Out]) Timeout() time.Duration { return t.timeout }

// Invoke validates args, decodes them and runs the function. Its timeout,
// if any, applies here, so it holds however the tool is called.
func (t *FuncTool[In, Out]) Invoke(ctx context.Context, args json.RawMessage) (string, error) {
	if err := t.schema.Validate(args); err != nil {
		return "", &ArgumentError{Tool: t.name, Err: err}
	}
	var in In
	if len(bytes.TrimSpace(args)) > 0 {
		if err := json.Unmarshal(args, &in); err != nil {
			return "", &ArgumentError{Tool: t.name, Err: err}
		}
	}
	if t.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.timeout)
		defer cancel()
	}
	out, err := t.fn(ctx, in)
	if err != nil {
		return "", err
	}
	return serialize(out)
}

// serialize turns a tool's output into the text the model reads, once.
func serialize(out any) (string, error) {
	switch v := out.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	case json.RawMessage:
		return string(v), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", fmt.Errorf("encoding the result: %w", err)
	}
	return string(b), nil
}
