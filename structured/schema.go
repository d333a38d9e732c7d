package structured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agcore/agcore/tool"
)

// compiled is the schema of one answer type in the forms the modes send:
// as written (Anthropic, Gemini, compatible servers, the forced tool,
// prompted) and strict-compatible (OpenAI's strict json_schema), each with
// its validator. It is built once per type and schema and kept.
type compiled struct {
	name   string
	plain  form
	strict *form // nil when the schema cannot be made strict (a map, say)
}

// form is one schema text and the validator of exactly that text.
type form struct {
	raw      json.RawMessage
	resolved *jsonschema.Resolved
}

type cacheKey struct {
	t    reflect.Type
	name string
}

var cache sync.Map // cacheKey → *compiled

// compile returns the schema of the answer type t (made by gen), or the
// explicit schema, cached.
func compile(t reflect.Type, explicit json.RawMessage, name string, gen func() (*tool.Schema, error)) (*compiled, error) {
	// Schemas made from Go types are kept (there are as many as types);
	// an explicit one is compiled for its run (a server may make one per
	// request: keeping them would grow without bound).
	key := cacheKey{t: t, name: name}
	keep := len(bytes.TrimSpace(explicit)) == 0
	if keep {
		if c, ok := cache.Load(key); ok {
			return c.(*compiled), nil
		}
	}
	raw := explicit
	if len(bytes.TrimSpace(raw)) == 0 {
		st := t
		for st.Kind() == reflect.Pointer {
			st = st.Elem()
		}
		if name == "" {
			name = st.Name()
		}
		if st.Kind() != reflect.Struct {
			return nil, fmt.Errorf("structured: the answer type %s is not a struct: give Options.Schema (an object schema) to decode into it", t)
		}
		s, err := gen()
		if err != nil {
			return nil, fmt.Errorf("structured: %w", err)
		}
		raw = s.JSON()
	}
	if name == "" {
		name = "response"
	}
	c, err := compileRaw(raw, sanitizeName(name))
	if err != nil {
		return nil, err
	}
	if keep {
		cache.Store(key, c)
	}
	return c, nil
}

// compileRaw parses a schema text, checks its root is an object schema
// and builds both forms.
func compileRaw(raw json.RawMessage, name string) (*compiled, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("structured: the schema is not a JSON Schema: %w", err)
	}
	if !isObject(&s) {
		return nil, errors.New(`structured: the schema's root must be an object schema ("type": "object"): the native modes and the forced tool all answer with an object`)
	}
	if err := order(&s, raw); err != nil {
		return nil, fmt.Errorf("structured: the schema: %w", err)
	}
	plain, err := newForm(&s)
	if err != nil {
		return nil, err
	}
	c := &compiled{name: name, plain: plain}
	var ss jsonschema.Schema
	if err := json.Unmarshal(raw, &ss); err == nil && order(&ss, raw) == nil && strictify(&ss) {
		if f, err := newForm(&ss); err == nil {
			c.strict = &f
		}
	}
	return c, nil
}

func newForm(s *jsonschema.Schema) (form, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return form{}, fmt.Errorf("structured: encoding the schema: %w", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return form{}, fmt.Errorf("structured: resolving the schema: %w", err)
	}
	return form{raw: raw, resolved: r}, nil
}

func isObject(s *jsonschema.Schema) bool {
	return s.Type == "object" || (s.Type == "" && slices.Contains(s.Types, "object")) || (s.Type == "" && len(s.Types) == 0 && len(s.Properties) > 0)
}

// order sets PropertyOrder throughout s from the key order of raw, the
// text s was decoded from, so that the schema sent lists properties as
// written (models answer in that order; encoding/json would sort them).
func order(s *jsonschema.Schema, raw json.RawMessage) error {
	if s == nil {
		return nil
	}
	keys, vals, err := orderedObject(raw)
	if err != nil || keys == nil {
		return err // a boolean schema, say
	}
	one := func(sub *jsonschema.Schema, key string) error {
		if v, ok := vals[key]; ok && sub != nil {
			return order(sub, v)
		}
		return nil
	}
	many := func(subs []*jsonschema.Schema, key string) error {
		v, ok := vals[key]
		if !ok {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return nil
		}
		for i := range min(len(items), len(subs)) {
			if err := order(subs[i], items[i]); err != nil {
				return err
			}
		}
		return nil
	}
	named := func(m map[string]*jsonschema.Schema, key string, setOrder bool) error {
		v, ok := vals[key]
		if !ok {
			return nil
		}
		ks, vs, err := orderedObject(v)
		if err != nil {
			return err
		}
		if setOrder {
			s.PropertyOrder = ks
		}
		for _, k := range ks {
			if err := order(m[k], vs[k]); err != nil {
				return err
			}
		}
		return nil
	}
	if err := named(s.Properties, "properties", true); err != nil {
		return err
	}
	if err := named(s.Defs, "$defs", false); err != nil {
		return err
	}
	if err := named(s.Definitions, "definitions", false); err != nil {
		return err
	}
	for _, e := range []error{one(s.Items, "items"), one(s.AdditionalProperties, "additionalProperties"),
		many(s.PrefixItems, "prefixItems"), many(s.AnyOf, "anyOf"), many(s.OneOf, "oneOf"), many(s.AllOf, "allOf")} {
		if e != nil {
			return e
		}
	}
	return nil
}

// orderedObject decodes a JSON object's members in order; keys is nil
// when raw is not an object.
func orderedObject(raw json.RawMessage) (keys []string, vals map[string]json.RawMessage, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, nil
	}
	keys, vals = []string{}, map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := vals[k]; !dup {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	return keys, vals, nil
}

// strictify rewrites s in place into what OpenAI's strict mode accepts:
// every object lists all its properties as required, allows no others,
// and a property that was optional may be null. It reports false when s
// has an object that cannot be made strict (one with free-form
// additional properties: a Go map).
func strictify(s *jsonschema.Schema) bool {
	if s == nil {
		return true
	}
	ok := true
	for _, sub := range s.Properties {
		ok = strictify(sub) && ok
	}
	for _, m := range []map[string]*jsonschema.Schema{s.Defs, s.Definitions} {
		for _, sub := range m {
			ok = strictify(sub) && ok
		}
	}
	for _, l := range [][]*jsonschema.Schema{s.PrefixItems, s.AnyOf, s.OneOf, s.AllOf} {
		for _, sub := range l {
			ok = strictify(sub) && ok
		}
	}
	ok = strictify(s.Items) && ok
	if !isObject(s) {
		return ok
	}
	if ap := s.AdditionalProperties; ap != nil && !isFalse(ap) {
		return false
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	names := slices.Clone(s.PropertyOrder)
	var rest []string
	for k := range s.Properties {
		if !slices.Contains(names, k) {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	names = append(names, rest...)
	s.PropertyOrder = names
	// Required keeps its order, then the properties it did not list.
	var req []string
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; ok && !slices.Contains(req, r) {
			req = append(req, r)
		}
	}
	for _, k := range names {
		if !slices.Contains(req, k) {
			req = append(req, k)
		}
	}
	s.Required = req
	for _, k := range names {
		if !required[k] {
			nullable(s.Properties[k])
		}
	}
	s.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	return ok
}

func isFalse(s *jsonschema.Schema) bool {
	b, err := json.Marshal(s)
	return err == nil && string(b) == "false"
}

// nullable lets p also be null.
func nullable(p *jsonschema.Schema) {
	if p == nil {
		return
	}
	switch {
	case p.Type == "null" || slices.Contains(p.Types, "null"):
		return
	case p.Type != "" && p.Ref == "":
		p.Types, p.Type = []string{p.Type, "null"}, ""
	case len(p.Types) > 0 && p.Ref == "":
		p.Types = append(p.Types, "null")
	default:
		inner := *p
		*p = jsonschema.Schema{AnyOf: []*jsonschema.Schema{&inner, {Type: "null"}}}
		return
	}
	if p.Enum != nil && !slices.Contains(p.Enum, any(nil)) {
		p.Enum = append(p.Enum, nil)
	}
}

// sanitizeName makes name a valid OpenAI schema or tool name: letters,
// digits, '_' and '-', at most 64 characters.
func sanitizeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if len(out) > 64 {
		out = out[:64]
	}
	if out == "" {
		out = "response"
	}
	return out
}
