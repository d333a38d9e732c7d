package middleware

import "github.com/agcore/agcore/llm"

// WithInfo returns middleware whose model reports info from Info() and
// otherwise calls next. Placed innermost, right over the adapter, it makes
// a model-info override (a context window or prices the adapter does not
// know) reach every layer above, since each middleware's Info returns the
// next one's. agent.New places it itself when Config.ModelInfo is set.
func WithInfo(info llm.ModelInfo) Middleware {
	return func(next llm.Model) llm.Model { return &infoModel{Model: next, info: info} }
}

// infoModel passes both calls to the model it embeds.
type infoModel struct {
	llm.Model
	info llm.ModelInfo
}

// Info returns the override; an override that leaves Structured unset
// keeps the mode the model below reports (its API's, not a catalog fact).
func (m *infoModel) Info() llm.ModelInfo {
	if m.info.Structured == llm.StructuredNone {
		info := m.info
		info.Structured = m.Model.Info().Structured
		return info
	}
	return m.info
}
