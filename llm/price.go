package llm

// Price is what a model costs, in USD per million tokens.
type Price struct {
	Input      float64 // uncached input
	Output     float64 // output, reasoning included
	CacheRead  float64 // input served from the prompt cache
	CacheWrite float64 // input written to the prompt cache
	// LongContext, when not nil, is the price of a call whose input
	// (cached tokens included) exceeds LongContextThreshold tokens.
	LongContext          *Price
	LongContextThreshold int
}

// Cost returns the price of one call's usage. Usage.InputTokens includes
// the cached and cache-creation tokens, so the uncached input is
// InputTokens − CachedInputTokens − CacheCreationTokens; each part has its
// own price.
func (p Price) Cost(u Usage) float64 {
	if p.LongContext != nil && u.InputTokens > p.LongContextThreshold {
		p = *p.LongContext
	}
	uncached := max(0, u.InputTokens-u.CachedInputTokens-u.CacheCreationTokens)
	return (float64(uncached)*p.Input +
		float64(u.CachedInputTokens)*p.CacheRead +
		float64(u.CacheCreationTokens)*p.CacheWrite +
		float64(u.OutputTokens)*p.Output) / 1e6
}

// Clone returns a deep copy of p (its long-context tier included), or nil
// when p is nil.
func (p *Price) Clone() *Price {
	if p == nil {
		return nil
	}
	c := *p
	c.LongContext = p.LongContext.Clone()
	return &c
}
