package eval

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/replay"
)

// FormatVersion is the version of agcore's eval set format (the
// "agcore_eval" member of a set file).
const FormatVersion = 1

// SchemaJSON is the JSON Schema of agcore's eval set format (the file
// eval/schema/evalset.schema.json).
//
//go:embed schema/evalset.schema.json
var SchemaJSON []byte

// ReportSchemaJSON is the JSON Schema of a report's JSON form
// (Report.WriteJSON; eval/schema/report.schema.json).
//
//go:embed schema/report.schema.json
var ReportSchemaJSON []byte

// setFile is agcore's eval set file.
type setFile struct {
	Version     int                `json:"agcore_eval"`
	Schema      string             `json:"$schema,omitempty"`
	ID          string             `json:"id"`
	Name        string             `json:"name,omitempty"`
	Description string             `json:"description,omitempty"`
	Thresholds  map[string]float64 `json:"thresholds,omitempty"`
	Cases       []Case             `json:"cases"`
}

// Parse reads a set in agcore's format ([SchemaJSON]): unknown fields,
// a missing or newer version, and whatever Set.Check refuses are
// *FormatErrors naming the field. file names the set in errors and is the
// directory case records are relative to ("" for none: records are not
// read).
func Parse(data []byte, file string) (*Set, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f setFile
	if err := dec.Decode(&f); err != nil {
		return nil, decodeError(file, data, err)
	}
	if dec.More() {
		return nil, &FormatError{File: file, Problem: "more than one JSON value"}
	}
	switch {
	case f.Version == 0:
		return nil, &FormatError{File: file, Field: "agcore_eval", Problem: fmt.Sprintf("missing: an agcore eval set says \"agcore_eval\": %d", FormatVersion)}
	case f.Version > FormatVersion:
		return nil, &FormatError{File: file, Field: "agcore_eval", Problem: fmt.Sprintf("version %d is newer than this agcore reads (%d)", f.Version, FormatVersion)}
	}
	s := &Set{ID: f.ID, Name: f.Name, Description: f.Description, Thresholds: f.Thresholds, Cases: f.Cases, File: file}
	if s.ID == "" {
		s.ID = setID(file)
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	for i := range s.Cases {
		c := &s.Cases[i]
		c.Set = s.ID
		if c.RecordFile != "" && file != "" {
			p := c.RecordFile
			if !filepath.IsAbs(p) {
				p = filepath.Join(filepath.Dir(file), p)
			}
			rec, err := replay.Load(p)
			if err != nil {
				return nil, &FormatError{File: file, Field: fmt.Sprintf("cases[%d].record", i), Problem: err.Error()}
			}
			c.Record = rec
		}
	}
	return s, nil
}

// WriteSet writes s in agcore's format.
func WriteSet(w io.Writer, s *Set) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(setFile{Version: FormatVersion, ID: s.ID, Name: s.Name, Description: s.Description, Thresholds: s.Thresholds, Cases: s.Cases})
}

// setID is a set's id from its file name: the base name without
// .evalset.json, .test.json or .json.
func setID(file string) string {
	b := filepath.Base(file)
	for _, suf := range []string{".evalset.json", ".test.json", ".eval.json", ".json", ".jsonl"} {
		if strings.HasSuffix(b, suf) {
			return strings.TrimSuffix(b, suf)
		}
	}
	if b == "." || b == "" {
		return "set"
	}
	return b
}

// Load reads the set in the file at path, in whichever format it is:
// agcore's (an object with "agcore_eval"), an ADK eval set (an object with
// "eval_set_id" or "eval_cases"), or ADK's older test file (a list of
// queries). An ADK file is scored with criteria (nil: the
// test_config.json beside the file, as ADK finds it, else ADK's defaults).
func Load(path string, criteria *ADKConfig) (*Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &FormatError{File: path, Problem: err.Error()}
	}
	trimmed := bytes.TrimSpace(data)
	switch {
	case len(trimmed) == 0:
		return nil, &FormatError{File: path, Problem: "empty file"}
	case trimmed[0] == '[':
		return loadADK(path, data, criteria)
	case trimmed[0] != '{':
		return nil, decodeError(path, data, json.Unmarshal(data, new(any)))
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, decodeError(path, data, err)
	}
	if _, ok := probe["agcore_eval"]; ok {
		return Parse(data, path)
	}
	for _, k := range []string{"eval_set_id", "evalSetId", "eval_cases", "evalCases"} {
		if _, ok := probe[k]; ok {
			return loadADK(path, data, criteria)
		}
	}
	if _, ok := probe["cases"]; ok {
		return Parse(data, path) // says the version is missing
	}
	return nil, &FormatError{File: path, Problem: `not an eval set: neither agcore's ("agcore_eval") nor ADK's ("eval_set_id", "eval_cases", or a list of queries)`}
}

func loadADK(path string, data []byte, criteria *ADKConfig) (*Set, error) {
	if criteria == nil {
		cfgPath := filepath.Join(filepath.Dir(path), "test_config.json")
		if b, err := os.ReadFile(cfgPath); err == nil {
			if criteria, err = ParseADKConfig(b, cfgPath); err != nil {
				return nil, err
			}
		}
	}
	return ParseADK(data, path, criteria)
}

// decodeError makes a JSON decoding error a *FormatError: the line and
// column of a syntax error, the field of a type error or an unknown one.
func decodeError(file string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset-1) // Offset is just past the bad byte
		return &FormatError{File: file, Problem: fmt.Sprintf("line %d, column %d: %s", line, col, strings.TrimPrefix(se.Error(), "json: "))}
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "(top level)"
		}
		return &FormatError{File: file, Field: field, Problem: fmt.Sprintf("a JSON %s where a %s belongs", te.Value, typeName(te.Type.String()))}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &FormatError{File: file, Problem: "the JSON ends early"}
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if strings.HasPrefix(msg, "unknown field ") {
		return &FormatError{File: file, Field: strings.Trim(strings.TrimPrefix(msg, "unknown field "), `"`), Problem: "unknown field (see the format's JSON Schema: agcore eval --print-schema set)"}
	}
	return &FormatError{File: file, Problem: msg}
}

func typeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "list"
	case strings.HasPrefix(t, "map["), strings.HasPrefix(t, "eval."), strings.HasPrefix(t, "struct"):
		return "object"
	case strings.HasPrefix(t, "*"):
		return typeName(t[1:])
	case t == "float64" || strings.HasPrefix(t, "int"):
		return "number"
	}
	return t
}

func position(data []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return
}
