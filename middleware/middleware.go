package middleware

import "github.com/agcore/agcore/llm"

// Middleware decorates a model. It must return a model whose methods are
// safe for concurrent use if next's are.
type Middleware func(next llm.Model) llm.Model

// Chain wraps m in mws so that mws[0] is the outermost: a call goes through
// mws[0], then mws[1], ..., then m. Nil middlewares are skipped.
func Chain(m llm.Model, mws ...Middleware) llm.Model {
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			m = mws[i](m)
		}
	}
	return m
}
