package demo

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/agcore/agcore/llm"
)

// structured answers a request that asks for structured output, at once
// and without the plan: a json_schema response format gets a text answer,
// a tool choice naming a tool gets one call of it; either holds a value
// made from the schema (example). It reports false for any other request.
func structured(req *llm.Request) (*llm.Response, bool) {
	if tc := req.ToolChoice; tc.Mode == llm.ToolChoiceTool {
		for _, t := range req.Tools {
			if t.Name == tc.Name {
				ids := idMaker{n: countCalls(req.Messages)}
				return answer(ids.call(t.Name, exampleOf(t.ParametersOrEmpty()))), true
			}
		}
	}
	if f := req.ResponseFormat; f != nil && f.Type == "json_schema" && len(f.Schema) > 0 {
		b, _ := json.Marshal(exampleOf(f.Schema))
		return answer(llm.Text{Text: string(b)}), true
	}
	return nil, false
}

// exampleOf returns a value that validates against schema, made the same
// way each time: every property of an object (required or not); the
// const, or the first enum value; the first type of a list that is not
// null; the first alternative of anyOf/oneOf/allOf; arrays of minItems
// (at least one) items; numbers at their lower bound (1 when there is
// none), a multiple of multipleOf; true; strings "example <name>" (a
// sample of the usual formats: date-time, date, time, email, uri, uuid),
// padded to minLength and cut to maxLength. Local $refs ("#/$defs/X",
// "#/definitions/X") are followed; a pattern is not honoured.
func exampleOf(schema json.RawMessage) any {
	var root any
	if json.Unmarshal(schema, &root) != nil {
		return map[string]any{}
	}
	return example(root, root, "value", 0)
}

func example(s, root any, name string, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth > 12 {
		return nil
	}
	if ref, ok := m["$ref"].(string); ok {
		return example(resolve(root, ref), root, name, depth+1)
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		for _, v := range e {
			if v != nil {
				return v
			}
		}
		return e[0]
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := m[k].([]any); ok && len(alts) > 0 {
			for _, alt := range alts {
				if am, ok := alt.(map[string]any); !ok || am["type"] != "null" {
					return example(alt, root, name, depth+1)
				}
			}
			return nil
		}
	}
	typ := ""
	switch t := m["type"].(type) {
	case string:
		typ = t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				typ = s
				break
			}
		}
		if typ == "" && len(t) > 0 {
			typ = "null"
		}
	}
	if typ == "" {
		if _, ok := m["properties"]; ok {
			typ = "object"
		} else if _, ok := m["items"]; ok {
			typ = "array"
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		for k, p := range props {
			out[k] = example(p, root, k, depth+1)
		}
		return out
	case "array":
		n := 1
		if v, ok := m["minItems"].(float64); ok && int(v) > n {
			n = int(v)
		}
		if v, ok := m["maxItems"].(float64); ok && int(v) < n {
			n = int(v)
		}
		out := make([]any, n)
		for i := range out {
			out[i] = example(m["items"], root, name, depth+1)
		}
		return out
	case "integer", "number":
		return number(m, typ == "integer")
	case "boolean":
		return true
	case "null":
		return nil
	}
	return str(m, name)
}

// number is the lowest value the bounds allow, 1 without a lower bound.
func number(m map[string]any, integer bool) any {
	get := func(k string) (float64, bool) { v, ok := m[k].(float64); return v, ok }
	v := 1.0
	if lo, ok := get("minimum"); ok {
		v = lo
	}
	if lo, ok := get("exclusiveMinimum"); ok {
		v = lo + 1
	}
	if hi, ok := get("maximum"); ok && v > hi {
		v = hi
	}
	if hi, ok := get("exclusiveMaximum"); ok && v >= hi {
		v = hi - 1
	}
	if integer {
		v = math.Ceil(v)
	}
	if mult, ok := get("multipleOf"); ok && mult > 0 {
		v = math.Ceil(v/mult) * mult
	}
	if integer {
		return int64(v)
	}
	return v
}

func str(m map[string]any, name string) string {
	s := "example " + name
	switch m["format"] {
	case "date-time":
		s = "2025-01-01T00:00:00Z"
	case "date":
		s = "2025-01-01"
	case "time":
		s = "00:00:00Z"
	case "email":
		s = "someone@example.com"
	case "uri", "url":
		s = "https://example.com/"
	case "uuid":
		s = "00000000-0000-4000-8000-000000000000"
	}
	if v, ok := m["minLength"].(float64); ok && len([]rune(s)) < int(v) {
		s += strings.Repeat("x", int(v)-len([]rune(s)))
	}
	if v, ok := m["maxLength"].(float64); ok && len([]rune(s)) > int(v) {
		s = string([]rune(s)[:int(v)])
	}
	return s
}

// resolve follows a local reference ("#/$defs/Author").
func resolve(root any, ref string) any {
	path, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	v := root
	for _, k := range strings.Split(strings.Trim(path, "/"), "/") {
		if k == "" {
			continue
		}
		k = strings.ReplaceAll(strings.ReplaceAll(k, "~1", "/"), "~0", "~")
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}
