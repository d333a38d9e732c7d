package providertest

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/agcore/agcore/llm"
)

// fatal records a Fatalf and ends the goroutine, as testing.T does.
type fatal struct {
	testing.TB
	msg string
}

func (f *fatal) Helper() {}
func (f *fatal) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fatal) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

// check runs CheckEvents on evs and returns its complaint, or "".
func check(t *testing.T, evs []llm.Event, failed error) string {
	f := &fatal{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		CheckEvents(f, evs, failed)
	}()
	<-done
	return f.msg
}

func TestCheckEvents(t *testing.T) {
	start := llm.Event{Type: llm.EventMessageStart, Response: &llm.Response{ID: "r"}}
	open := llm.Event{Type: llm.EventBlockStart, Index: 0, Block: llm.Text{}}
	delta := llm.Event{Type: llm.EventTextDelta, Index: 0, Delta: "hi"}
	stop := llm.Event{Type: llm.EventBlockStop, Index: 0, Block: llm.Text{Text: "hi"}}
	done := func(text string) llm.Event {
		return llm.Event{Type: llm.EventComplete, Response: &llm.Response{ID: "r", FinishReason: llm.FinishStop,
			Message: llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text{Text: text}}}}}
	}
	tests := []struct {
		name   string
		evs    []llm.Event
		failed error
		ok     bool
	}{
		{"a whole stream", []llm.Event{start, open, delta, stop, done("hi")}, nil, true},
		{"a failed stream ends without a completion", []llm.Event{start, open, delta}, llm.ErrNetwork, true},
		{"no message_start first", []llm.Event{open, delta, stop, done("hi")}, nil, false},
		{"a delta before its block", []llm.Event{start, delta, open, stop, done("hi")}, nil, false},
		{"a block started twice", []llm.Event{start, open, delta, stop, open, done("hi")}, nil, false},
		{"a block left open", []llm.Event{start, open, delta, done("hi")}, nil, false},
		{"a completion that is not what the deltas make", []llm.Event{start, open, delta, stop, done("ho")}, nil, false},
		{"no completion and no error", []llm.Event{start, open, delta, stop}, nil, false},
		{"an error after the completion", []llm.Event{start, open, delta, stop, done("hi")}, llm.ErrNetwork, false},
		{"a block_stop without its block", []llm.Event{start, open, delta, {Type: llm.EventBlockStop, Index: 0}, done("hi")}, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := check(t, tc.evs, tc.failed)
			if (msg == "") != tc.ok {
				t.Fatalf("CheckEvents said %q; want ok=%v", msg, tc.ok)
			}
		})
	}
}
