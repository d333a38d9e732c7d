package usage

import "github.com/agcore/agcore/llm"

// CostOf prices u with info.Price. known is false when info has no price:
// the cost is then unknown, not zero.
func CostOf(info llm.ModelInfo, u llm.Usage) (usd float64, known bool) {
	if info.Price == nil {
		return 0, false
	}
	return info.Price.Cost(u), true
}
