package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schema is a resolved JSON Schema for a tool's arguments: its JSON text as
// sent to the model, and a validator.
type Schema struct {
	raw      json.RawMessage
	resolved *jsonschema.Resolved
}

// SchemaFor generates the schema of the arguments object In, which must be
// a struct (or a pointer to one). The rules are those of
// github.com/google/jsonschema-go:
//
//   - a field's JSON name comes from its json tag; json:"-" leaves it out;
//   - a field is required unless its json tag says omitempty or omitzero;
//   - the jsonschema tag is the field's description;
//   - unknown properties are rejected.
//
// agcore adds one tag: enum:"a,b,c" restricts a string, integer or number
// field (or the items of a slice of them) to the listed values.
func SchemaFor[In any]() (*Schema, error) {
	t := reflect.TypeFor[In]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("tool: arguments type %s is not a struct", t)
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		return nil, fmt.Errorf("tool: schema for %s: %w", t, err)
	}
	if err := addEnums(t, s); err != nil {
		return nil, err
	}
	return NewSchema(s)
}

// NewSchema resolves s for validation.
func NewSchema(s *jsonschema.Schema) (*Schema, error) {
	if s == nil {
		return nil, fmt.Errorf("tool: nil schema")
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("tool: encoding schema: %w", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("tool: resolving schema: %w", err)
	}
	return &Schema{raw: raw, resolved: r}, nil
}

// JSON returns the schema's JSON text. The caller must not change it.
func (s *Schema) JSON() json.RawMessage { return s.raw }

// Validate checks that args is a JSON object matching the schema. It
// returns the decoded object's problem in words the model can act on.
func (s *Schema) Validate(args json.RawMessage) error {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("arguments must be a JSON object, got %.100s", args)
	}
	if err := s.resolved.Validate(v); err != nil {
		return fmt.Errorf("does not match the schema: %s", strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return nil
}

// addEnums copies enum tags of struct type t into schema s, recursively
// through nested structs, pointers, slices and arrays.
func addEnums(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return addEnums(t.Elem(), s.Items)
	case reflect.Struct:
	default:
		return nil
	}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" && !strings.Contains(tag, ",") {
				continue
			}
			if n != "" {
				name = n
			}
		}
		ps := s.Properties[name]
		if ps == nil {
			continue
		}
		if tag, ok := f.Tag.Lookup("enum"); ok {
			target, et := ps, f.Type
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if (et.Kind() == reflect.Slice || et.Kind() == reflect.Array) && ps.Items != nil {
				target, et = ps.Items, et.Elem()
				for et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
			}
			vals, err := enumValues(et, tag)
			if err != nil {
				return fmt.Errorf("tool: enum tag on %s.%s: %w", t, f.Name, err)
			}
			target.Enum = vals
			continue
		}
		if err := addEnums(f.Type, ps); err != nil {
			return err
		}
	}
	return nil
}

func enumValues(t reflect.Type, tag string) ([]any, error) {
	parts := strings.Split(tag, ",")
	out := make([]any, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		switch t.Kind() {
		case reflect.String:
			out = append(out, p)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			n, err := strconv.ParseInt(p, 10, 64)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		case reflect.Float32, reflect.Float64:
			n, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return nil, err
			}
			out = append(out, n)
		default:
			return nil, fmt.Errorf("enum is not supported for %s", t)
		}
	}
	return out, nil
}
