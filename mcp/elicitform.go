package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agcore/agcore/tool"
	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's request for input (elicitation/create) asked of someone who
// decides a turn's tool calls (agcore serve's approvals, a durable run's
// pending decisions) is one more pending decision: a call of the tool
// [ElicitationTool] whose arguments are the server's name, its message and
// the requested schema ([ElicitationCall]). Denying it declines; approving
// it accepts with the answer the decision carries ([tool.Decision].Content)
// over the form's defaults ([FormContent], [ElicitResult]).

// ElicitationTool is the tool name a server's request for input has among
// a turn's pending decisions.
const ElicitationTool = "mcp_elicitation"

// elicitationArgs is the arguments of an ElicitationTool call.
type elicitationArgs struct {
	Server          string          `json:"server"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requested_schema,omitempty"`
}

// ElicitationCall returns req, made by the server named server, as the
// pending decision of tool [ElicitationTool] with call id id: its
// arguments are {"server", "message", "requested_schema"}.
func ElicitationCall(id, server string, req *sdk.ElicitParams) (tool.Call, error) {
	var schema json.RawMessage
	if req.RequestedSchema != nil {
		b, err := json.Marshal(req.RequestedSchema)
		if err != nil {
			return tool.Call{}, fmt.Errorf("mcp: the requested schema of server %q: %w", server, err)
		}
		schema = b
	}
	input, err := json.Marshal(elicitationArgs{Server: server, Message: req.Message, RequestedSchema: schema})
	if err != nil {
		return tool.Call{}, err
	}
	return tool.Call{ID: id, Name: ElicitationTool, Input: input}, nil
}

// ElicitationSchema returns the requested schema in the arguments of an
// [ElicitationTool] call (nil when the request has none, a form with no
// fields).
func ElicitationSchema(input json.RawMessage) (json.RawMessage, error) {
	var a elicitationArgs
	if err := json.Unmarshal(input, &a); err != nil {
		return nil, fmt.Errorf("mcp: the arguments of a request for input: %w", err)
	}
	if isNull(a.RequestedSchema) {
		return nil, nil
	}
	return a.RequestedSchema, nil
}

// ErrFormContent is matched (errors.Is) by [FormContent]'s error when the
// answer does not fit the requested schema; the error's text says how, in
// one line.
var ErrFormContent = errors.New("the answer does not match the requested schema")

// FormContent returns what an accepted request for input sends the
// server: content (a JSON object, or nil for none) with each property of
// schema it leaves out that has a default set to that default, checked
// against schema. An answer that is not an object, or that the schema
// refuses (a required field missing with no default, a wrong type, a value
// out of its enum), is an error matching [ErrFormContent] that names the
// field.
func FormContent(schema, content json.RawMessage) (map[string]any, error) {
	out := map[string]any{}
	if !isNull(content) {
		d := json.NewDecoder(bytes.NewReader(content))
		if err := d.Decode(&out); err != nil || out == nil {
			return nil, fmt.Errorf("%w: the content must be a JSON object", ErrFormContent)
		}
	}
	if isNull(schema) {
		return out, nil
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, fmt.Errorf("mcp: the requested schema: %w", err)
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := s.Properties[name]
		if _, given := out[name]; given || p == nil || isNull(p.Default) {
			continue
		}
		var v any
		if json.Unmarshal(p.Default, &v) == nil {
			out[name] = v
		}
	}
	// A missing required field is named here, in words a form's user
	// reads, before the validator's own text.
	var missing []string
	for _, name := range s.Required {
		if _, ok := out[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s required and has no default", ErrFormContent, fieldList(missing))
	}
	rs, err := s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: false})
	if err != nil {
		return nil, fmt.Errorf("mcp: the requested schema: %w", err)
	}
	if err := rs.Validate(out); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrFormContent, validationLine(err))
	}
	return out, nil
}

// CheckDecision checks d, about to decide a pending call of the tool
// toolName with arguments input, as an endpoint that takes decisions does
// before taking one: content answers only the approval of a request for
// input ([ElicitationTool]), and there the answer, over the form's
// defaults, must fit the requested schema ([FormContent]; approving
// without content a form whose required field has no default is refused
// too). Its error, in one line, matches [ErrFormContent].
func CheckDecision(toolName string, input json.RawMessage, d tool.Decision) error {
	given := !isNull(json.RawMessage(d.Content))
	switch {
	case toolName != ElicitationTool && given:
		return fmt.Errorf("%w: content answers an MCP server's request for input (tool %s); a call of tool %s takes none", ErrFormContent, ElicitationTool, toolName)
	case toolName != ElicitationTool:
		return nil
	case !d.Approved && given:
		return fmt.Errorf("%w: content goes with an approval; a denial declines the request for input", ErrFormContent)
	case !d.Approved:
		return nil
	}
	schema, err := ElicitationSchema(input)
	if err != nil {
		return err
	}
	_, err = FormContent(schema, json.RawMessage(d.Content))
	return err
}

// ElicitResult is the server's answer to req once the person asked has
// decided: declined when d denies, else accepted with [FormContent] of
// d.Content. A decision whose content does not fit (its decider should
// have checked it with FormContent) is answered as cancelled, with the
// error.
func ElicitResult(req *sdk.ElicitParams, d tool.Decision) (*sdk.ElicitResult, error) {
	if !d.Approved {
		return &sdk.ElicitResult{Action: "decline"}, nil
	}
	var schema json.RawMessage
	if req.RequestedSchema != nil {
		b, err := json.Marshal(req.RequestedSchema)
		if err != nil {
			return &sdk.ElicitResult{Action: "cancel"}, err
		}
		schema = b
	}
	content, err := FormContent(schema, json.RawMessage(d.Content))
	if err != nil {
		return &sdk.ElicitResult{Action: "cancel"}, err
	}
	return &sdk.ElicitResult{Action: "accept", Content: content}, nil
}

// AskApprover asks ap, as a pending decision of the call id id
// ([ElicitationCall]), what the server named server asks for, and answers
// with [ElicitResult] of the decision: what an [Elicitor] does for a turn
// whose calls someone decides (ctx is the tool call's, so the approver
// files the request under the call's turn). An approver's error (the turn
// ended) is answered as cancelled.
func AskApprover(ctx context.Context, ap tool.Approver, id, server string, req *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	call, err := ElicitationCall(id, server, req)
	if err != nil {
		return nil, err
	}
	d, err := ap.Approve(ctx, call)
	if err != nil {
		return &sdk.ElicitResult{Action: "cancel"}, nil
	}
	return ElicitResult(req, d)
}

var (
	fieldPrefix = regexp.MustCompile(`^validating /properties/([^/:]+): `)
	wholeRat    = regexp.MustCompile(`\b(-?\d+)/1\b`)
	wholeFloat  = regexp.MustCompile(`\b(-?\d+)\.0+\b`)
)

// validationLine is a validator's error in one line a form's user reads:
// the field named first, numbers as written.
func validationLine(err error) string {
	s := oneLine(err.Error())
	s = strings.TrimPrefix(s, "validating root: ")
	s = fieldPrefix.ReplaceAllString(s, `field "$1": `)
	s = wholeRat.ReplaceAllString(s, "$1")
	return wholeFloat.ReplaceAllString(s, "$1")
}

func isNull(b json.RawMessage) bool {
	b = bytes.TrimSpace(b)
	return len(b) == 0 || string(b) == "null"
}

func fieldList(names []string) string {
	if len(names) == 1 {
		return fmt.Sprintf("%q is", names[0])
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ") + " are"
}
