package middleware

import (
	"context"
	"iter"

	"github.com/agcore/agcore/llm"
)

// WithInfo returns middleware whose model reports info from Info() and
// otherwise calls next. Placed innermost, right over the adapter, it makes
// a model-info override (a context window or prices the adapter does not
// know) reach every layer above, since each middleware's Info returns the
// next one's. agent.New places it itself when Config.ModelInfo is set.
func WithInfo(info llm.ModelInfo) Middleware {
	return func(next llm.Model) llm.Model { return &infoModel{next: next, info: info} }
}

type infoModel struct {
	next llm.Model
	info llm.ModelInfo
}

// Info returns the override; an override that leaves Structured unset
// keeps the mode the model below reports (its API's, not a catalog fact).
func (m *infoModel) Info() llm.ModelInfo {
	if m.info.Structured == llm.StructuredNone {
		info := m.info
		info.Structured = m.next.Info().Structured
		return info
	}
	return m.info
}

func (m *infoModel) Generate(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return m.next.Generate(ctx, req)
}

func (m *infoModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return m.next.Stream(ctx, req)
}
