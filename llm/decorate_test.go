package llm_test

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/agcore/agcore/llm"
)

// counted answers with resp or err and counts its calls by kind.
type counted struct {
	resp              *llm.Response
	err               error
	generate, streams int
}

func (m *counted) Info() llm.ModelInfo { return llm.ModelInfo{Provider: "counted", Name: "m"} }

func (m *counted) Generate(context.Context, *llm.Request) (*llm.Response, error) {
	m.generate++
	return m.resp, m.err
}

func (m *counted) Stream(context.Context, *llm.Request) iter.Seq2[llm.Event, error] {
	m.streams++
	return func(yield func(llm.Event, error) bool) {
		if m.err != nil {
			yield(llm.Event{}, m.err)
			return
		}
		for _, ev := range llm.Events(m.resp) {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// TestDecorate: a decorator written once as a stream serves both calls;
// a blocking call stays blocking below it, sees Blocking, and returns
// the Response of the completion the decorator yields, or its error.
func TestDecorate(t *testing.T) {
	answer := &llm.Response{ID: "r1", FinishReason: llm.FinishStop, Message: llm.AssistantText("hi")}
	refused := errors.New("refused")
	tests := []struct {
		name     string
		inner    error // the model below fails
		refuse   bool  // the decorator refuses the answer
		blocking bool
		wantErr  error
	}{
		{"a blocking call goes to Generate below", nil, false, true, nil},
		{"a streaming call goes to Stream below", nil, false, false, nil},
		{"the model's error, blocking", llm.ErrServer, false, true, llm.ErrServer},
		{"the model's error, streaming", llm.ErrServer, false, false, llm.ErrServer},
		{"the decorator's refusal is the blocking call's error", nil, true, true, refused},
		{"the decorator's refusal ends the stream", nil, true, false, refused},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inner := &counted{resp: answer, err: tc.inner}
			var sawBlocking []bool
			m := llm.Decorate(inner, func(ctx context.Context, req *llm.Request, next llm.Next) iter.Seq2[llm.Event, error] {
				sawBlocking = append(sawBlocking, next.Blocking)
				return func(yield func(llm.Event, error) bool) {
					for ev, err := range next.Stream(ctx, req) {
						if err == nil && ev.Type == llm.EventComplete && tc.refuse {
							yield(llm.Event{}, refused)
							return
						}
						if !yield(ev, err) {
							return
						}
					}
				}
			})
			var resp *llm.Response
			var err error
			if tc.blocking {
				resp, err = m.Generate(context.Background(), &llm.Request{})
			} else {
				resp, err = llm.Collect(m.Stream(context.Background(), &llm.Request{}))
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (resp == answer) {
				t.Fatalf("got %v, %v; want the answer or %v", resp, err, tc.wantErr)
			}
			if tc.blocking && (inner.generate != 1 || inner.streams != 0) || !tc.blocking && (inner.generate != 0 || inner.streams != 1) {
				t.Fatalf("below: %d Generate and %d Stream calls", inner.generate, inner.streams)
			}
			if len(sawBlocking) != 1 || sawBlocking[0] != tc.blocking {
				t.Fatalf("the decorator saw Blocking %v", sawBlocking)
			}
			if m.Info() != inner.Info() {
				t.Fatalf("Info = %+v", m.Info())
			}
		})
	}
}
