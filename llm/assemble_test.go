package llm

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestAssemblerRebuildsEveryStreamedBlock(t *testing.T) {
	t.Parallel()
	want := &Response{
		ID: "msg_1", Model: "m",
		Message: Message{Role: RoleAssistant, Content: []Block{
			Thinking{Text: "hmm", Signature: "sig"},
			Text{Text: "Let me check."},
			ToolUse{ID: "call_1", Name: "weather", Input: json.RawMessage(`{"city":"Paris"}`)},
			ToolUse{ID: "call_2", Name: "time", Input: json.RawMessage(`{}`)},
			RedactedThinking{Data: "opaque"},
		}},
		FinishReason: FinishToolUse,
		Usage:        Usage{InputTokens: 10, OutputTokens: 5},
	}
	var a Assembler
	for _, ev := range Events(want) {
		if ev.Type == EventComplete {
			continue
		}
		if err := a.Add(ev); err != nil {
			t.Fatalf("Add(%v): %v", ev.Type, err)
		}
	}
	got, err := a.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
}

func TestAssemblerRules(t *testing.T) {
	t.Parallel()
	start := func(i int, b Block) Event { return Event{Type: EventBlockStart, Index: i, Block: b} }
	tests := []struct {
		name    string
		events  []Event
		finish  FinishReason
		wantErr bool
		want    []Block
	}{
		{"delta for a block never started is an error", []Event{{Type: EventTextDelta, Index: 0, Delta: "x"}}, "", true, nil},
		{"text delta into a tool block is an error", []Event{start(0, ToolUse{ID: "a", Name: "b"}), {Type: EventTextDelta, Index: 0, Delta: "x"}}, "", true, nil},
		{"block started twice is an error", []Event{start(0, Text{}), start(0, Text{})}, "", true, nil},
		{"tool input split over deltas is joined", []Event{start(0, ToolUse{ID: "a", Name: "b"}), {Type: EventToolInputDelta, Delta: `{"x"`}, {Type: EventToolInputDelta, Delta: `:1}`}}, "", false,
			[]Block{ToolUse{ID: "a", Name: "b", Input: json.RawMessage(`{"x":1}`)}}},
		{"tool with no input gets an empty object", []Event{start(0, ToolUse{ID: "a", Name: "b"})}, "", false,
			[]Block{ToolUse{ID: "a", Name: "b", Input: json.RawMessage(`{}`)}}},
		{"invalid tool JSON is kept as its text", []Event{start(0, ToolUse{ID: "a", Name: "b"}), {Type: EventToolInputDelta, Delta: `{"x":`}}, FinishToolUse, false,
			[]Block{ToolUse{ID: "a", Name: "b", Input: json.RawMessage(`"{\"x\":"`)}}},
		{"cut-off tool call is dropped when the length limit was hit", []Event{start(0, Text{}), {Type: EventTextDelta, Delta: "hi"}, start(1, ToolUse{ID: "a", Name: "b"}), {Type: EventToolInputDelta, Index: 1, Delta: `{"x":`}}, FinishLength, false,
			[]Block{Text{Text: "hi"}}},
		{"sparse indexes keep order", []Event{start(2, Text{}), {Type: EventTextDelta, Index: 2, Delta: "b"}, start(0, Text{}), {Type: EventTextDelta, Index: 0, Delta: "a"}}, "", false,
			[]Block{Text{Text: "a"}, Text{Text: "b"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a Assembler
			var err error
			for _, ev := range tc.events {
				if err = a.Add(ev); err != nil {
					break
				}
			}
			if err == nil {
				a.SetFinishReason(tc.finish)
				var r *Response
				r, err = a.Finish()
				if err == nil && !reflect.DeepEqual(r.Message.Content, tc.want) {
					t.Errorf("content = %#v, want %#v", r.Message.Content, tc.want)
				}
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("err = %v, wantErr %v", err, tc.wantErr)
			}
		})
	}
}

func TestCollect(t *testing.T) {
	t.Parallel()
	resp := &Response{Message: AssistantText("hi"), FinishReason: FinishStop}
	got, err := Collect(StreamOf(resp))
	if err != nil || got != resp {
		t.Fatalf("Collect = %v, %v", got, err)
	}
	_, err = Collect(func(yield func(Event, error) bool) { yield(Event{Type: EventMessageStart}, nil) })
	if !errors.Is(err, ErrIncompleteStream) || !errors.Is(err, ErrNetwork) {
		t.Fatalf("stream without completion: err = %v", err)
	}
}

func TestErrorsAreInspectable(t *testing.T) {
	t.Parallel()
	err := error(&Error{Kind: KindRateLimited, Provider: "openai", StatusCode: 429, Message: "slow down", RetryAfter: 2 * time.Second})
	wrapped := errors.Join(errors.New("context"), err)
	if !errors.Is(wrapped, ErrRateLimited) || errors.Is(wrapped, ErrAuth) {
		t.Error("errors.Is does not match the kind")
	}
	var e *Error
	if !errors.As(wrapped, &e) || e.StatusCode != 429 || e.Message != "slow down" {
		t.Errorf("errors.As = %+v", e)
	}
	if RetryAfterOf(wrapped) != 2*time.Second || !IsRetryable(wrapped) {
		t.Error("retry helpers")
	}
	c := Cancelled("x", context.Canceled)
	if !errors.Is(c, context.Canceled) || !errors.Is(c, ErrCancelled) || KindOf(context.DeadlineExceeded) != KindCancelled {
		t.Error("cancellation is not inspectable")
	}
	for _, k := range []ErrorKind{KindAuth, KindInvalidRequest, KindContextLength, KindCancelled} {
		if k.Retryable() {
			t.Errorf("%v must not be retryable", k)
		}
	}
}

func TestInputBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		info ModelInfo
		want int
	}{
		{ModelInfo{}, 0},
		{ModelInfo{ContextWindow: 128000, MaxOutputTokens: 16384}, 128000 - 16384 - 6400},
		{ModelInfo{ContextWindow: 8000, MaxOutputTokens: 8000}, 8000 - 2000 - 400},
		{ModelInfo{ContextWindow: 32000, ReservedOutput: 1000, SafetyMargin: 1000}, 30000},
	}
	for _, tc := range tests {
		if got := tc.info.InputBudget(); got != tc.want {
			t.Errorf("%+v: InputBudget = %d, want %d", tc.info, got, tc.want)
		}
	}
}

func TestToolUseMalformed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		text string
		bad  bool
	}{
		{``, "", false},
		{`{}`, "", false},
		{` {"a":1}`, "", false},
		{`"{\"path\":"`, `{"path":`, true},
		{`[1,2]`, `[1,2]`, true},
		{`7`, `7`, true},
	} {
		text, bad := ToolUse{Input: json.RawMessage(tc.in)}.Malformed()
		if text != tc.text || bad != tc.bad {
			t.Errorf("Malformed(%s) = %q, %v; want %q, %v", tc.in, text, bad, tc.text, tc.bad)
		}
	}
	tu := MalformedInput("c1", "read", `{"path":`)
	if text, bad := tu.Malformed(); !bad || text != `{"path":` {
		t.Fatalf("MalformedInput round trip: %q %v", text, bad)
	}
	// It survives the storage JSON.
	m := Message{Role: RoleAssistant, Content: []Block{tu}}
	data, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Message
	if err := back.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	if text, bad := back.ToolUses()[0].Malformed(); !bad || text != `{"path":` {
		t.Fatalf("after storage JSON: %q %v", text, bad)
	}
}

func TestCitationsAssembleAndReplay(t *testing.T) {
	t.Parallel()
	c1 := Citation{Kind: CitationURL, URL: "https://go.dev", Title: "Go", Start: 0, End: 5}
	c2 := Citation{Kind: CitationDocument, Document: 1, CitedText: "x", Unit: "char", From: 3, To: 9}
	var a Assembler
	for _, ev := range []Event{
		{Type: EventMessageStart, Response: &Response{ID: "r"}},
		{Type: EventBlockStart, Index: 0, Block: Text{}},
		{Type: EventTextDelta, Index: 0, Delta: "Hello"},
		{Type: EventCitation, Index: 0, Citation: &c1},
		{Type: EventCitation, Index: 0, Citation: &c2},
		{Type: EventBlockStop, Index: 0},
	} {
		if err := a.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := a.Finish()
	if err != nil {
		t.Fatal(err)
	}
	want := Text{Text: "Hello", Citations: []Citation{c1, c2}}
	if got := resp.Message.Content[0]; !reflect.DeepEqual(got, want) {
		t.Fatalf("assembled %+v, want %+v", got, want)
	}
	// StreamOf's events assemble to the same response.
	var b Assembler
	for _, ev := range Events(resp) {
		if err := b.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	again, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Message, resp.Message) {
		t.Fatalf("replayed %+v, want %+v", again.Message, resp.Message)
	}
	// A citation for a block that is not text is an error.
	var c Assembler
	c.Add(Event{Type: EventBlockStart, Index: 0, Block: ToolUse{ID: "t", Name: "n"}})
	if err := c.Add(Event{Type: EventCitation, Index: 0, Citation: &c1}); err == nil {
		t.Fatal("a citation on a tool call was accepted")
	}
	// Storage JSON keeps them.
	data, err := resp.Message.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var back Message
	if err := back.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, resp.Message) {
		t.Fatalf("storage round trip %+v, want %+v (%s)", back, resp.Message, data)
	}
}
