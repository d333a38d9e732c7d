package eval

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agcore/agcore/llm"
	"github.com/agcore/agcore/replay"
)

// FromRecord makes a case of a replay record: one turn per recorded turn,
// its input the turn's user text, its expectation what the record says
// the turn did: the tool calls of its model calls, in order (EXACT, exact
// arguments), and its final answer as the ROUGE-1 reference. The record
// is attached (Case.Record), so the case runs offline; clear it to run the
// case live. id names the case ("" means the file's base name).
func FromRecord(rec *replay.Record, file, id string) (Case, error) {
	if id == "" {
		id = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(file), ".jsonl"), ".record")
	}
	c := Case{ID: id, Record: rec, RecordFile: file}
	if len(rec.Turns) == 0 {
		return c, &FormatError{File: file, Field: "turn", Problem: "the record marks no turn (made without Recorder.Turn): there is no input to run"}
	}
	for i, t := range rec.Turns {
		var input []string
		for _, m := range t.Input {
			if m.Role == llm.RoleUser {
				input = append(input, m.Text())
			}
		}
		if len(input) == 0 {
			return c, &FormatError{File: file, Field: fmt.Sprintf("turn %d", t.N), Problem: "no user text in the turn's input"}
		}
		if i == 0 && len(t.History) > 0 {
			c.Initial = &Initial{Messages: t.History}
		}
		calls := []Call{}
		answer := ""
		for _, call := range rec.Calls {
			if call.Turn != t.N || call.Response == nil {
				continue
			}
			for _, b := range call.Response.Message.Content {
				if tu, ok := b.(llm.ToolUse); ok {
					calls = append(calls, Call{Name: tu.Name, Args: tu.Input})
				}
			}
			answer = call.Response.Message.Text()
		}
		ref := answer
		c.Turns = append(c.Turns, Turn{Input: strings.Join(input, "\n\n"), Expect: Expect{
			Trajectory: &Trajectory{Calls: calls, Match: Exact, Args: ArgsExact},
			Answer:     &Answer{Reference: &ref},
		}})
	}
	return c, nil
}

// LoadRecord reads a record file and makes its case (FromRecord), in a
// set of its own named after the file.
func LoadRecord(path string) (*Set, error) {
	rec, err := replay.Load(path)
	if err != nil {
		return nil, &FormatError{File: path, Problem: strings.TrimPrefix(err.Error(), path+": ")}
	}
	c, err := FromRecord(rec, path, "")
	if err != nil {
		return nil, err
	}
	s := &Set{ID: c.ID, File: path, Cases: []Case{c}}
	s.Cases[0].Set = s.ID
	return s, s.Check()
}
